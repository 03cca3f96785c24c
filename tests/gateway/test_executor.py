"""The streaming executor with real tools and controlled durations: order,
overlap, exclusivity, abort, progress, context changes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from kit import Answer, ForgetfulTool, Timeline, WaitTool, wait_tool

from gateway.context import SessionContext
from gateway.executor import StreamingExecutor, max_concurrency
from gateway.messages import Progress, ToolResultMessage, ToolUse
from gateway.pipeline import Pipeline
from gateway.tools import AnyTool, build_tool
from gateway.tools.bash import BASH


def _run(session: SessionContext, tools: Sequence[AnyTool], uses: Sequence[ToolUse],
         *, limit: int | None = None, stagger: float = 0.0,
         ) -> list[Progress | ToolResultMessage]:
    session.approver = Answer(True)  # writers are approved: this is about scheduling

    async def go() -> list[Progress | ToolResultMessage]:
        executor = StreamingExecutor(Pipeline(session, tools), limit=limit)
        for use in uses:
            executor.add(use)
            if stagger:
                await asyncio.sleep(stagger)
        executor.close()
        return [e async for e in executor.events()]
    return asyncio.run(go())


def _wait(i: str, ms: int, **kw: object) -> ToolUse:
    return ToolUse(i, "Wait", {"ms": ms, "text": i, **kw})


def _results(events: Sequence[object]) -> list[ToolResultMessage]:
    return [e for e in events if isinstance(e, ToolResultMessage)]


def test_results_come_out_in_arrival_order_even_when_a_later_call_finishes_first(
        session: SessionContext) -> None:
    tl = Timeline()
    events = _run(session, [wait_tool(tl)], [_wait("a", 300), _wait("b", 10), _wait("c", 100)])
    assert [r.tool_use_id for r in _results(events)] == ["a", "b", "c"]
    assert tl.spans["b"][1] < tl.spans["a"][1]  # b really finished first


def test_concurrency_safe_calls_run_together(session: SessionContext) -> None:
    tl = Timeline()
    _run(session, [wait_tool(tl)], [_wait(str(i), 300) for i in range(10)])
    # all ten were running at one instant: the last to start began before
    # the first to end finished (an order, not a wall-clock bound, which a
    # loaded machine breaks)
    assert len(tl.spans) == 10
    assert max(s for s, _ in tl.spans.values()) < min(e for _, e in tl.spans.values())


def test_a_call_that_is_not_concurrency_safe_runs_alone(session: SessionContext) -> None:
    tl = Timeline()
    uses = [_wait("r1", 100), _wait("w", 100, safe=False), _wait("r2", 100), _wait("r3", 100)]
    _run(session, [wait_tool(tl)], uses)
    assert not tl.overlap("w", "r1") and not tl.overlap("w", "r2")
    assert tl.spans["r1"][1] <= tl.spans["w"][0] <= tl.spans["w"][1] <= tl.spans["r2"][0]
    assert tl.overlap("r2", "r3")


def test_a_tool_that_forgets_to_declare_itself_read_only_never_runs_beside_another(
        session: SessionContext) -> None:
    tl = Timeline()
    tools = [wait_tool(tl), build_tool(ForgetfulTool(tl))]
    uses = [_wait("r1", 100), ToolUse("f", "Forgetful", {"ms": 100}), _wait("r2", 100)]
    _run(session, tools, uses)
    assert not tl.overlap("f", "r1") and not tl.overlap("f", "r2")


def test_at_most_the_limit_of_calls_run_at_once(session: SessionContext) -> None:
    tl = Timeline()
    _run(session, [wait_tool(tl)], [_wait(str(i), 100) for i in range(4)], limit=2)
    spans = sorted(tl.spans.values())
    for t in (s for s, _ in spans):
        assert sum(1 for s, e in spans if s <= t < e) <= 2


def test_the_concurrency_limit_comes_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_MAX_TOOL_USE_CONCURRENCY", "3")
    assert max_concurrency() == 3
    monkeypatch.setenv("SHELLGATE_MAX_TOOL_USE_CONCURRENCY", "zero")
    assert max_concurrency() == 10


def test_calls_start_as_they_arrive_while_the_model_still_streams(
        session: SessionContext) -> None:
    tl = Timeline()
    _run(session, [wait_tool(tl)], [_wait("a", 50), _wait("b", 50)], stagger=0.2)
    assert tl.spans["a"][1] < tl.spans["b"][0]  # a finished before b even arrived


def test_progress_comes_out_at_once_not_after_earlier_results(
        session: SessionContext) -> None:
    events = _run(session, [wait_tool()], [_wait("slow", 300),
                                           _wait("fast", 0, progress=True)])
    kinds = [(type(e).__name__, getattr(e, "tool_use_id", "")) for e in events]
    assert kinds.index(("Progress", "fast")) < kinds.index(("ToolResultMessage", "slow"))
    progress = next(e for e in events if isinstance(e, Progress))
    assert progress.tool_use_id == "fast" and progress.tool_name == "Wait"


@pytest.mark.sandbox
def test_a_failing_bash_call_cancels_its_siblings(session: SessionContext) -> None:
    tl = Timeline()
    uses = [ToolUse("bad", "Bash", {"command": "ls nonexistent-dir-xyz"}),
            _wait("running", 2000), _wait("queued", 10, safe=False)]
    started = time.monotonic()
    events = _run(session, [BASH, wait_tool(tl)], uses)
    results = {r.tool_use_id: r for r in _results(events)}
    assert results["bad"].is_error
    assert results["running"].is_error and "stopped while running" in results["running"].text
    assert results["queued"].is_error and "Cancelled" in results["queued"].text
    assert "queued" not in tl.spans  # never started
    assert time.monotonic() - started < 1.5


def test_other_tools_errors_do_not_cancel_their_siblings(session: SessionContext) -> None:
    events = _run(session, [wait_tool()], [_wait("bad", 0, fail=True), _wait("ok", 100)])
    results = {r.tool_use_id: r for r in _results(events)}
    assert results["bad"].is_error
    assert not results["ok"].is_error and results["ok"].text == "ok"


@pytest.mark.sandbox
def test_a_directory_change_holds_before_the_next_call_starts(
        session: SessionContext, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    uses = [ToolUse("cd", "Bash", {"command": "cd sub"}),
            ToolUse("pwd", "Bash", {"command": "pwd"})]
    events = _run(session, [BASH], uses)
    assert _results(events)[1].text.strip() == str(workspace / "sub")


def test_an_interrupt_cancels_cancellable_calls_and_lets_blocking_ones_finish(
        session: SessionContext) -> None:
    class Blocking(WaitTool):
        name = "Block"
        kind = "block"

    tl = Timeline()
    tools = [wait_tool(tl), build_tool(Blocking(tl))]
    session.approver = Answer(True)

    async def go() -> list[ToolResultMessage]:
        executor = StreamingExecutor(Pipeline(session, tools))
        executor.add(_wait("c", 1000))
        executor.add(ToolUse("b", "Block", {"ms": 200, "text": "b"}))
        executor.add(_wait("later", 10, safe=False))
        await asyncio.sleep(0.05)
        executor.interrupt()
        return await executor.results()

    results = {r.tool_use_id: r for r in asyncio.run(go())}
    assert results["c"].is_error and "interrupted by the user" in results["c"].text
    assert not results["b"].is_error and results["b"].text == "b"
    assert results["later"].is_error and "later" not in tl.spans


def test_a_call_interrupted_while_it_is_being_classified_never_runs(
        session: SessionContext) -> None:
    tl = Timeline()

    async def go() -> list[ToolResultMessage]:
        executor = StreamingExecutor(Pipeline(session, [wait_tool(tl)]))
        executor.add(_wait("w", 10, safe=False))
        executor.interrupt()  # before its classification came back
        results = await executor.results()
        await asyncio.sleep(0.3)  # a late start would show now
        return results

    session.approver = Answer(True)
    results = asyncio.run(go())
    assert results[0].is_error and "interrupted" in results[0].text
    assert "w" not in tl.spans


def test_calls_added_after_the_batch_was_cut_short_never_run(session: SessionContext) -> None:
    tl = Timeline()

    async def go() -> list[ToolResultMessage]:
        executor = StreamingExecutor(Pipeline(session, [wait_tool(tl)]))
        executor.add(_wait("first", 10))
        await asyncio.sleep(0.1)
        executor.interrupt()
        executor.add(_wait("late", 10))
        return await executor.results()

    results = asyncio.run(go())
    assert [r.tool_use_id for r in results] == ["first", "late"]
    assert results[1].is_error and "late" not in tl.spans


def test_a_failing_audit_sink_ends_the_batch_with_errors_never_a_hang(
        session: SessionContext) -> None:
    class Full:
        def emit(self, event: str, **fields: object) -> None:
            raise OSError(28, "No space left on device")

    session.audit = Full()
    tl = Timeline()

    async def go() -> list[ToolResultMessage]:
        executor = StreamingExecutor(Pipeline(session, [wait_tool(tl)]))
        executor.add(_wait("a", 10))
        return await asyncio.wait_for(executor.results(), 10)

    results = asyncio.run(go())
    assert results[0].is_error and "nothing was run" in results[0].text
    assert "a" not in tl.spans  # no record of the decision: nothing ran


def test_an_interrupt_stops_a_blocking_call_still_waiting_for_its_approval(
        session: SessionContext) -> None:
    class Blocking(WaitTool):
        name = "Block"
        kind = "block"

    tl = Timeline()
    released = asyncio.Event()

    async def slow_yes(request: object) -> bool:
        await released.wait()
        return True

    session.approver = slow_yes

    async def go() -> list[ToolResultMessage]:
        released.clear()
        executor = StreamingExecutor(Pipeline(session, [build_tool(Blocking(tl))]))
        executor.add(ToolUse("b", "Block", {"ms": 10, "safe": False}))
        await asyncio.sleep(0.2)  # it waits for the person
        executor.interrupt()
        released.set()  # the person says yes, too late
        return await executor.results()

    results = asyncio.run(go())
    assert results[0].is_error and "b" not in tl.spans


def test_results_read_as_events_share_the_message_budget_too(session: SessionContext) -> None:
    big = "z" * 45_000  # under Wait's own 50,000 limit, five pass 200,000 together
    events = _run(session, [wait_tool()], [_wait(str(i), 0, text=big) for i in range(5)])
    results = _results(events)
    assert sum(len(r.text) for r in results) <= 200_000
    assert results[0].text == big and "persisted-output" in results[-1].text
