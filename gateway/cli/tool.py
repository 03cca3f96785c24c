"""``shellgate tool``: one call of any tool through the whole pipeline.

Exit status: 0 whenever a result was produced (an ``is_error`` result
included: the pipeline worked), 2 for usage errors and a malformed
``--input`` (one line naming the problem)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from typing import Any

from ..context import ApprovalRequest
from ..errors import UsageError
from ..messages import ImageBlock, Progress, TextBlock, ToolResultMessage, ToolUse
from ..session import Session
from .common import abs_dir, one_line


def main(args: argparse.Namespace) -> int:
    tool_input = _parse_input(args.input)
    approver = _ask_on_terminal if sys.stdin.isatty() and sys.stderr.isatty() else None
    session = Session.open(abs_dir(args.cwd), extra_dirs=tuple(args.add_dir),
                           approver=approver, profile=args.profile)
    use = ToolUse(f"toolu_{uuid.uuid4().hex[:20]}", args.name, tool_input)
    live = not args.json and sys.stderr.isatty()
    result = asyncio.run(session.run(use, _show_progress if live else None))
    if args.json:
        print(json.dumps(result.to_wire(), ensure_ascii=False))
    else:
        _print_result(result)
    return 0


def _parse_input(raw: str) -> dict[str, Any]:
    if raw == "-":
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"--input is not valid UTF-8: {one_line(exc)}") from None
    else:
        text = raw
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--input is not valid JSON: {one_line(exc)}") from None
    except RecursionError:
        raise UsageError("--input is not valid JSON: nested too deeply") from None
    if not isinstance(value, dict):
        raise UsageError(f"--input must be a JSON object, not {type(value).__name__}")
    return value


def _show_progress(p: Progress) -> None:
    sys.stderr.write(p.text)
    sys.stderr.flush()


def _print_result(result: ToolResultMessage) -> None:
    for block in result.content:
        if isinstance(block, TextBlock):
            print(block.text)
        elif isinstance(block, ImageBlock):
            print(f"[image: {block.media_type}, {len(block.data)} bytes]")
        else:
            print(block.to_wire()["text"])
    if result.is_error:
        print("(the result is an error)", file=sys.stderr)


async def _ask_on_terminal(request: ApprovalRequest) -> bool:
    """A person at the terminal answers an ``ask`` (y/N)."""
    from rich.console import Console  # noqa: PLC0415
    from rich.prompt import Confirm  # noqa: PLC0415

    console = Console(stderr=True)
    p = request.permission
    console.print(f"[bold]{request.tool_name}[/bold]({request.summary or ''}) needs approval: "
                  f"{p.reason}")
    for warning in p.warnings:
        console.print(f"  [yellow]warning:[/yellow] {warning}")
    answer: bool = await asyncio.to_thread(Confirm.ask, "Allow this call once?",
                                           console=console, default=False)
    return answer
