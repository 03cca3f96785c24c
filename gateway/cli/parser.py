"""The ``shellgate`` argument parser: every verb and its options."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ..errors import UsageError

__all__ = ["add_permission_args", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (and exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse asks for a formatter at every add_argument, and without a
        # width it imports shutil (and bz2, lzma) for the terminal's size:
        # ~3 ms of every cold `shellgate check`. The same width, measured here.
        return self.formatter_class(prog=self.prog, width=_help_width())  # type: ignore[call-arg]


def _help_width() -> int:
    """``shutil.get_terminal_size().columns - 2``, as argparse would use."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns - 2


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` whose first word is a verb, only that
    verb's (``--help`` and a mistake get every verb)."""
    parser = _Parser(
        prog="shellgate", description="A hardened gateway between an AI agent and the machine."
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    sub.required = True
    verb = argv[0] if argv else None
    for name, add in _VERBS.items():
        if verb not in _VERBS or name == verb:
            add(sub)
    return parser


def _add_check(sub: argparse._SubParsersAction[_Parser]) -> None:
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
    check.set_defaults(verb_module="check")


def _add_run(sub: argparse._SubParsersAction[_Parser]) -> None:
    run = sub.add_parser("run", help="run a command inside the sandbox")
    run.add_argument("--cwd", default=None, help="workspace (default: the current directory)")
    run.add_argument(
        "--profile",
        default=None,
        metavar="NAME|PATH",
        help="read-only, workspace-write (default), networked, or a TOML file",
    )
    run.add_argument(
        "--allow-write",
        action="append",
        default=[],
        metavar="PATH",
        help="another writable path (repeatable)",
    )
    run.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        metavar="DOMAIN",
        help="allow HTTP(S) to DOMAIN through the proxy (repeatable; *.x.com for subdomains)",
    )
    run.add_argument(
        "--git-read-only",
        action="store_true",
        help="make every .git in the writable paths wholly read-only (no commits; "
        "profile key filesystem.git = \"read-only\")",
    )
    run.add_argument(
        "--settings",
        default=None,
        metavar="FILE",
        help='a settings.json whose "sandbox" key is merged on the profile',
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit (default: the profile's)",
    )
    limits = run.add_argument_group(
        "limits", "sizes as 512M, 2G or bytes; each also a profile key (limits.*) and a "
        "sandbox settings key (settings can only lower them)")
    limits.add_argument(
        "--memory", metavar="SIZE",
        help="memory of the whole process tree (default: auto = half of RAM; NN%% of RAM; off)")
    limits.add_argument("--tmp-size", metavar="SIZE", help="size of the private /tmp (default 2G)")
    limits.add_argument("--shm-size", metavar="SIZE", help="size of /dev/shm (default 256M)")
    limits.add_argument("--run-size", metavar="SIZE", help="size of /run (default 16M)")
    limits.add_argument(
        "--max-processes", type=int, metavar="N",
        help="processes at once; the tree is killed at N (default 1024)")
    run.add_argument(
        "argv", nargs=argparse.REMAINDER, metavar="-- ARGV", help="the command and its arguments"
    )
    run.set_defaults(verb_module="run")


def _add_tool(sub: argparse._SubParsersAction[_Parser]) -> None:
    tool = sub.add_parser("tool", help="run tool calls through the whole pipeline")
    tool.add_argument("name", metavar="NAME", nargs="?", default=None,
                      help="the tool (Bash, Read, Edit, Write, Glob, Grep, WebFetch, …)")
    tool.add_argument("--input", default=None, metavar="JSON",
                      help="the tool's input as a JSON object ('-' reads it from stdin)")
    tool.add_argument("--batch", default=None, metavar="FILE",
                      help="calls one after another through one session, a JSON object a "
                      "line: {\"name\": …, \"input\": {…}} ('-' reads stdin)")
    tool.add_argument("--cwd", default=None,
                      help="the session's working directory and workspace (default: the "
                      "current directory)")
    tool.add_argument("--add-dir", action="append", default=[], metavar="DIR",
                      help="another directory the session may work in (repeatable)")
    tool.add_argument("--profile", default=None, metavar="NAME|PATH",
                      help="the sandbox profile for commands (default workspace-write)")
    tool.add_argument("--json", action="store_true",
                      help="print the raw tool_result as one JSON line")
    add_permission_args(tool)
    tool.set_defaults(verb_module="tool")


def _add_audit(sub: argparse._SubParsersAction[_Parser]) -> None:
    audit = sub.add_parser(
        "audit", help="show, summarize or verify the audit log",
        description="shellgate audit [summary|verify] [FILE|DIR ...]: a table of decisions "
        "(default), counts (summary), or a check of the hash chain (verify). Without "
        "FILE|DIR: the log in use ($SHELLGATE_AUDIT_LOG, else "
        "$XDG_STATE_HOME/shellgate/audit/).")
    audit.add_argument("args", nargs="*", metavar="[summary|verify] FILE|DIR",
                       help="an action, then log files or directories of daily files")
    audit.add_argument("--decision", choices=("allow", "ask", "deny"),
                       help="only decisions of this kind")
    audit.add_argument("--tool", metavar="NAME", help="only calls of this tool")
    audit.add_argument("--since", metavar="WHEN",
                       help="only events at or after WHEN (ISO date or time, or 30m, 2h, 7d ago)")
    audit.add_argument("--session", metavar="ID", help="only this session")
    audit.add_argument("--rule", metavar="RULE", help="only decisions made by this rule")
    audit.add_argument("--json", action="store_true", help="print JSON lines / one JSON object")
    audit.add_argument("--expect-head", metavar="HASH",
                       help="verify: the chain must still hold this recorded head hash")
    audit.add_argument("--no-head", action="store_true",
                       help="verify: check the chain alone, not that the log ends at the head "
                       "recorded in the state directory (a log copied or rotated elsewhere)")
    audit.set_defaults(verb_module="audit")


def _add_hook(sub: argparse._SubParsersAction[_Parser]) -> None:
    hook = sub.add_parser(
        "hook", help="be a Claude Code PreToolUse hook (reads its JSON on stdin)",
        description="shellgate hook: answer one Claude Code PreToolUse call on stdin; "
        "shellgate hook install|uninstall [--project|--user]: add it to (or remove it from) "
        ".claude/settings.json")
    hook.add_argument("action", nargs="?", default=None, metavar="install|uninstall")
    where = hook.add_mutually_exclusive_group()
    where.add_argument("--project", action="store_true",
                       help="the project's .claude/settings.json (the default)")
    where.add_argument("--user", action="store_true", help="~/.claude/settings.json")
    hook.set_defaults(verb_module="hook")


def _add_trust(sub: argparse._SubParsersAction[_Parser]) -> None:
    trust = sub.add_parser(
        "trust", help="let a workspace run the hooks its own repository's settings name")
    trust.add_argument("dir", nargs="?", default=None, metavar="DIR",
                       help="the workspace (default: the current directory)")
    trust.add_argument("--remove", action="store_true", help="trust it no longer")
    trust.add_argument("--list", action="store_true", help="print the trusted directories")
    trust.set_defaults(verb_module="trust")


def _add_doctor(sub: argparse._SubParsersAction[_Parser]) -> None:
    doctor = sub.add_parser("doctor", help="check that the sandbox can work on this machine")
    doctor.add_argument("--json", action="store_true", help="print the probes as JSON")
    doctor.set_defaults(verb_module="doctor")


def _add_fuzz(sub: argparse._SubParsersAction[_Parser]) -> None:
    fuzz = sub.add_parser(
        "fuzz", help="fuzz the bash analyzer: grammar-generated commands against its properties")
    fuzz.add_argument("--seconds", type=float, metavar="N",
                      help="run this long (default 60 unless --examples is given)")
    fuzz.add_argument("--examples", type=int, metavar="N",
                      help="stop after this many examples (over all workers)")
    fuzz.add_argument("--seed", type=int, metavar="S", help="the run's seed (default: random)")
    fuzz.add_argument("--oracle", action="store_true",
                      help="run what the analyzer allows in a throwaway sandbox and watch "
                      "what it does (needs bubblewrap and strace)")
    fuzz.add_argument("--workers", type=int, metavar="N",
                      help="processes in parallel (default: every core)")
    fuzz.add_argument("--mode", choices=("ci", "deep"), default="ci",
                      help="ci: small, fast inputs (default); deep: long and deep inputs, "
                      "bigger rounds, longer shrinking")
    fuzz.add_argument("--database", metavar="DIR|redis://HOST:PORT",
                      help="hypothesis's example database, shared by a fleet "
                      "(default: $XDG_CACHE_HOME/shellgate/fuzz)")
    fuzz.add_argument("--findings", metavar="FILE",
                      help="where findings are saved, one JSON line each (default: "
                      "tests/corpus/fuzz_findings.jsonl in a checkout, else ./fuzz_findings.jsonl)")
    fuzz.add_argument("--property", action="append", default=[], metavar="NAME",
                      help="only this property (repeatable): total, deterministic, containment, "
                      "quoting, legacy, bash_syntax, oracle, git_config")
    fuzz.add_argument("--program", action="append", default=[], metavar="NAME",
                      help="draw only this program's options (repeatable; 'sort', 'git log')")
    fuzz.add_argument("--first", action="store_true", help="stop at the first finding")
    fuzz.add_argument("--json", action="store_true", help="print one summary object last")
    fuzz.set_defaults(verb_module="fuzz")


def add_permission_args(parser: argparse.ArgumentParser) -> None:
    """The flags every verb that runs tools takes (Claude Code's names)."""
    group = parser.add_argument_group(
        "permissions", "rules as in settings.json: Bash(npm run:*), Read(./src/**), Edit, "
        "mcp__server; several per flag, separated by commas or spaces")
    group.add_argument("--settings", metavar="FILE",
                       help="a settings.json of higher precedence than the project's and "
                       "the user's (flagSettings)")
    group.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools",
                       action="append", nargs="+", default=[], metavar="RULE",
                       help="allow rules (cliArg)")
    group.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools",
                       action="append", nargs="+", default=[], metavar="RULE",
                       help="deny rules (cliArg)")
    group.add_argument("--permission-mode", metavar="MODE",
                       help="default, acceptEdits, plan, dontAsk or bypassPermissions")
    group.add_argument("--audit-log", metavar="PATH",
                       help="where the audit log goes: a .jsonl file, or a directory of "
                       "daily files (default $SHELLGATE_AUDIT_LOG, else "
                       "$XDG_STATE_HOME/shellgate/audit/)")


#: each verb's parser, made only for the verb that runs (building them
#: all costs a new process 10 ms)
_VERBS: dict[str, Callable[[argparse._SubParsersAction[_Parser]], None]] = {
    "check": _add_check,
    "run": _add_run,
    "tool": _add_tool,
    "audit": _add_audit,
    "fuzz": _add_fuzz,
    "hook": _add_hook,
    "trust": _add_trust,
    "doctor": _add_doctor,
}
