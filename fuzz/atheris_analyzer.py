"""Coverage-guided fuzzing of the analyzer on raw bytes, with atheris
(libFuzzer for Python; `pip install 'shellgate[atheris]'`).

The grammar fuzzer (`shellgate fuzz`) writes bash; this harness lets
libFuzzer's coverage feedback find the byte strings no grammar thought of —
invalid UTF-8, stray NULs, half-open quotes at every depth. Each input is
analyzed with tree-sitter and with the legacy splitter; the harness fails on
an exception, on an answer slower than the time budget, on a nondeterministic
answer, or on an allow the legacy splitter gives and tree-sitter does not.

    python -m fuzz.atheris_analyzer -max_total_time=600 -timeout=30 corpus/

(any libFuzzer flag; a crash leaves its input as ``crash-…`` to replay with
``python -m fuzz.atheris_analyzer crash-…``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from analyzers import Verdict, analyze_bash

from .properties import HOME, PROJECT, time_budget


class HarnessFailure(AssertionError):
    """The analyzer broke a property on this input."""


def check_one(data: bytes) -> None:
    """One input: raises :class:`HarnessFailure` (or the analyzer's own
    exception) when a property breaks."""
    text = data.decode("utf-8", "surrogateescape")
    verdicts = {}
    for ts in (True, False):
        start = time.perf_counter()
        first = analyze_bash(text, PROJECT, home=HOME, use_tree_sitter=ts)
        took = time.perf_counter() - start
        if took > time_budget(text):
            raise HarnessFailure(f"analysis took {took:.1f} s ({len(text)} characters)")
        if ts and first.to_dict() != analyze_bash(text, PROJECT, home=HOME).to_dict():
            raise HarnessFailure("two analyses of the same input differ")
        verdicts[ts] = first.verdict
    if verdicts[False] is Verdict.ALLOW and verdicts[True] is not Verdict.ALLOW:
        raise HarnessFailure("the legacy splitter allows what tree-sitter does not")


def main(argv: Sequence[str] | None = None) -> None:
    try:
        import atheris  # noqa: PLC0415 (an optional extra)
    except ImportError:
        sys.exit("the atheris harness needs atheris: pip install 'shellgate[atheris]'")
    # the analyzer is already imported (this module needs it): its own
    # functions get libFuzzer's coverage feedback. Not every function
    # loaded (atheris.instrument_all): the fuzz package's imports
    # (hypothesis, rich…) made that take a minute and a half before the
    # first input, and their coverage guides nothing here.
    for func in _analyzer_functions():
        atheris.instrument_func(func)
    atheris.Setup(list(argv if argv is not None else sys.argv), check_one)
    atheris.Fuzz()


def _analyzer_functions() -> list[object]:
    import gc  # noqa: PLC0415
    import types  # noqa: PLC0415

    return [obj for obj in gc.get_objects()
            if isinstance(obj, types.FunctionType)
            and (obj.__module__ or "").startswith(("analyzers", "regexes"))]


if __name__ == "__main__":
    main()
