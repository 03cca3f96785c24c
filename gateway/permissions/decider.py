"""The decision chain of stage 4.

    hook deny · the tool's deny (hard limits, sensitive and protected paths,
    the sandbox's policy) · deny rules · plan mode (the session's own mode
    over the settings'; it runs read-only tools, and ExitPlanMode)
        → deny, and nothing lifts it
    ask rules · an ask only a person may answer (a dotenv file, running
    without the sandbox)
        → ask, and no hook, rule or mode lifts it
    hook allow · bypassPermissions
        → allow
    allow rules · what the tool itself allows · acceptEdits · the sandbox's
    auto-allow for Bash
        → allow
    dontAsk → deny; otherwise → ask (the session's approver, or headless deny)

Rules are matched in the order deny, ask, allow over every source at once;
the strictest answer wins (``Decision`` is ordered). Every answer names its
source and rule. Hooks (the next layer) come in through ``hook``.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

from values import replace

from ..context import ApprovalRequest, ToolContext
from ..decisions import Decision, PermissionResult, Validation
from ..hooks import HookOutcome
from ..pathnames import answers_file
from ..tools import AnyTool
from .denials import DenialTracker, denial_key
from .match import Matcher
from .merge import PermissionSettings
from .modes import Mode, plan_exempt, session_mode
from .persist import save_allow_rule
from .rules import Rule, parse_rule
from .settings import Source


class PermissionDecider(Protocol):
    async def decide(self, tool: AnyTool, data: Any, ctx: ToolContext,
                     own: PermissionResult, hook: HookOutcome,
                     validation: Validation) -> PermissionResult: ...

    async def resolve(self, result: PermissionResult, request: ApprovalRequest,
                      ctx: ToolContext) -> PermissionResult: ...

    def settle(self, tool_name: str, values: tuple[str, ...],
               result: PermissionResult) -> PermissionResult: ...


class RulesDecider:
    """Settings, rules and the mode over the tool's own answer."""

    def __init__(self, settings: PermissionSettings | None = None) -> None:
        self.settings = settings or PermissionSettings()
        self.denials = DenialTracker()

    @property
    def mode(self) -> Mode:
        """The settings' mode (a session may hold its own: :meth:`mode_of`)."""
        return self.settings.mode

    def mode_of(self, ctx: ToolContext) -> Mode:
        """The mode a call is decided in: the session's own (EnterPlanMode
        switched it) over the settings' one."""
        own = session_mode(ctx.session.mode)
        return own if own is not None else self.settings.mode

    async def resolve(self, result: PermissionResult, request: ApprovalRequest,
                      ctx: ToolContext) -> PermissionResult:
        """Put an ``ask`` to the session's approver. Nobody to answer (a
        headless run) is a denial that says so, and names the rule that
        would allow the call. "Always" adds the suggested rule to the
        session and to the project's local settings file."""
        if result.decision is not Decision.ASK:
            return result
        approver = ctx.session.approver
        if approver is None:
            would = ("" if result.needs_person or not result.suggestions
                     else f"; the allow rule {result.suggestions[0]} would let it run")
            return replace(result, decision=Decision.DENY, reason=f"{result.reason.rstrip('.')};"
                           f" it needs approval and nobody can answer (headless){would}")
        answer = await approver(request)
        if not answer:
            return replace(result, decision=Decision.DENY, source="approver",
                           reason=f"refused by the user: {result.reason}")
        if answer == "always" and result.suggestions and not result.needs_person:
            return self._remember(result, ctx)
        return replace(result, decision=Decision.ALLOW, source="approver",
                       reason=f"approved once: {result.reason}")

    def _remember(self, result: PermissionResult, ctx: ToolContext) -> PermissionResult:
        """Every suggested rule (one per subcommand that needed one) into
        the session and the project's answers file (read as the user's)."""
        where = ""
        session = ctx.session
        path = answers_file(session.workspace, session.env or os.environ, session.home)
        for rule_text in result.suggestions:
            try:
                where = save_allow_rule(path, rule_text, session.workspace)
            except (OSError, ValueError) as exc:
                where = f"this session only (the settings file was not changed: {exc})"
            got = parse_rule(rule_text, "allow", Source.SESSION, where, ctx.session.workspace)
            if isinstance(got, Rule):
                self.settings = self.settings.with_rule(got)
        rules = ", ".join(result.suggestions)
        return replace(result, decision=Decision.ALLOW, source="approver", rule=rules,
                       reason=f"approved, and {rules} saved in {where}: {result.reason}")

    def settle(self, tool_name: str, values: tuple[str, ...],
               result: PermissionResult) -> PermissionResult:
        """Count a denial; past the threshold the result tells the model to
        change course (an allow starts the count again)."""
        key = denial_key(tool_name, values)
        if result.decision is Decision.ALLOW:
            self.denials.allowed(key)
            return result
        if result.decision is not Decision.DENY:
            return result
        advice = self.denials.advice(key, self.denials.denied(key))
        if not advice:
            return result
        return replace(result, hint=f"{result.hint.rstrip('.')}. {advice}" if result.hint
                       else advice)

    async def decide(self, tool: AnyTool, data: Any, ctx: ToolContext,
                     own: PermissionResult, hook: HookOutcome,
                     validation: Validation) -> PermissionResult:
        result = self.evaluate(tool, data, ctx, own, hook, validation)
        return replace(result, mode=str(self.mode_of(ctx)))

    def evaluate(self, tool: AnyTool, data: Any, ctx: ToolContext, own: PermissionResult,
                 hook: HookOutcome, validation: Validation) -> PermissionResult:
        mode = self.mode_of(ctx)
        if own.decision is Decision.DENY:
            return own
        if hook.decision is Decision.DENY:
            return PermissionResult(Decision.DENY, hook.source, hook.reason or "a hook denied it")
        match = Matcher(self.settings, tool, data, ctx)
        config = match.agent_config()
        if config is not None:
            return PermissionResult(
                Decision.DENY, "sandbox", f"{config}: agent settings, which a session started "
                "in that directory would obey", check_ids=own.check_ids,
                hint="a person edits agent settings; no rule or mode changes that")
        denied = match.strict("deny")
        if denied is not None:
            return _by_rule(Decision.DENY, *denied, own)
        if mode is Mode.PLAN and not tool.is_read_only(data, ctx) and \
                not plan_exempt(tool, match.subject):
            return PermissionResult(
                Decision.DENY, "mode", "plan mode runs read-only tools only", rule="plan",
                check_ids=own.check_ids, warnings=own.warnings,
                hint=_PLAN_HINT_SESSION if ctx.session.mode is not None else _PLAN_HINT)
        asked = match.strict("ask")
        if asked is not None:
            return _by_rule(Decision.ASK, *asked, own)
        unchecked = match.unprovable()
        if unchecked is not None:
            return PermissionResult(Decision.ASK, "rules", unchecked, check_ids=own.check_ids,
                                    warnings=own.warnings, needs_person=True)
        reached = match.reach()
        if reached is not None:
            rule, what, decision = reached
            return PermissionResult(
                decision, rule.source.label, f"the {rule.behavior} rule {rule.text} may match "
                f"{what}", rule=rule.text, check_ids=own.check_ids, warnings=own.warnings,
                needs_person=True, hint=f"the rule is in {rule.origin}")
        if validation.ask or own.needs_person:
            return _person(own, validation)
        allowed = self._allowed(match, own, hook, mode)
        if allowed is not None:
            guard = None
            if own.decision is not Decision.ALLOW:
                if match.broad or hook.decision is Decision.ALLOW or mode is Mode.BYPASS:
                    guard = match.broad_guard()
                else:
                    hit = match.mention()
                    guard = (hit, "the command holds the rule's words in a form the rule does "
                             "not match") if hit is not None else None
            if guard is None:
                return replace(allowed, check_ids=own.check_ids, warnings=own.warnings)
            rule, why = guard
            return PermissionResult(
                Decision.ASK, rule.source.label, f"{why} (the {rule.behavior} rule {rule.text}; "
                f"allowed otherwise by {allowed.rule or allowed.source})", rule=rule.text,
                check_ids=own.check_ids, warnings=own.warnings, needs_person=True,
                hint=f"the rule is in {rule.origin}; a person decides")
        if hook.decision is Decision.ASK or own.decision is Decision.ASK:
            result = own if own.decision is Decision.ASK else PermissionResult(
                Decision.ASK, hook.source, hook.reason or "a hook asks")
        else:
            result = PermissionResult(
                Decision.ASK, "default", f"{tool.name} may change things and no rule allows it",
                check_ids=own.check_ids, warnings=own.warnings, suggestions=own.suggestions,
                hint=own.hint)
        result = match.explain_ask(result)
        if mode is Mode.DONT_ASK:
            return PermissionResult(
                Decision.DENY, "mode", f"dontAsk mode: not allowed beforehand ({result.reason})",
                rule="dontAsk", check_ids=result.check_ids, warnings=result.warnings,
                suggestions=result.suggestions,
                hint=_allow_hint(result) or "an allow rule for it would change this")
        return result


    @staticmethod
    def _allowed(match: Matcher, own: PermissionResult, hook: HookOutcome,
                 mode: Mode) -> PermissionResult | None:
        """What would allow the call: a hook, bypass mode, a rule, the tool
        itself, acceptEdits or the sandbox (``None``: nothing)."""
        if hook.decision is Decision.ALLOW:
            return PermissionResult(Decision.ALLOW, hook.source, hook.reason or "a hook allowed it")
        if mode is Mode.BYPASS:
            return PermissionResult(Decision.ALLOW, "mode", "bypassPermissions mode",
                                    rule="bypassPermissions")
        return match.allowed(own, mode)


