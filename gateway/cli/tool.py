"""``shellgate tool``: one call of any tool through the whole pipeline, or
a batch of calls through one session (``--batch``).

Exit status: 0 whenever a result was produced (an ``is_error`` result
included: the pipeline worked), 2 for usage errors and a malformed
``--input`` (one line naming the problem)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import unicodedata
from typing import TYPE_CHECKING, Any

from regexes import regex

from ..context import ApprovalRequest, new_id
from ..errors import UsageError
from ..messages import ImageBlock, Progress, TextBlock, ToolResultMessage, ToolUse
from .common import one_line
from .sessions import open_session

if TYPE_CHECKING:
    from ..session import Session


def main(args: argparse.Namespace) -> int:
    if args.batch is not None:
        if args.name is not None or args.input is not None:
            raise UsageError("--batch takes its calls from the file: give no NAME or --input")
        return _batch(args)
    if args.name is None or args.input is None:
        raise UsageError("give NAME and --input JSON (or --batch FILE)")
    tool_input = _parse_input(args.input)
    session = _open(args, interactive=True)
    use = ToolUse(f"toolu_{new_id(20)}", args.name, tool_input)
    live = not args.json and sys.stderr.isatty()

    async def one() -> ToolResultMessage:
        try:
            return await session.run(use, _show_progress if live else None)
        finally:
            await session.close()

    result = asyncio.run(one())
    _report(result, args.json)
    return 0


def _open(args: argparse.Namespace, *, interactive: bool) -> Session:
    """The session of this run: a person at the terminal answers asks and
    questions; with nobody there an ask is a denial and a question an
    error."""
    at_terminal = interactive and sys.stdin.isatty() and sys.stderr.isatty()
    extra: dict[str, Any] = {}
    if at_terminal:
        from .questions import ask_on_terminal  # noqa: PLC0415

        extra["questioner"] = ask_on_terminal
    return open_session(args, approver=_ask_on_terminal if at_terminal else None,
                        profile=args.profile, **extra)


def _batch(args: argparse.Namespace) -> int:
    """Calls one after another through one session, one JSON object a line
    (``{"name": "Bash", "input": {...}}``): what one call leaves — a
    directory, a background task, plan mode, a selected tool — the next
    sees. Every line is checked before anything runs; the session, and
    every task it started, ends with the batch."""
    uses = _read_batch(args.batch)
    session = _open(args, interactive=args.batch != "-")
    live = not args.json and sys.stderr.isatty()

    async def run_all() -> None:
        try:
            for use in uses:
                if not args.json:
                    print(f"── {shown(use.name)} ({use.id})")
                _report(await session.run(use, _show_progress if live else None), args.json)
        finally:
            await session.close()

    asyncio.run(run_all())
    return 0


#: a batch is a script of calls, not a data set
MAX_BATCH_LINES = 10_000


def _read_batch(source: str) -> list[ToolUse]:
    try:
        if source == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as fh:
                raw = fh.read(64 << 20)
    except OSError as exc:
        raise UsageError(f"--batch {source!r}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--batch is not valid UTF-8: {one_line(exc)}") from None
    uses: list[ToolUse] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if len(uses) == MAX_BATCH_LINES:
            raise UsageError(f"--batch: more than {MAX_BATCH_LINES} calls")
        call = _parse_input(line, where=f"--batch line {n}")
        name, tool_input = call.get("name"), call.get("input", {})
        if not isinstance(name, str) or not name:
            raise UsageError(f"--batch line {n}: \"name\" must be a tool's name")
        if not isinstance(tool_input, dict):
            raise UsageError(f"--batch line {n}: \"input\" must be a JSON object")
        unknown = set(call) - {"name", "input", "id"}
        if unknown:
            raise UsageError(f"--batch line {n}: unknown keys {sorted(unknown)} (name, input, id)")
        ident = call.get("id")
        uses.append(ToolUse(ident if isinstance(ident, str) and ident
                            else f"toolu_{new_id(20)}", name, tool_input))
    if not uses:
        raise UsageError("--batch holds no calls")
    return uses


def _report(result: ToolResultMessage, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.to_wire(), ensure_ascii=False), flush=True)
    else:
        _print_result(result)


def _parse_input(raw: str, where: str = "--input") -> dict[str, Any]:
    if raw == "-":
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{where} is not valid UTF-8: {one_line(exc)}") from None
    else:
        text = raw
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{where} is not valid JSON: {one_line(exc)}") from None
    except RecursionError:
        raise UsageError(f"{where} is not valid JSON: nested too deeply") from None
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a JSON object, not {type(value).__name__}")
    return value


#: C0 and C1 controls but newline and tab, and DEL: a command's output must
#: not drive the user's terminal (from a review: `printf '\e]52;c;…'` set
#: the clipboard, `\e[1A\e[2K` rewrote the line above with "tests passed")
_CONTROLS = regex(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str) -> str:
    """Text as it may reach a terminal: each control character made
    visible (``\x1b``), never obeyed; so are the invisible format
    characters (bidirectional overrides, zero-width ones, line and
    paragraph separators) that make text read otherwise than it runs."""
    text = _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cf", "Zl", "Zp")
                   else c for c in text)


def _value_lines(value: str) -> list[str]:
    """A call's input value for the approval prompt: one line as it is;
    several numbered, runs of blank lines collapsed — from a review, sixty
    blank lines scrolled `touch EVIL` off the screen above `ls`."""
    lines = value.split("\n")
    if len(lines) == 1:
        return [shown(value)]
    out: list[str] = [f"({len(lines)} lines)"]
    blank = 0
    for n, line in enumerate(lines, 1):
        if not line.strip():
            blank += 1
            continue
        if blank:
            out.append(f"    ⟨{blank} blank line{'s' if blank > 1 else ''}⟩")
            blank = 0
        out.append(f"    {n:>4} | {shown(line)}")
    if blank:
        out.append(f"    ⟨{blank} blank line{'s' if blank > 1 else ''}⟩")
    return out


def _show_progress(p: Progress) -> None:
    sys.stderr.write(shown(p.text))
    sys.stderr.flush()


def _print_result(result: ToolResultMessage) -> None:
    for block in result.content:
        if isinstance(block, TextBlock):
            print(shown(block.text))
        elif isinstance(block, ImageBlock):
            print(f"[image: {block.media_type}, {len(block.data)} bytes]")
        else:
            print(block.to_wire()["text"])
    if result.is_error:
        print("(the result is an error)", file=sys.stderr)


async def _ask_on_terminal(request: ApprovalRequest) -> bool | str:
    """A person at the terminal answers an ``ask``: yes once, always (the
    suggested rule saved to the local settings), or no (the default)."""
    from rich.console import Console  # noqa: PLC0415
    from rich.markup import escape  # noqa: PLC0415
    from rich.prompt import Confirm, Prompt  # noqa: PLC0415

    console = Console(stderr=True, highlight=False)
    p = request.permission
    # What the call will do, in full (a command, a path), never only the
    # model's own words for it: from a review, `description: "Run the unit
    # tests"` was all the prompt showed of `python3 -c "os.remove(…)"`.
    # Every model-given string is shown as text: escaped for rich's markup
    # (`[/]` crashed the prompt), controls made visible (`\e[8m` hid it).
    console.print(f"[bold]{escape(shown(request.tool_name))}[/bold] needs approval:")
    from rich.padding import Padding  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    for key, value in request.input.items():
        text = value if isinstance(value, str) else json.dumps(value)
        first, *rest = _value_lines(text)
        # indented as a block, wrapped lines too: from a review, a value of
        # 200 spaces and `why: tests only` wrapped onto a line of its own at
        # the margin, where it read as the gateway's own reason
        console.print(Padding(Text(f"{shown(key)}: {first}"), (0, 0, 0, 2)))
        for line in rest:
            console.print(Padding(Text(line.lstrip(" ")), (0, 0, 0, 4)))
    console.print(f"  [bold]why:[/bold] {escape(shown(p.reason))}")
    for warning in p.warnings:
        console.print(f"  [yellow]warning:[/yellow] {escape(shown(warning))}")
    if not p.suggestions or p.needs_person:
        answer: bool = await asyncio.to_thread(Confirm.ask, "Allow this call once?",
                                               console=console, default=False)
        return answer
    rules = ", ".join(p.suggestions)
    console.print(f"  [bold]always[/bold] saves {escape(shown(rules))} to "
                  ".claude/settings.local.json")
    choice: str = await asyncio.to_thread(
        Prompt.ask, "Allow this call once? (y = once, a = always, n = no)", console=console,
        choices=["y", "a", "n"], default="n", show_choices=False)
    return "always" if choice == "a" else choice == "y"
