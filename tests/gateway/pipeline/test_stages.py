"""The pipeline's eight stages, one behaviour each, through Pipeline.run
with real tools (a controlled test tool; Bash in the sandbox)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from kit import Answer, FixedHooks, WaitInput, WaitTool, wait_tool

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision, PermissionResult, Validation, invalid, needs_person
from gateway.hooks import HookOutcome
from gateway.messages import ToolResultMessage, ToolUse
from gateway.pipeline import Pipeline
from gateway.tools import AnyTool, build_tool
from gateway.tools.bash import BASH


def _call(session: SessionContext, tools: Sequence[AnyTool], name: str,
          tool_input: Any, **kw: Any) -> ToolResultMessage:
    return asyncio.run(Pipeline(session, tools, **kw).run(ToolUse("toolu_1", name, tool_input)))


def _events(session: SessionContext, kind: str) -> list[dict[str, Any]]:
    return [e for e in session.audit.events if e["event"] == kind]  # type: ignore[attr-defined]


def test_an_unknown_tool_is_an_error_result_naming_the_tools_that_exist(
        session: SessionContext) -> None:
    result = _call(session, [wait_tool(), BASH], "Bsh", {})
    assert result.is_error
    assert "No such tool available: Bsh" in result.text and "Wait" in result.text
    assert "Bash" in result.text


def test_a_deprecated_alias_works_and_says_so(session: SessionContext) -> None:
    result = _call(session, [wait_tool()], "Sleep", {"text": "slept"})
    assert not result.is_error
    assert result.text.startswith("slept") and "Sleep is a deprecated name" in result.text


@pytest.mark.parametrize(("tool_input", "says"), [
    ({"ms": "soon"}, "`ms`"),
    ({"bogus": 1}, "unexpected parameter `bogus`"),
    ([1, 2], "must be a JSON object"),
])
def test_input_that_fails_the_schema_comes_back_inside_tool_use_error(
        session: SessionContext, tool_input: Any, says: str) -> None:
    result = _call(session, [wait_tool()], "Wait", tool_input)
    assert result.is_error and result.text.startswith("<tool_use_error>")
    assert says in result.text


def test_the_schema_coerces_before_the_tool_sees_the_input(session: SessionContext) -> None:
    result = _call(session, [wait_tool()], "Wait", {"ms": "5", "text": "coerced"})
    assert not result.is_error and result.text == "coerced"


class Picky(WaitTool):
    name = "Picky"

    async def validate_input(self, data: WaitInput, ctx: ToolContext) -> Validation:
        if data.text == "bad":
            return invalid("text must not be bad", code=7)
        if data.text == "secret":
            return needs_person("this one needs a person")
        return await super().validate_input(data, ctx)


def test_a_tool_that_finds_its_input_invalid_gives_an_error_result_and_runs_nothing(
        session: SessionContext) -> None:
    tool = build_tool(Picky())
    result = _call(session, [tool], "Picky", {"text": "bad"})
    assert result.is_error and "text must not be bad" in result.text
    assert "toolu_1" not in tool.timeline.spans


def test_a_validation_ask_needs_a_person_even_when_a_hook_allows(
        session: SessionContext) -> None:
    tool = build_tool(Picky())
    hooks = FixedHooks(HookOutcome(Decision.ALLOW, "trusted"))
    result = _call(session, [tool], "Picky", {"text": "secret"}, hooks=hooks)
    assert result.is_error and "needs a person" in result.text and "headless" in result.text
    session.approver = approver = Answer(True)
    result = _call(session, [tool], "Picky", {"text": "secret"}, hooks=hooks)
    assert not result.is_error and len(approver.asked) == 1


def test_an_ask_with_nobody_to_answer_is_a_denial(session: SessionContext) -> None:
    result = _call(session, [wait_tool()], "Wait", {"safe": False})
    assert result.is_error and "denied" in result.text and "nobody can answer" in result.text
    decision = _events(session, "permission.decided")[-1]
    assert decision["decision"] == "deny" and decision["source"] == "default"


@pytest.mark.parametrize(("allow", "ran"), [(True, True), (False, False)])
def test_the_approver_decides_an_ask(session: SessionContext, allow: bool, ran: bool) -> None:
    tool = wait_tool()
    session.approver = approver = Answer(allow)
    result = _call(session, [tool], "Wait", {"safe": False, "text": "wrote"})
    assert ("toolu_1" in tool.timeline.spans) is ran
    assert result.is_error is not ran
    assert approver.asked[0].tool_name == "Wait"
    assert approver.asked[0].permission.decision is Decision.ASK


def test_read_only_calls_are_allowed_without_asking(session: SessionContext) -> None:
    session.approver = approver = Answer(False)
    result = _call(session, [wait_tool()], "Wait", {"text": "read"})
    assert not result.is_error and not approver.asked


@pytest.mark.parametrize(("decision", "is_error"), [(Decision.DENY, True),
                                                    (Decision.ALLOW, False)])
def test_a_pre_tool_hook_decides_before_the_default(
        session: SessionContext, decision: Decision, is_error: bool) -> None:
    hooks = FixedHooks(HookOutcome(decision, "policy script said so"))
    result = _call(session, [wait_tool()], "Wait", {"safe": False}, hooks=hooks)
    assert result.is_error is is_error
    assert hooks.post == ([] if is_error else [("Wait", False)])


class Denier(WaitTool):
    name = "Denier"

    async def check_permissions(self, data: WaitInput, ctx: ToolContext) -> PermissionResult:
        return PermissionResult(Decision.DENY, "tool", "never this", check_ids=(7,),
                                hint="use another path")


def test_a_hook_allow_cannot_lift_the_tools_own_denial(session: SessionContext) -> None:
    hooks = FixedHooks(HookOutcome(Decision.ALLOW, "yes"))
    result = _call(session, [build_tool(Denier())], "Denier", {}, hooks=hooks)
    assert result.is_error
    assert "Never this." in result.text and "#7" in result.text
    assert "Use another path" in result.text


def test_post_hooks_hear_failures_too(session: SessionContext) -> None:
    hooks = FixedHooks(HookOutcome())
    _call(session, [wait_tool()], "Wait", {"fail": True}, hooks=hooks)
    assert hooks.post == [("Wait", True)]


def test_an_exception_in_a_tool_is_an_error_result_and_an_internal_error_event(
        session: SessionContext) -> None:
    result = _call(session, [wait_tool()], "Wait", {"crash": True})
    assert result.is_error and "Error:ENOENT" in result.text
    assert "/secret/path" not in result.text  # the class, never the contents
    event = _events(session, "internal_error")[-1]
    assert event["stage"] == "execute" and event["error"] == "Error:ENOENT"


class Broken(WaitTool):
    name = "Broken"

    async def check_permissions(self, data: WaitInput, ctx: ToolContext) -> PermissionResult:
        raise RuntimeError("bug in the permission code")


def test_a_bug_before_execution_runs_nothing_and_says_so(session: SessionContext) -> None:
    tool = build_tool(Broken())
    result = _call(session, [tool], "Broken", {})
    assert result.is_error and "nothing was run" in result.text
    assert "toolu_1" not in tool.timeline.spans
    assert _events(session, "internal_error")[-1]["stage"] == "permission"


def test_every_call_leaves_its_stages_in_the_audit_trail_with_one_call_id(
        session: SessionContext) -> None:
    _call(session, [wait_tool()], "Wait", {})
    kinds = [(e["event"], e["call_id"]) for e in session.audit.events]  # type: ignore[attr-defined]
    assert [k for k, _ in kinds] == ["tool.requested", "tool.validated", "permission.decided",
                                     "tool.completed"]
    assert len({c for _, c in kinds}) == 1


@pytest.mark.sandbox
def test_bash_through_the_pipeline_runs_a_read_only_command(
        session: SessionContext, workspace: Path) -> None:
    result = _call(session, [BASH], "Bash", {"command": "cat README.md"})
    assert not result.is_error and result.text == "hello"


@pytest.mark.sandbox
def test_bash_denials_name_the_check_and_what_would_change_it(
        session: SessionContext) -> None:
    result = _call(session, [BASH], "Bash", {"command": "cat ~/.ssh/id_rsa"})
    assert result.is_error and "denied" in result.text
    assert "Decided by: analyzer" in result.text
