"""EnterPlanMode and ExitPlanMode: the session's own switch into plan mode
and, with the user's approval of a plan, back out.

In plan mode only read-only tools run: the decider holds the session's
mode (``SessionContext.mode``) over the settings' one, and denies any call
that may change something. Entering asks nobody — it only takes rights
away. Leaving gives them back, so it is an ``ask`` only a person may
answer (``needs_person``): no rule, hook or mode lifts it, and a session
with nobody to answer stays in plan mode. ExitPlanMode is the one tool
plan mode runs although it is not read-only; it declares so in its class
(:class:`PlanModeExempt`).

Both changes go through the result's context modifier: the executor runs
these tools alone, and the change holds before the next call starts. The
audit trail of a switch is the call's own events (``permission.decided``
with the approver's answer, ``tool.completed``); the result says which
mode the session went from and to."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..context import SessionContext, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid
from ..messages import ContextModifier, ProgressCallback, ToolResult
from .base import BaseTool, Subject, build_tool
from .session_tools import PlanModeExempt, SessionTool

PLAN = "plan"
MAX_PLAN_CHARS = 100_000

ENTERED = (
    "Entered plan mode. Focus now on exploring the codebase and designing an implementation "
    "approach:\n"
    "1. Explore the code to understand its existing patterns\n"
    "2. Find similar features and the architecture they follow\n"
    "3. Weigh the possible approaches and their trade-offs\n"
    "4. Ask the user with AskUserQuestion where the approach is unclear\n"
    "5. Design a concrete implementation strategy\n"
    "6. When ready, present the plan for approval with ExitPlanMode\n\n"
    "Only read-only tools run in plan mode: no file is written and no command that changes "
    "anything runs until the user approves the plan.")
ALREADY = ("Already in plan mode: nothing changed. Keep exploring with read-only tools, and "
           "present the plan with ExitPlanMode when it is ready.")
#: the reference's answer, word for word: models know what it asks of them
APPROVED = ("User has approved your plan. You can now start coding. Start with updating your "
            "todo list if applicable")
KEEP_PLANNING = ("you are still in plan mode: keep planning with read-only tools (ask the user "
                 "with AskUserQuestion what to change), then call ExitPlanMode again with a "
                 "revised plan")


class EnterPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExitPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: str = Field(min_length=1, max_length=MAX_PLAN_CHARS, description=(
        "The plan to put to the user for approval, in markdown: concise, concrete steps"))


def _mode_name(mode: str | None) -> str:
    return mode if mode is not None else "the settings' mode"


def _enter(session: SessionContext) -> None:
    if session.mode != PLAN:
        session.mode_before, session.mode = session.mode, PLAN


def _leave(session: SessionContext) -> None:
    if session.mode == PLAN:
        session.mode, session.mode_before = session.mode_before, None


class EnterPlanModeTool(SessionTool[EnterPlanModeInput]):
    name: ClassVar[str] = "EnterPlanMode"
    input_model = EnterPlanModeInput
    search_hint: ClassVar[str] = "plan mode explore design before coding read-only"

    def description(self, data: EnterPlanModeInput | None = None) -> str:
        return ("Switch the session to plan mode before a non-trivial change: explore and "
                "design first, with read-only tools only, then present the plan with "
                "ExitPlanMode for the user's approval. Use it when the task has several "
                "possible approaches, touches many files, or its requirements are unclear.")

    def activity_description(self, data: EnterPlanModeInput, cwd: str = "") -> str:
        return "Entering plan mode"

    async def call(self, data: EnterPlanModeInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        session = ctx.session
        if session.mode == PLAN:
            return ToolResult(ALREADY)
        note = (f"\n\n(Permission mode: {_mode_name(session.mode)} → plan; this call's audit "
                "events record the switch.)")
        modifier: ContextModifier = _enter
        return ToolResult(ENTERED + note, context_modifier=modifier)


class ExitPlanModeTool(PlanModeExempt, BaseTool[ExitPlanModeInput]):
    """Not read-only, not concurrency-safe (the defaults): it gives the
    session back the right to change things, once a person says yes."""

    name: ClassVar[str] = "ExitPlanMode"
    input_model = ExitPlanModeInput
    search_hint: ClassVar[str] = "present plan approval leave plan mode start coding"

    def description(self, data: ExitPlanModeInput | None = None) -> str:
        return ("In plan mode, when the plan is complete: present it to the user for "
                "approval. Approved, the session leaves plan mode and the work can start; "
                "refused, it stays in plan mode to revise the plan. Only for a plan of "
                "changes to make — not for research or questions (use AskUserQuestion).")

    def activity_description(self, data: ExitPlanModeInput, cwd: str = "") -> str:
        return "Presenting the plan"

    def summary(self, data: ExitPlanModeInput, cwd: str = "") -> str:
        first = next((line.strip() for line in data.plan.splitlines() if line.strip()), "")
        return first[:80]

    def permission_matcher(self, data: ExitPlanModeInput, ctx: ToolContext) -> Subject:
        return Subject("none")

    async def validate_input(self, data: ExitPlanModeInput, ctx: ToolContext) -> Validation:
        if ctx.session.mode != PLAN:
            return invalid("ExitPlanMode: not in plan mode. It presents a plan made in plan "
                           "mode (EnterPlanMode); outside it, go on with the work", code=1)
        return VALID

    async def check_permissions(self, data: ExitPlanModeInput,
                                ctx: ToolContext) -> PermissionResult:
        return PermissionResult(Decision.ASK, "tool", "leaving plan mode needs the user's "
                                "approval of the plan", needs_person=True, hint=KEEP_PLANNING)

    async def call(self, data: ExitPlanModeInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        session = ctx.session
        if session.mode != PLAN:  # left meanwhile (an earlier call of the same batch)
            return ToolResult("ExitPlanMode: the session is no longer in plan mode; nothing "
                              "changed", is_error=True)
        note = (f"(Permission mode: plan → {_mode_name(session.mode_before)}; this call's "
                "audit events record the user's approval.)")
        modifier: ContextModifier = _leave
        return ToolResult(f"{APPROVED}\n\n## Approved Plan:\n{data.plan}\n\n{note}",
                          context_modifier=modifier)


ENTER_PLAN_MODE = build_tool(EnterPlanModeTool())
EXIT_PLAN_MODE = build_tool(ExitPlanModeTool())
