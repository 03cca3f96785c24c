"""The ``shellgate`` command line.

Exit status: 0 when the command did its job (for ``check``: any analyzed
command, whatever the verdict), 2 for usage errors (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import IO, NoReturn

from analyzers import AnalyzerError, BashAnalysis, analyze_bash

from .errors import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (and exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="shellgate", description="A hardened gateway between an AI agent and the machine."
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    sub.required = True

    check = sub.add_parser("check", help="analyze a bash command and print the verdict")
    check.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="COMMAND",
        help="the command; several words are joined with spaces, options "
        "after the first word belong to it; '-' reads it from stdin",
    )
    check.add_argument(
        "--cwd",
        default=None,
        help="working directory the command would run in (default: the current directory)",
    )
    check.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="extra directory reads may touch (repeatable)",
    )
    mode = check.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="print one JSON object")
    mode.add_argument(
        "--jsonl",
        action="store_true",
        help='read JSON lines {"command": ..., "cwd"?: ...} on stdin, write one result per line',
    )
    check.set_defaults(func=_cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        result: int = args.func(args)
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


def _abs_dir(value: str | None) -> str:
    return os.path.abspath(value) if value else os.getcwd()


def _home() -> str:
    return os.path.expanduser("~")


def _cmd_check(args: argparse.Namespace) -> int:
    cwd = _abs_dir(args.cwd)
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
    analysis = analyze_bash(command, cwd, extra_read_dirs=extra, home=_home())
    if args.json:
        sys.stdout.write(json.dumps(analysis.to_dict()) + "\n")
    else:
        # rich costs ~40 ms to import: only the readable report pays for it.
        from rich.console import Console  # noqa: PLC0415

        from .report import render_analysis  # noqa: PLC0415

        render_analysis(analysis, Console(highlight=False))
    return 0


def _check_jsonl(stdin: IO[bytes], out: IO[str], cwd: str, extra: tuple[str, ...]) -> int:
    """One result object per input line, same order; a bad line yields an
    ``error`` object and the stream goes on."""
    home = _home()
    for number, raw in enumerate(stdin, 1):
        line = raw.decode("utf-8", "surrogateescape").strip()
        if not line:
            continue
        out.write(json.dumps(_check_line(line, number, cwd, extra, home)) + "\n")
        out.flush()
    return 0


def _check_line(
    line: str, number: int, cwd: str, extra: tuple[str, ...], home: str
) -> dict[str, object]:
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
        analysis: BashAnalysis = analyze_bash(
            item["command"], line_cwd, extra_read_dirs=extra, home=home
        )
    except AnalyzerError as exc:
        return {"line": number, "error": str(exc)}
    except Exception as exc:
        return {"line": number, "decision": "ask", "error": f"internal error: {exc!r}"[:300]}
    return analysis.to_dict()
