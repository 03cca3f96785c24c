"""EnterPlanMode and ExitPlanMode through the real pipeline: plan mode
runs only read-only tools, a person's approval of the plan brings the
session back, a refusal or nobody to answer keeps it planning, and no
rule, hook or mode lifts that approval."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from kit import Answer, FixedHooks

from gateway.context import Approver
from gateway.decisions import Decision
from gateway.hooks import HookOutcome, Hooks
from gateway.messages import ToolResultMessage, ToolUse
from gateway.permissions import CliPermissions, load_permissions
from gateway.session import Session
from gateway.tools.plan_mode import APPROVED, ENTER_PLAN_MODE, EXIT_PLAN_MODE

PLAN = "## Plan\n1. add `greet()` to hello.py\n2. test it"


def open_session(workspace: Path, tmp_path: Path, *, approver: Approver | None = None,
                 mode: str | None = None, allow: tuple[str, ...] = (),
                 hooks: Hooks | None = None) -> Session:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (tmp_path / "results").mkdir(exist_ok=True)
    permissions = load_permissions(str(workspace), str(home), CliPermissions(
        allowed_tools=allow, permission_mode=mode), managed_dirs=[])
    return Session.open(str(workspace), extra_tools=[ENTER_PLAN_MODE, EXIT_PLAN_MODE],
                        permissions=permissions, hooks=hooks, approver=approver,
                        home=str(home), results_dir=str(tmp_path / "results"))


def run(session: Session, name: str, data: dict[str, Any] | None = None) -> ToolResultMessage:
    return asyncio.run(session.run(ToolUse(f"toolu_{name}", name, data or {})))


def write(session: Session, path: Path) -> ToolResultMessage:
    return run(session, "Write", {"file_path": str(path), "content": "x\n"})


def decided(session: Session) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = getattr(session.context.audit, "events")  # noqa: B009
    return [e for e in events if e["event"] == "permission.decided"]


# -- entering ------------------------------------------------------------------

def test_after_enter_plan_mode_writes_and_writing_commands_are_denied_and_reads_run(
        workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path, approver=Answer(True), allow=("Bash", "Write"))
    entered = run(session, "EnterPlanMode")
    assert not entered.is_error and entered.text.startswith("Entered plan mode")
    assert session.context.mode == "plan" and session.context.mode_before is None
    assert decided(session)[-1]["decision"] == "allow"  # nobody was asked to enter

    denied = write(session, workspace / "new.txt")
    assert denied.is_error and "plan mode runs read-only tools only" in denied.text.lower()
    assert "ExitPlanMode" in denied.text and not (workspace / "new.txt").exists()
    bash = run(session, "Bash", {"command": "touch made-in-plan-mode"})
    assert bash.is_error and "(rule plan)" in bash.text
    assert not (workspace / "made-in-plan-mode").exists()
    assert decided(session)[-1]["mode"] == "plan"

    read = run(session, "Read", {"file_path": str(workspace / "README.md")})
    assert not read.is_error and "hello" in read.text


def test_in_one_batch_a_write_after_enter_plan_mode_is_already_denied(
        workspace: Path, tmp_path: Path) -> None:
    """The executor runs EnterPlanMode alone, and its change holds before
    the next call is even classified."""
    session = open_session(workspace, tmp_path, approver=Answer(True), allow=("Write",))

    async def go() -> list[ToolResultMessage]:
        executor = session.executor()
        executor.add(ToolUse("toolu_1", "EnterPlanMode", {}))
        executor.add(ToolUse("toolu_2", "Write", {"file_path": str(workspace / "w.txt"),
                                                 "content": "x"}))
        return await executor.results()

    entered, wrote = asyncio.run(go())
    assert not entered.is_error and wrote.is_error and "(rule plan)" in wrote.text
    assert not (workspace / "w.txt").exists()


def test_entering_plan_mode_twice_says_so_and_keeps_the_mode_to_go_back_to(
        workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path, mode="acceptEdits")
    session.context.mode = "acceptEdits"  # the session's own, as a client's switch sets it
    run(session, "EnterPlanMode")
    again = run(session, "EnterPlanMode")
    assert not again.is_error and again.text.startswith("Already in plan mode")
    assert (session.context.mode, session.context.mode_before) == ("plan", "acceptEdits")


# -- leaving ---------------------------------------------------------------------

def test_an_approved_plan_restores_the_mode_and_a_write_then_runs(
        workspace: Path, tmp_path: Path) -> None:
    approver = Answer(True)
    session = open_session(workspace, tmp_path, approver=approver, allow=("Write",))
    run(session, "EnterPlanMode")
    result = run(session, "ExitPlanMode", {"plan": PLAN})
    assert not result.is_error, result.text
    assert result.text.startswith(APPROVED) and "## Approved Plan:\n" + PLAN in result.text
    assert "plan → the settings' mode" in result.text
    assert session.context.mode is None and session.context.mode_before is None
    assert [r.tool_name for r in approver.asked] == ["ExitPlanMode"]
    assert approver.asked[0].input == {"plan": PLAN}  # the person sees the whole plan
    assert decided(session)[-1]["source"] == "approver"

    assert not write(session, workspace / "after.txt").is_error
    assert (workspace / "after.txt").read_text() == "x\n"


def test_a_refused_plan_keeps_the_session_in_plan_mode_and_says_to_keep_planning(
        workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path, approver=Answer(False), allow=("Write",))
    run(session, "EnterPlanMode")
    result = run(session, "ExitPlanMode", {"plan": PLAN})
    assert result.is_error and "refused by the user" in result.text.lower()
    assert "still in plan mode" in result.text and "keep planning" in result.text
    assert session.context.mode == "plan"
    assert write(session, workspace / "after.txt").is_error


def test_with_nobody_to_answer_exit_plan_mode_is_denied_and_says_why(
        workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path)
    run(session, "EnterPlanMode")
    result = run(session, "ExitPlanMode", {"plan": PLAN})
    assert result.is_error and "nobody can answer" in result.text
    assert session.context.mode == "plan"


@pytest.mark.parametrize(("mode", "allow", "hook"), [
    ("bypassPermissions", (), None),
    ("dontAsk", (), None),
    ("default", ("ExitPlanMode",), None),
    ("default", (), HookOutcome(Decision.ALLOW, "a hook allows every call", "hook")),
])
def test_only_a_person_lets_the_session_leave_plan_mode(
        workspace: Path, tmp_path: Path, mode: str, allow: tuple[str, ...],
        hook: HookOutcome | None) -> None:
    """Bypass mode, an allow rule naming the tool, a hook that allows
    everything: none of them answers for the person."""
    hooks = FixedHooks(hook) if hook is not None else None
    session = open_session(workspace, tmp_path, mode=mode, allow=allow, hooks=hooks)
    run(session, "EnterPlanMode")
    result = run(session, "ExitPlanMode", {"plan": PLAN})
    assert result.is_error and "nobody can answer" in result.text, result.text
    assert session.context.mode == "plan"


def test_a_bypass_session_approved_out_of_plan_mode_is_back_in_bypass_mode(
        workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path, mode="bypassPermissions", approver=Answer(True))
    run(session, "EnterPlanMode")
    assert write(session, workspace / "no.txt").is_error
    assert not run(session, "ExitPlanMode", {"plan": PLAN}).is_error
    assert not write(session, workspace / "yes.txt").is_error
    assert decided(session)[-1]["mode"] == "bypassPermissions"


def test_exit_plan_mode_outside_plan_mode_is_an_error_and_asks_nobody(
        workspace: Path, tmp_path: Path) -> None:
    approver = Answer(True)
    session = open_session(workspace, tmp_path, approver=approver)
    result = run(session, "ExitPlanMode", {"plan": PLAN})
    assert result.is_error and "not in plan mode" in result.text
    assert not approver.asked and session.context.mode is None


def test_a_session_started_in_plan_mode_leaves_it_for_the_default_mode(
        workspace: Path, tmp_path: Path) -> None:
    from gateway.permissions.modes import Mode, start_session_mode

    session = open_session(workspace, tmp_path, mode="plan", approver=Answer(True),
                           allow=("Write",))
    start_session_mode(session.context, Mode.PLAN)
    assert write(session, workspace / "no.txt").is_error
    assert run(session, "EnterPlanMode").text.startswith("Already in plan mode")
    assert not run(session, "ExitPlanMode", {"plan": PLAN}).is_error
    assert session.context.mode == "default"
    assert not write(session, workspace / "yes.txt").is_error


@pytest.mark.parametrize("data", [{"plan": ""}, {}, {"plan": PLAN, "allowedPrompts": []}])
def test_exit_plan_mode_needs_a_plan_and_nothing_else(
        workspace: Path, tmp_path: Path, data: dict[str, Any]) -> None:
    session = open_session(workspace, tmp_path, approver=Answer(True))
    run(session, "EnterPlanMode")
    result = run(session, "ExitPlanMode", data)
    assert result.is_error and "InputValidationError" in result.text
    assert session.context.mode == "plan"


def test_enter_plan_mode_takes_no_input(workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path)
    assert run(session, "EnterPlanMode", {"mode": "bypassPermissions"}).is_error
    assert session.context.mode is None
