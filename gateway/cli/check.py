"""``shellgate check``: analyze a bash command and print the verdict."""

from __future__ import annotations

import os
import sys

from analyzers import AnalyzerError, BashAnalysis, Results

from ..errors import UsageError
from ..workspace import analyze_in_workspace
from .common import abs_dir, home, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import json
    from collections.abc import Iterator
    from typing import IO


def main(args: argparse.Namespace) -> int:

    cwd = abs_dir(args.cwd)
    extra = tuple(os.path.abspath(d) for d in args.add_dir)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if args.jsonl:
        if args.command:
            raise UsageError("--jsonl reads commands from stdin; do not pass COMMAND")
        return _check_jsonl(sys.stdin.buffer, sys.stdout, cwd, extra)
    if not args.command:
        raise UsageError("check needs a COMMAND (or --jsonl)")
    command = " ".join(args.command)
    if command == "-":
        command = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    try:
        analysis = analyze_in_workspace(command, cwd, extra_dirs=extra, home=home())
    except Exception as exc:
        message = f"internal error: {one_line(exc)}"
        if args.json:
            sys.stdout.write(_dumps({"decision": "ask", "error": message}) + "\n")
        else:
            print(f"shellgate: ASK (fail closed): {message}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(_dumps(analysis.to_dict()) + "\n")
    elif not sys.stdout.isatty():
        # rich costs ~40 ms to import: a pipe or a file gets plain lines
        from ..report_text import render_text  # noqa: PLC0415

        render_text(analysis, sys.stdout)
    else:
        from rich.console import Console  # noqa: PLC0415

        from ..report import render_analysis  # noqa: PLC0415

        render_analysis(analysis, Console(highlight=False))
    return 0


def _dumps(value: object) -> str:
    return _encoder().encode(value)


def _check_jsonl(stdin: IO[bytes], out: IO[str], cwd: str, extra: tuple[str, ...]) -> int:
    """One result object per input line, same order; a bad line yields an
    ``error`` object and the stream goes on. What has come in is answered,
    and the answers flushed, before the next read (which may wait on the
    writer): a line at a time, a write of one's answer, for an agent; a
    write per buffer of lines, not per line, for a batch."""
    home_dir = home()
    lines = _Lines()
    number = 0
    for batch in _line_batches(stdin):
        for raw in batch:
            number += 1
            line = raw.decode("utf-8", "surrogateescape").strip()
            if not line:
                continue
            result = _check_line(line, number, cwd, extra, home_dir)
            out.write(lines.of(result) if isinstance(result, BashAnalysis)
                      else _dumps(result) + "\n")
        out.flush()
    return 0


def _line_batches(stdin: IO[bytes]) -> Iterator[list[bytes]]:
    """The complete lines each read brings (one read of what is there, at
    most 64 KB, never waiting for more), the last unended one at the end.
    A long line's parts are joined once, when its end comes."""
    read = getattr(stdin, "read1", None) or stdin.read
    parts: list[bytes] = []
    while chunk := read(1 << 16):
        parts.append(chunk)
        if b"\n" not in chunk:
            continue
        batch = b"".join(parts).split(b"\n")
        rest = batch.pop()
        parts = [rest] if rest else []
        yield batch
    if parts:
        yield [b"".join(parts)]


class _Lines:
    """The JSON line of each analysis, written once: the analyzer hands back
    the same value for the same command and facts (an agent's stream
    repeats its commands), and its line is a fifth of a line's time. Keyed
    by identity, holding the value, so an id is never reused while kept;
    as many as the analyzer keeps, within ``budget`` characters in all (the
    oldest go first)."""

    def __init__(self, budget: int = 8 << 20) -> None:
        self.kept = Results(budget=budget, entries=_KEPT_LINES)

    def of(self, analysis: BashAnalysis) -> str:
        kept: tuple[BashAnalysis, str] | None = self.kept.get(id(analysis))
        if kept is not None and kept[0] is analysis:
            return kept[1]
        line = _dumps(analysis.to_dict()) + "\n"
        self.kept.put(id(analysis), (analysis, line), len(line))
        return line


#: lines kept at most: as many analyses as the analyzer keeps
#: (analyzers/bash/analysis.py, _RESULTS)
_KEPT_LINES = 4096


def _encoder() -> json.JSONEncoder:
    """json.dumps's own encoder, less its check for cycles (what is written
    is a tree of dicts and lists): the same text, a tenth sooner. Made where
    JSON is first written: the plain verdict of a cold check does not pay
    json's import (~1.5 ms)."""
    global _ENCODER  # noqa: PLW0603 - made at the first use, not at start
    if _ENCODER is None:
        import json  # noqa: PLC0415

        _ENCODER = json.JSONEncoder(check_circular=False)
    return _ENCODER


_ENCODER: json.JSONEncoder | None = None


def _check_line(
    line: str,
    number: int,
    cwd: str,
    extra: tuple[str, ...],
    home: str,
) -> dict[str, object] | BashAnalysis:
    import json  # noqa: PLC0415 - loaded once, by the first line

    try:
        item = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return {"line": number, "error": f"invalid JSON: {str(exc)[:200]}"}
    if not isinstance(item, dict) or not isinstance(item.get("command"), str):
        return {"line": number, "error": 'expected an object with a string "command"'}
    line_cwd = item.get("cwd", cwd)
    if not isinstance(line_cwd, str) or not line_cwd.startswith("/"):
        return {"line": number, "error": '"cwd" must be an absolute path'}
    try:
        return analyze_in_workspace(item["command"], line_cwd, extra_dirs=extra, home=home)
    except AnalyzerError as exc:
        return {"line": number, "error": str(exc)}
    except Exception as exc:
        return {"line": number, "decision": "ask", "error": f"internal error: {exc!r}"[:300]}
