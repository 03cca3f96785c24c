"""The decision chain of stage 4, fail-closed: a hook's deny or the tool's
own deny ends it; a hook's allow cannot lift the tool's deny (the
filesystem policy, the analyzer's hard limits hold in every mode); a call
whose input is not read-only is asked about, whatever the tool said."""

from __future__ import annotations

from typing import Any, Protocol

from ..context import ApprovalRequest, ToolContext
from ..decisions import Decision, PermissionResult, Validation
from ..hooks import HookOutcome
from ..tools import AnyTool


class PermissionDecider(Protocol):
    async def decide(self, tool: AnyTool, data: Any, ctx: ToolContext,
                     own: PermissionResult, hook: HookOutcome,
                     validation: Validation) -> PermissionResult: ...


class DefaultDecider:
    """Hook > the tool's check > read-only allows > ask."""

    async def decide(self, tool: AnyTool, data: Any, ctx: ToolContext,
                     own: PermissionResult, hook: HookOutcome,
                     validation: Validation) -> PermissionResult:
        if own.decision is Decision.DENY:
            return own
        if hook.decision is Decision.DENY:
            return PermissionResult(Decision.DENY, hook.source, hook.reason or "a hook denied it")
        if validation.ask:
            # the tool says a person must see it (a dotenv file, the sandbox
            # switched off): no hook or rule can allow it
            reason = validation.message
            if own.decision is Decision.ASK and own.reason not in reason:
                reason = own.reason if validation.message in own.reason else \
                    f"{validation.message}; {own.reason}"
            return PermissionResult(Decision.ASK, "tool", reason, rule=own.rule,
                                    check_ids=own.check_ids, warnings=own.warnings,
                                    hint=own.hint)
        if hook.decision is Decision.ALLOW:
            return PermissionResult(Decision.ALLOW, hook.source, hook.reason or "a hook allowed it")
        if hook.decision is Decision.ASK or own.decision is Decision.ASK:
            return own if own.decision is Decision.ASK else PermissionResult(
                Decision.ASK, hook.source, hook.reason or "a hook asks")
        if tool.is_read_only(data, ctx):
            return own
        return PermissionResult(
            Decision.ASK, "default", f"{tool.name} may change things and no rule allows it",
            check_ids=own.check_ids, warnings=own.warnings, suggestions=own.suggestions,
            hint=own.hint or "approve it, or add an allow rule (permissions issue)")


async def resolve_ask(result: PermissionResult, request: ApprovalRequest,
                      ctx: ToolContext) -> PermissionResult:
    """Put an ``ask`` to the session's approver. Nobody to answer (a
    headless run) is a denial that says so."""
    if result.decision is not Decision.ASK:
        return result
    approver = ctx.session.approver
    if approver is None:
        return PermissionResult(
            Decision.DENY, result.source, f"{result.reason.rstrip('.')}; it needs approval and "
            "nobody can answer (headless)", rule=result.rule, check_ids=result.check_ids,
            hint=result.hint, suggestions=result.suggestions, warnings=result.warnings)
    if await approver(request):
        return PermissionResult(Decision.ALLOW, "approver", f"approved: {result.reason}",
                                rule=result.rule, check_ids=result.check_ids)
    return PermissionResult(Decision.DENY, "approver", f"refused by the user: {result.reason}",
                            rule=result.rule, check_ids=result.check_ids, hint=result.hint)
