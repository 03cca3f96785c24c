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
from typing import IO, TYPE_CHECKING, NoReturn

from .errors import UsageError

if TYPE_CHECKING:
    from analyzers import BashAnalysis


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
    run.add_argument(
        "argv", nargs=argparse.REMAINDER, metavar="-- ARGV", help="the command and its arguments"
    )
    run.set_defaults(func=_cmd_run)

    doctor = sub.add_parser("doctor", help="check that the sandbox can work on this machine")
    doctor.add_argument("--json", action="store_true", help="print the probes as JSON")
    doctor.set_defaults(func=_cmd_doctor)
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
    from analyzers import analyze_bash  # noqa: PLC0415 - each verb imports only what it needs

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
    try:
        analysis = analyze_bash(command, cwd, extra_read_dirs=extra, home=_home())
    except Exception as exc:
        message = f"internal error: {_one_line(exc)}"
        if args.json:
            sys.stdout.write(json.dumps({"decision": "ask", "error": message}) + "\n")
        else:
            print(f"shellgate: ASK (fail closed): {message}", file=sys.stderr)
        return 1
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
    from analyzers import AnalyzerError, analyze_bash  # noqa: PLC0415

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


#: Exit statuses of `shellgate run` that are not the command's own.
EXIT_TIMEOUT = 124
EXIT_SANDBOX = 125


def _cmd_run(args: argparse.Namespace) -> int:
    from sandbox import (  # noqa: PLC0415 - keep `shellgate run` cold start small
        FilesystemPolicy,
        NetworkPolicy,
        PolicyError,
        SandboxError,
        apply_settings,
        load_profile,
        parse_settings,
        run,
    )

    argv = list(args.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        raise UsageError("run needs a command: shellgate run [options] -- ARGV...")
    cwd = _abs_dir(args.cwd)
    try:
        policy = load_profile(args.profile)
        if args.settings:
            policy = apply_settings(policy, parse_settings(_read_sandbox_key(args.settings)))
        if args.allow_write or args.allow_domain:
            fs: FilesystemPolicy = policy.filesystem
            net: NetworkPolicy = policy.network
            policy = policy.model_copy(
                update={
                    "filesystem": fs.model_copy(
                        update={
                            "allow_write": fs.allow_write
                            + tuple(os.path.abspath(p) for p in args.allow_write)
                        }
                    ),
                    "network": NetworkPolicy(
                        allowed_domains=net.allowed_domains + tuple(args.allow_domain),
                        denied_domains=net.denied_domains,
                        allow_unix_sockets=net.allow_unix_sockets,
                        allow_private_addresses=net.allow_private_addresses,
                    ),
                }
            )
    except (PolicyError, ValueError) as exc:
        print(f"shellgate: {_one_line(exc)}", file=sys.stderr)
        return EXIT_SANDBOX
    # A pipe or file on stdin is handed to the command as it is (streamed, and
    # an idle pipe does not block the start); a terminal is not.
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.fileno()
    out, err = sys.stdout.buffer, sys.stderr.buffer
    first_stderr = [True]
    held: list[bytes] = []

    def stream(name: str, data: bytes) -> None:
        if name == "stderr" and first_stderr[0]:
            first_stderr[0] = False
            if data.startswith(b"bwrap: "):
                # bwrap's own message: a sandbox failure is reported below on
                # one line; anything else (command not found) is printed then.
                held.append(data)
                return
        target = out if name == "stdout" else err
        target.write(data)
        target.flush()

    try:
        result = run(argv, policy, cwd=cwd, timeout=args.timeout, on_output=stream, stdin=stdin)
    except SandboxError as exc:
        print(f"shellgate: sandbox unavailable: {_one_line(exc)}", file=sys.stderr)
        return EXIT_SANDBOX
    except Exception as exc:
        print(
            f"shellgate: internal error (nothing runs outside the sandbox; a started "
            f"command was stopped): {_one_line(exc)}",
            file=sys.stderr,
        )
        return EXIT_SANDBOX
    for data in held:
        err.write(data)
        err.flush()
    if result.timed_out:
        print(
            f"shellgate: timed out after {result.duration:.1f}s; process tree killed",
            file=sys.stderr,
        )
        return EXIT_TIMEOUT
    if result.killed_reason:
        print(f"shellgate: killed: {result.killed_reason}", file=sys.stderr)
    for path in result.tampered:
        if path.endswith("/.git/commondir"):
            print(f"shellgate: the command created protected path {path}; removed",
                  file=sys.stderr)
        else:
            print(f"shellgate: the command planted a nested repository; {path} was renamed "
                  "with the suffix .quarantined-by-shellgate", file=sys.stderr)
    if result.signal is not None:
        return 128 + result.signal
    return result.exit_code if result.exit_code is not None else EXIT_SANDBOX


def _read_sandbox_key(path: str) -> object:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read settings {path!r}: {_one_line(exc)}") from None
    return data.get("sandbox") if isinstance(data, dict) else None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:500]


def _cmd_doctor(args: argparse.Namespace) -> int:
    from sandbox import run_probes, sandbox_works  # noqa: PLC0415

    probes = run_probes()
    works = sandbox_works(probes)
    if args.json:
        print(
            json.dumps(
                {
                    "sandbox_works": works,
                    "probes": [
                        {
                            "name": p.name,
                            "ok": p.ok,
                            "required": p.required,
                            "detail": p.detail,
                            "fix": p.fix,
                        }
                        for p in probes
                    ],
                }
            )
        )
        return 0 if works else 1
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    table = Table(title="shellgate doctor", title_justify="left")
    for column in ("", "probe", "detail", "what to do"):
        table.add_column(column)
    for p in probes:
        mark = (
            Text("ok", style="green")
            if p.ok
            else Text("FAIL" if p.required else "warn", style="red" if p.required else "yellow")
        )
        table.add_row(mark, p.name, Text(p.detail), Text(p.fix))
    console = Console(highlight=False)
    console.print(table)
    console.print(
        Text(
            "the sandbox works here"
            if works
            else "the sandbox cannot work here: fix the failures above",
            style="green" if works else "bold red",
        )
    )
    return 0 if works else 1
