"""What a hook's run means, in Claude Code's protocol, and what several
hooks of one event mean together.

    exit 0   stdout parsed when it is a JSON object; plain text is context
             for SessionStart and UserPromptSubmit, ignored otherwise
    exit 2   block: stderr is the reason (PreToolUse: deny; PostToolUse:
             feedback to the model; UserPromptSubmit / Stop: block)
    other    a non-blocking error, audited; the call goes on

JSON fields: ``hookSpecificOutput.permissionDecision`` (allow / deny /
ask), ``permissionDecisionReason``, ``updatedInput``, ``additionalContext``;
the older top-level ``decision`` (``approve`` / ``block``) and ``reason``;
``continue: false`` with ``stopReason``. Across hooks the strictest
decision wins (deny > ask > allow); a hook's allow is only an opinion the
decider weighs under the deny and ask rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from values import valueclass

from ..decisions import Decision
from .runner import HookRun

_DECISIONS = {"allow": Decision.ALLOW, "approve": Decision.ALLOW, "ask": Decision.ASK,
              "deny": Decision.DENY, "block": Decision.DENY}
#: what is kept of a reason or context a hook gives (the model reads it)
MAX_TEXT = 10_000


@valueclass
class HookVerdict:
    """One hook run, interpreted."""

    run: HookRun
    decision: Decision | None = None
    reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    context: str = ""
    #: post hooks and prompt hooks: ``decision: "block"`` or exit 2
    block: bool = False
    #: ``continue: false``: the session should stop (its ``stopReason``)
    stop: str | None = None
    #: a non-blocking failure: it crashed, timed out, printed garbage
    error: str | None = None

    @property
    def label(self) -> str:
        hook = self.run.hook
        return f"{hook.event} hook {hook.command!r} ({hook.source or 'settings'})"


def interpret(run: HookRun) -> HookVerdict:
    event = run.hook.event
    if run.refused and event == "PreToolUse":
        # a guard that cannot be trusted to have run never lets the call by
        return HookVerdict(run, Decision.DENY, f"a hook was not run: {run.error}",
                           error=run.error)
    if run.error is not None:
        return HookVerdict(run, error=run.error)
    if run.timed_out:
        return HookVerdict(run, error=f"timed out after {run.hook.timeout_s:g} s; killed")
    if run.exit_code == 2:
        reason = _cut(run.stderr.strip()) or "blocked by a hook (exit 2, nothing on stderr)"
        if event == "PreToolUse":
            return HookVerdict(run, Decision.DENY, reason)
        return HookVerdict(run, reason=reason, block=True)
    if run.exit_code != 0:
        first = run.stderr.strip().splitlines()[:1]
        return HookVerdict(run, error=f"exited {run.exit_code}"
                           + (f": {_cut(first[0], 300)}" if first else ""))
    text = run.stdout.strip()
    if not text.startswith("{"):
        if text and event in ("SessionStart", "UserPromptSubmit"):
            return HookVerdict(run, context=_cut(text))
        return HookVerdict(run)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return HookVerdict(run, error="printed output that starts like JSON but is not JSON")
    if not isinstance(data, dict):
        return HookVerdict(run, error="printed JSON that is not an object")
    return _from_json(run, data)


def _from_json(run: HookRun, data: dict[str, Any]) -> HookVerdict:
    event = run.hook.event
    problems: list[str] = []
    specific = data.get("hookSpecificOutput") or {}
    if not isinstance(specific, dict):
        problems.append("hookSpecificOutput is not an object")
        specific = {}
    named = specific.get("hookEventName")
    if named is not None and named != event:
        problems.append(f"hookSpecificOutput is for {named!r}, not {event}")
        specific = {}
    stop = None
    if data.get("continue") is False:
        stop = _cut(str(data.get("stopReason") or "a hook stopped the session"))
    decision: Decision | None = None
    reason = ""
    block = False
    raw = specific.get("permissionDecision") if event == "PreToolUse" else None
    if raw is None:
        raw = data.get("decision")
    if raw is not None:
        if event == "PreToolUse":
            decision = _DECISIONS.get(raw) if isinstance(raw, str) else None
            if decision is None:
                problems.append(f"permissionDecision {raw!r} is not allow, deny or ask")
            reason = _text(specific.get("permissionDecisionReason") or data.get("reason"))
        elif raw == "block":
            block = True
            reason = _text(data.get("reason")) or "blocked by a hook"
        elif raw not in ("approve", None):
            problems.append(f"decision {raw!r} is not \"block\"")
    updated = specific.get("updatedInput") if event == "PreToolUse" else None
    if updated is not None and not isinstance(updated, dict):
        problems.append("updatedInput is not an object; ignored")
        updated = None
    context = _text(specific.get("additionalContext"))
    error = "; ".join(problems) or None
    if error is not None and event == "PreToolUse" and decision is None and raw is not None:
        # it meant to decide and said it unreadably: never taken as silence
        # when what it may have meant was a denial
        decision = Decision.ASK
        reason = f"a hook's answer could not be read ({error})"
    return HookVerdict(run, decision, reason, updated, context, block, stop, error)


@valueclass
class Combined:
    """Every matching hook of one event, together."""

    verdicts: tuple[HookVerdict, ...] = ()
    decision: Decision | None = None
    reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    context: str = ""
    block: bool = False
    stop: str | None = None

    @property
    def errors(self) -> list[str]:
        return [f"{v.label}: {v.error}" for v in self.verdicts if v.error]


def combine(verdicts: Sequence[HookVerdict]) -> Combined:
    """The strictest decision wins, with the reasons of the hooks that gave
    it. Two hooks rewriting the input differently is no rewrite at all but
    a question for a person: neither may silently win."""
    decided = [v for v in verdicts if v.decision is not None]
    decision = max((v.decision for v in decided if v.decision is not None), default=None)
    reason = "; ".join(v.reason for v in decided if v.decision is decision and v.reason)
    rewrites = [v.updated_input for v in verdicts if v.updated_input is not None]
    updated = rewrites[0] if rewrites else None
    if len({json.dumps(r, sort_keys=True, default=str) for r in rewrites}) > 1:
        updated = None
        if decision is None or decision < Decision.ASK:
            decision = Decision.ASK
            reason = "hooks rewrote the input in different ways"
    context = "\n".join(v.context for v in verdicts if v.context)
    blocked = [v for v in verdicts if v.block]
    if blocked:
        reason = "; ".join(v.reason for v in blocked if v.reason) or reason
    stop = next((v.stop for v in verdicts if v.stop is not None), None)
    return Combined(tuple(verdicts), decision, reason, updated, _cut(context), bool(blocked),
                    stop)


def _text(value: Any) -> str:
    return _cut(value) if isinstance(value, str) else ""


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"