def _by_rule(decision: Decision, rule: Rule, what: str,
             own: PermissionResult) -> PermissionResult:
    """A deny or ask rule's answer, naming the rule, its source and file."""
    if decision is Decision.DENY:
        return PermissionResult(
            decision, rule.source.label, f"a deny rule matches {what}", rule=rule.text,
            check_ids=own.check_ids, hint=f"the rule is in {rule.origin}; removing it would "
            "change this")
    return PermissionResult(
        decision, rule.source.label, f"an ask rule matches {what}", rule=rule.text,
        check_ids=own.check_ids, warnings=own.warnings, needs_person=True,
        hint=f"the rule is in {rule.origin}")


def _person(own: PermissionResult, validation: Validation) -> PermissionResult:
    """An ask only a person can answer, with the tool's reasons joined."""
    reason = validation.message if validation.ask else own.reason
    if validation.ask and own.decision is Decision.ASK and own.reason not in reason:
        reason = own.reason if validation.message in own.reason else \
            f"{validation.message}; {own.reason}"
    return PermissionResult(Decision.ASK, "tool" if validation.ask else own.source, reason,
                            rule=own.rule, check_ids=own.check_ids, warnings=own.warnings,
                            hint=own.hint, needs_person=True)


_PLAN_HINT = "leave plan mode (--permission-mode default) to make changes"
_PLAN_HINT_SESSION = ("present the plan with ExitPlanMode; once the user approves it, "
                      "changes can be made")


def _allow_hint(result: PermissionResult) -> str:
    if result.suggestions:
        return f"an allow rule such as {result.suggestions[0]} would change this"
    return ""


#: the fail-closed stand-in of the tool-system issue, now the same chain
#: with no settings: read-only allows, the rest asks
DefaultDecider = RulesDecider
