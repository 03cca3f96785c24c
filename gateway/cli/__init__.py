"""The ``shellgate`` command line: the parser (:mod:`.parser`), and one
module per verb.

Exit status: 0 when the command did its job (for ``check``: any analyzed
command, whatever the verdict), 2 for usage errors (one line on stderr).
``main`` imports only the module of the verb that runs (a cold start of
``shellgate run`` never loads the analyzer, nor ``check`` the sandbox), and
a hook call not even the parser.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words == ["hook"]:
        # a Claude Code hook call: the guard answers before anything heavy
        # is imported, even the parser (see cli/hook_guard.py)
        from .hook_guard import run  # noqa: PLC0415

        return run()
    import importlib  # noqa: PLC0415

    from ..errors import UsageError  # noqa: PLC0415
    from .fastpath import fast_parse  # noqa: PLC0415

    try:
        args: argparse.Namespace | SimpleNamespace | None = fast_parse(words)
        if args is None:
            from .parser import build_parser  # noqa: PLC0415

            args = build_parser(words).parse_args(argv)
        verb = importlib.import_module(f"{__name__}.{args.verb_module}")
        result: int = verb.main(args)
        return result
    except UsageError as exc:
        print(f"shellgate: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # Reader went away (`shellgate check --jsonl ... | head`): not our error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: one line, never a traceback for the user
        print(f"shellgate: internal error: {type(exc).__name__}: "
              f"{' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return 1
