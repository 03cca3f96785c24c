"""The streaming executor: takes ``tool_use`` blocks as they complete while
the model is still streaming, and starts each as soon as it may.

- Concurrency-safe calls run together (at most 10, or
  ``SHELLGATE_MAX_TOOL_USE_CONCURRENCY``); any other call runs alone — a
  read/write lock in the shape of a queue: calls start in the order they
  arrived, a writer waits for everything before it and holds everything
  after it.
- Results come out in arrival order, even when a later call finishes first;
  progress comes out at once.
- A Bash call that fails cancels its siblings (the rest of the batch);
  other tools' failures do not cascade.
- A context change from a non-safe call (Bash's ``cd``) holds before the
  next call starts (the pipeline applies it; nothing runs beside it).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Literal

from values import field, valueclass

from .context import ToolContext
from .messages import Progress, TextBlock, ToolResultMessage, ToolUse, blocks_chars
from .pipeline import MESSAGE_BUDGET_CHARS, Pipeline, fit_message, persist_whole
from .pipeline.results import tool_error
from .tools.registry import find_tool

DEFAULT_MAX_CONCURRENCY = 10
#: pipeline stages before the tool acts: an interrupt stops any call there
_NOT_YET_RUN = frozenset({"", "lookup", "validate", "prepare", "permission"})

Status = Literal["queued", "classifying", "executing", "completed", "yielded"]


def max_concurrency() -> int:
    raw = os.environ.get("SHELLGATE_MAX_TOOL_USE_CONCURRENCY", "")
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_MAX_CONCURRENCY
    return value if value > 0 else DEFAULT_MAX_CONCURRENCY


@valueclass(frozen=False, slots=False)
class _Tracked:
    use: ToolUse
    ctx: ToolContext
    status: Status = "queued"
    safe: bool | None = None
    interruptible: bool = True
    task: asyncio.Task[ToolResultMessage] | None = None
    result: ToolResultMessage | None = None
    progress: list[Progress] = field(default_factory=list)


class StreamingExecutor:
    """One batch of calls (one assistant message). Use inside a running
    event loop: :meth:`add` each block as it completes, :meth:`close` when
    the message is complete, and read :meth:`events` (progress at once,
    results in order) or await :meth:`results`."""

    def __init__(self, pipeline: Pipeline, *, limit: int | None = None) -> None:
        self.pipeline = pipeline
        self.limit = limit or max_concurrency()
        self._calls: list[_Tracked] = []
        self._closed = False
        self._aborted: str | None = None
        self._wake = asyncio.Event()
        self._progress: list[Progress] = []
        self._loop = asyncio.get_running_loop()
        #: classifications under way (the loop keeps only weak references)
        self._classifying: set[asyncio.Task[None]] = set()

    # -- feeding ----------------------------------------------------------
    def add(self, use: ToolUse) -> None:
        if self._closed:
            raise RuntimeError("the batch is closed")
        call = _Tracked(use, self.pipeline.context(use))
        self._calls.append(call)
        if self._aborted is not None:
            # the batch was cut short (a Bash failure, an interrupt): what
            # arrives after that never runs (from a review: `touch` added
            # after an interrupt ran once the approver said yes)
            call.status, call.result = "completed", _cancelled(use, self._aborted)
            self._signal()
            return
        self._pump()

    def close(self) -> None:
        """No more blocks in this batch."""
        self._closed = True
        self._signal()

    def interrupt(self) -> None:
        """The user interrupted: calls not started never will, nor will one
        still before its act (waiting for approval, say); acting ones whose
        tool says ``cancel`` are stopped, ``block`` ones finish."""
        self._abort("interrupted by the user", only_interruptible=True)

    # -- scheduling ---------------------------------------------------------
    def _pump(self) -> None:
        for call in self._calls:
            if call.status in ("executing", "completed", "yielded"):
                continue
            if call.status == "classifying":
                return  # order: nothing after it starts before it does
            if call.safe is None:
                if any(c.status == "executing" and not c.safe for c in self._calls):
                    return  # a writer runs: its change to the context comes first
                call.status = "classifying"
                task = self._loop.create_task(self._classify(call))
                self._classifying.add(task)
                task.add_done_callback(self._classifying.discard)
                return
            if not self._can_start(call.safe):
                return
            self._start(call)

    def _can_start(self, safe: bool) -> bool:
        running = [c for c in self._calls if c.status == "executing"]
        if not running:
            return True
        return safe and len(running) < self.limit and all(c.safe for c in running)

    async def _classify(self, call: _Tracked) -> None:
        """Is the call concurrency-safe? Decided in the context it will run
        in (everything before it that changes context has finished) and off
        the event loop (Bash's analysis may walk a tree). A call whose input
        does not validate, or whose tool fails to say, is not safe."""
        safe, interruptible = await asyncio.to_thread(self._safety, call)
        if call.status != "classifying":
            return  # cancelled meanwhile, its result given: it must never start
        call.safe, call.interruptible = safe, interruptible
        call.status = "queued"
        self._pump()

    def _safety(self, call: _Tracked) -> tuple[bool, bool]:
        found = find_tool(self.pipeline.pool, call.use.name)
        if found is None:
            return True, True  # an unknown tool is an error result at once
        try:
            data = found.tool.input_model.model_validate(dict(call.use.input))
            return (bool(found.tool.is_concurrency_safe(data, call.ctx)),
                    found.tool.interrupt_behavior() == "cancel")
        except Exception:
            return False, False  # fail closed: alone, and never cut short

    def _start(self, call: _Tracked) -> None:
        call.status = "executing"
        call.ctx.concurrent = bool(call.safe)

        def on_progress(p: Progress) -> None:  # from any thread
            self._loop.call_soon_threadsafe(self._add_progress, p)

        call.task = self._loop.create_task(self.pipeline.run(call.use, on_progress, call.ctx))
        call.task.add_done_callback(lambda t: self._finished(call, t))

    def _finished(self, call: _Tracked, task: asyncio.Task[ToolResultMessage]) -> None:
        if task.cancelled():  # cancelled before the pipeline began
            call.result = _cancelled(call.use, self._aborted or "cancelled")
        elif call.ctx.outcome == "cancelled" and self._aborted is not None:
            call.result = _cancelled(call.use, f"{self._aborted} (it was stopped while running)")
        elif task.exception() is not None:
            # the pipeline never raises; if it ever does, the batch still ends
            call.result = ToolResultMessage(call.use.id, (TextBlock(tool_error(
                f"Internal error: {type(task.exception()).__name__}")),), is_error=True)
        else:
            call.result = task.result()
        call.status = "completed"
        if call.use.name == "Bash" and call.ctx.outcome == "error" and self._aborted is None:
            self._abort(f"an earlier Bash call ({call.use.id}) failed")
        self._pump()
        self._signal()

    def _abort(self, why: str, *, only_interruptible: bool = False) -> None:
        self._aborted = self._aborted or why
        for call in self._calls:
            if call.status in ("queued", "classifying"):
                call.status = "completed"
                call.result = _cancelled(call.use, why)
            elif (call.status == "executing" and call.task is not None
                  and (call.interruptible or not only_interruptible
                       or call.ctx.stage in _NOT_YET_RUN)):
                # "block" spares a write half done, not one still waiting for
                # its approval (from a review: a Write approved after the
                # interrupt went on to write)
                call.task.cancel()
        self._signal()

    # -- reading ------------------------------------------------------------
    def _add_progress(self, p: Progress) -> None:
        self._progress.append(p)
        self._signal()

    def _signal(self) -> None:
        self._wake.set()

    async def events(self) -> AsyncIterator[Progress | ToolResultMessage]:
        """Progress as it comes, results in the order the blocks arrived;
        ends when the batch is closed and every result was given. The
        results share the per-message budget as they come: one that would
        pass it is persisted whole (:meth:`results`, which sees them all
        first, persists the largest instead)."""
        used = 0
        async for event in self._ordered():
            if not isinstance(event, ToolResultMessage):
                yield event
                continue
            result = event
            if used + blocks_chars(result.content) > MESSAGE_BUDGET_CHARS:
                result = persist_whole(result, self.pipeline.session)
            used += blocks_chars(result.content)
            yield result

    async def _ordered(self) -> AsyncIterator[Progress | ToolResultMessage]:
        index = 0
        while True:
            self._wake.clear()
            while self._progress:
                yield self._progress.pop(0)
            while index < len(self._calls) and self._calls[index].status == "completed":
                call = self._calls[index]
                call.status = "yielded"
                assert call.result is not None
                yield call.result
                index += 1
            if self._closed and index == len(self._calls) and not self._progress:
                return
            if self._progress:
                continue
            await self._wake.wait()

    async def results(self) -> list[ToolResultMessage]:
        """Every result of the batch, in order, within the per-message
        budget (the largest persisted first)."""
        self.close()
        out = [e async for e in self._ordered() if isinstance(e, ToolResultMessage)]
        return fit_message(out, self.pipeline.session)


def _cancelled(use: ToolUse, why: str) -> ToolResultMessage:
    return ToolResultMessage(use.id, (TextBlock(tool_error(f"Cancelled: {why}")),),
                             is_error=True)
