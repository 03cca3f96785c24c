"""The eight stages of one tool call, one function each. Each returns a
value or a finished error result; none raises for anything a caller or a
model can cause (the pipeline turns the rest into ``internal_error``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence, Set
from typing import Any

from pydantic import ValidationError

from ..context import ApprovalRequest, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation
from ..hooks import HookOutcome, Hooks
from ..messages import (
    ProgressCallback,
    TextBlock,
    ToolResult,
    ToolResultMessage,
    ToolUse,
    blocks_chars,
)
from ..permissions import PermissionDecider
from ..tools import AnyTool
from ..tools.registry import Found, find_tool, held_back, offered_tools
from .results import limit_result, tool_error


def error_result(use: ToolUse, message: str) -> ToolResultMessage:
    return ToolResultMessage(use.id, (TextBlock(tool_error(message)),), is_error=True)


# 1 ----------------------------------------------------------------------
def lookup(pool: Sequence[AnyTool], use: ToolUse,
           selected: Set[str] = frozenset()) -> Found | ToolResultMessage:
    """The tool by name or alias, among what the session offers now: a
    deferred tool ToolSearch has not selected (``selected``: the session's
    selection) is refused with the way to select it."""
    found = find_tool(pool, use.name)
    if found is not None and held_back(pool, found.tool, selected):
        name = found.tool.name
        return error_result(use, f"{name} is a deferred tool and is not loaded yet: call "
                            f'ToolSearch with query "select:{name}" first, then call {name}')
    if found is None:
        names = ", ".join(t.name for t in offered_tools(pool, selected))
        return error_result(use, f"No such tool available: {use.name}. Tools: {names}")
    return found


# 2 ----------------------------------------------------------------------
async def validate(tool: AnyTool, use: ToolUse, ctx: ToolContext
                   ) -> tuple[Any, Validation] | ToolResultMessage:
    """Schema first (pydantic, with its coercions), then the tool's own
    check, which may answer "invalid" or "ask"."""
    if not isinstance(use.input, Mapping):
        return error_result(use, f"{tool.name}: the input must be a JSON object")
    try:
        data = tool.input_model.model_validate(dict(use.input))
    except ValidationError as exc:
        return error_result(use, f"InputValidationError: {tool.name} failed due to the "
                            f"following issue(s):\n{format_validation_error(exc)}")
    validation = await tool.validate_input(data, ctx)
    if not validation.ok and not validation.ask:
        return error_result(use, validation.message)
    return data, validation


async def validate_schema(tool: AnyTool, use: ToolUse
                          ) -> tuple[Any, Validation] | ToolResultMessage:
    """The schema alone (``shellgate hook``: the caller's session, not this
    one, knows what was read)."""
    if not isinstance(use.input, Mapping):
        return error_result(use, f"{tool.name}: the input must be a JSON object")
    try:
        return tool.input_model.model_validate(dict(use.input)), VALID
    except ValidationError as exc:
        return error_result(use, f"InputValidationError: {tool.name} failed due to the "
                            f"following issue(s):\n{format_validation_error(exc)}")


def format_validation_error(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors(include_url=False)[:10]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "input"
        kind = err.get("type", "")
        if kind == "missing":
            lines.append(f"The required parameter `{where}` is missing")
        elif kind == "extra_forbidden":
            lines.append(f"An unexpected parameter `{where}` was provided")
        else:
            lines.append(f"The parameter `{where}`: {err.get('msg', 'is invalid')}")
    return "\n".join(lines)


# 3 ----------------------------------------------------------------------
async def prepare(tool: AnyTool, data: Any, use: ToolUse, ctx: ToolContext,
                  hooks: Hooks) -> HookOutcome:
    """The pre-tool hooks and the tool's own preparation (Bash's analysis)
    at the same time. Hooks see the input with its paths made absolute, as
    Claude Code gives it to them."""
    outcome, _ = await asyncio.gather(
        hooks.pre_tool_use(tool.name, tool.display_input(data, ctx), ctx),
        tool.prepare(data, ctx))
    return outcome


async def rewrite(tool: AnyTool, use: ToolUse, hook: HookOutcome, ctx: ToolContext
                  ) -> tuple[Any, Validation] | ToolResultMessage:
    """A hook's ``updatedInput``: the call goes on with it — validated,
    prepared (Bash analyzes the new command) and decided as if the model
    had sent it, so a hook's rewrite can never carry a command past the
    analyzer or the rules. Audited, since the log's ``tool.requested``
    shows what the model asked, not what ran."""
    assert hook.updated_input is not None
    audit(ctx, "hook.input_updated", tool=tool.name, input=dict(hook.updated_input))
    changed = ToolUse(use.id, use.name, hook.updated_input)
    checked = await validate(tool, changed, ctx)
    if isinstance(checked, ToolResultMessage):
        return error_result(use, f"A hook rewrote the input into one {tool.name} cannot take: "
                            f"{checked.text}")
    if ctx.concurrent and not tool.is_concurrency_safe(checked[0], ctx):
        # the batch started it beside others as the model's (safe) input;
        # a rewrite that must run alone (`ls` into `cd sub && make`) would
        # run in parallel with them, its cd dropped: refused, not raced
        return error_result(use, f"A hook rewrote a call that runs beside others into one "
                            f"{tool.name} must run alone; nothing was run (send it by itself)")
    await tool.prepare(checked[0], ctx)
    return checked


def with_hook_text(message: ToolResultMessage, *texts: str) -> ToolResultMessage:
    """Context and feedback the hooks give the model, after the result."""
    blocks = tuple(TextBlock(t) for t in texts if t)
    if not blocks:
        return message
    return ToolResultMessage(message.tool_use_id, (*message.content, *blocks), message.is_error)


# 4 ----------------------------------------------------------------------
async def permit(tool: AnyTool, data: Any, ctx: ToolContext, decider: PermissionDecider,
                 hook: HookOutcome, validation: Validation) -> PermissionResult:
    own = await tool.check_permissions(data, ctx)
    ctx.subject = tool.permission_matcher(data, ctx)
    result = await decider.decide(tool, data, ctx, own, hook, validation)
    if result.decision is Decision.ASK:
        request = ApprovalRequest(tool.name, tool.display_input(data, ctx),
                                  tool.summary(data, ctx.session.cwd), result)
        result = await decider.resolve(result, request, ctx)
    return decider.settle(tool.name, ctx.subject.values, result)


def denied(use: ToolUse, tool: AnyTool, result: PermissionResult) -> ToolResultMessage:
    return ToolResultMessage(use.id, (TextBlock(
        f"Permission to use {tool.name} was denied. {result.explain()}"),), is_error=True)


# 5 ----------------------------------------------------------------------
async def execute(tool: AnyTool, data: Any, ctx: ToolContext,
                  on_progress: ProgressCallback) -> ToolResult:
    return await tool.call(data, ctx, on_progress)


# 6 ----------------------------------------------------------------------
def map_result(tool: AnyTool, result: ToolResult, use: ToolUse, ctx: ToolContext,
               found: Found) -> ToolResultMessage:
    message = tool.map_result(result, use.id)
    if found.deprecated_alias is not None:
        note = TextBlock(f"Note: {found.deprecated_alias} is a deprecated name; "
                         f"call {tool.name} instead.")
        message = ToolResultMessage(message.tool_use_id, (*message.content, note),
                                    message.is_error)
    limited = limit_result(message, tool.max_result_size_chars, ctx.session)
    ctx.truncated = limited is not message
    return limited


# 7 ----------------------------------------------------------------------
async def post_hooks(tool: AnyTool, data: Any, message: ToolResultMessage,
                     ctx: ToolContext, hooks: Hooks) -> ToolResultMessage:
    """PostToolUse (or PostToolUseFailure): a hook's block reason and
    context reach the model after the result; ``continue: false`` asks the
    session to stop."""
    outcome = await hooks.post_tool_use(tool.name, tool.display_input(data, ctx), message, ctx)
    if outcome is None:
        return message
    if outcome.stop is not None:
        ctx.session.stop_reason = outcome.stop
    return with_hook_text(
        message, f"PostToolUse hook feedback: {outcome.feedback}" if outcome.feedback else "",
        f"<system-reminder>{outcome.context}</system-reminder>" if outcome.context else "",
        f"A hook stopped the session: {outcome.stop}" if outcome.stop else "")


# 8 ----------------------------------------------------------------------
def emit(use: ToolUse, message: ToolResultMessage, ctx: ToolContext, started: float,
         outcome: str) -> ToolResultMessage:
    audit(ctx, "tool.completed", tool=use.name, outcome=outcome, is_error=message.is_error,
          exit_code=ctx.exit_code, duration_ms=round((time.perf_counter() - started) * 1000, 3),
          bytes=blocks_chars(message.content), truncated=ctx.truncated or None)
    return message


# the audit trail --------------------------------------------------------
def audit(ctx: ToolContext, event: str, **fields: Any) -> None:
    """One event with the call's ids (the sink redacts and chains it)."""
    ctx.session.audit.emit(event, session_id=ctx.session.session_id, call_id=ctx.call_id,
                           tool_use_id=ctx.tool_use_id, **fields)


def logged_input(use: ToolUse) -> Any:
    """The input as the model sent it (the sink redacts secrets and cuts
    long values, keeping their hash)."""
    return dict(use.input) if isinstance(use.input, Mapping) else repr(use.input)[:1000]


def record_decision(tool: AnyTool, data: Any, ctx: ToolContext,
                    permission: PermissionResult) -> None:
    subject = ctx.subject if ctx.subject is not None else tool.permission_matcher(data, ctx)
    audit(ctx, "permission.decided", tool=tool.name, decision=str(permission.decision),
          source=permission.source, rule=permission.rule, reason=permission.reason,
          checks=list(permission.check_ids), mode=permission.mode or None,
          hard_limit=permission.reason.startswith("hard limit") or None,
          subject=list(subject.values)[:20])
