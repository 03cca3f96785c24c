"""Bash's side of background tasks: a command started with
``run_in_background``, and a foreground command that the session's
auto-backgrounding moves to the background once it has run past its budget
(instead of killing it at its timeout).

Either way the command was started exactly as any other — same analysis,
same permission, same sandbox and environment; only who waits for it
differs. The task registry and what a read shows are :mod:`.tasks`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from values import replace

from ..context import SessionContext, ToolContext
from ..messages import ToolResult
from .tasks import (
    BackgroundTask,
    TaskRead,
    background_refusal,
    session_closed,
    started_text,
    tasks_of,
)

if TYPE_CHECKING:
    from sandbox import BackgroundProcess, ExecResult

__all__ = ["follow", "new_task", "started"]


def new_task(ctx: ToolContext, command: str, marker: bytes, meaning: Callable[[int], Any],
             unsandboxed: str | None,
             foreground: Callable[[str, bytes], None] | None) -> BackgroundTask | None:
    """The task a call's command runs as. ``foreground`` (the call's
    progress) is given for a foreground command under auto-backgrounding:
    its task is the session's only once moved, and only where a task may
    run at all (inside bwrap). Without ``foreground`` the task is the
    session's from the start (validation has refused what may not be one)."""
    session = ctx.session
    if foreground is not None and background_refusal(session, unsandboxed,
                                                     count=False) is not None:
        return None
    registry = tasks_of(session)
    task = BackgroundTask(registry.new_id(), command, session, marker=marker, meaning=meaning,
                          call_id=ctx.call_id, tool_use_id=ctx.tool_use_id,
                          adopted=foreground is None)
    task.echo = foreground
    if foreground is None:
        registry.add(task)
    return task


async def follow(task: BackgroundTask, process: BackgroundProcess, ctx: ToolContext,
                 budget_s: float | None) -> ToolResult | ExecResult | None:
    """After the start: a background command's result names its task at
    once (``budget_s`` None). A foreground one is waited for up to its
    budget; past it, it moves to the background (a result naming its task
    and what it printed so far) — or, when the session has no room for
    another task, it is stopped as a timeout would have stopped it."""
    task.attach(process)
    if budget_s is None and (task.stop_requested or session_closed(ctx.session)):
        # the session closed while the call was on its way: its closer has
        # run, and the command must not outlive it
        await asyncio.to_thread(task.stop, "the session closed")
        return ToolResult("The session closed before the command could run in the background; "
                          "it was stopped.", is_error=True)
    if budget_s is None:
        return started(task, ctx)
    if await task.wait(budget_s):
        return process.wait()
    # a closed session refuses too: adopted now, the task would outlive it
    full = background_refusal(ctx.session, None)
    if full is None and task.adopt():
        tasks_of(ctx.session).add(task)
        return started(task, ctx, task.read(), budget_s)
    if full is None:  # it ended just now: its result as usual
        return process.wait()
    await asyncio.to_thread(task.stop, "its timeout passed")
    result = process.wait()
    if result is None:  # pragma: no cover - the stop waited for the end
        return None
    return replace(result, timed_out=True, killed_reason=(
        f"wall timeout of {budget_s:g}s (not moved to the background: {full})"))


def started(task: BackgroundTask, ctx: ToolContext, so_far: TaskRead | None = None,
            after_s: float | None = None) -> ToolResult:
    """The result of a call whose command goes on running."""
    text = "\n".join([started_text(task, so_far, after_s),
                      *(f"shellgate: {note}" for note in ctx.notes)])
    return ToolResult(text, context_modifier=_forget_plan)


def _forget_plan(session: SessionContext) -> None:
    # the task may change the tree at any time from now on
    session.forget_plan()
