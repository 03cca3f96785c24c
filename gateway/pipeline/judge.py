"""The first four stages alone: what the gateway *would* decide for a call,
without running it — for ``shellgate hook``, where another program (Claude
Code) executes the call and asks the gateway only for its opinion.

Nothing is asked (no approver) and no hook runs (the caller runs its own):
the result is the decider's answer as it stands, ``ask`` included. Errors
are data here too: an unknown tool, invalid input, or a bug comes back as
a :class:`Judgement` with no permission, never as an exception."""

from __future__ import annotations

import contextlib
from typing import Any

from values import valueclass

from ..decisions import PermissionResult
from ..hooks import NO_OPINION
from ..messages import ToolResultMessage, ToolUse
from ..tools import AnyTool
from . import stages
from .core import Pipeline
from .results import classify_tool_error


@valueclass
class Judgement:
    """The call looked up, validated, prepared and decided — or the error
    that stopped it (``permission`` is then ``None``)."""

    tool: AnyTool | None = None
    data: Any = None
    permission: PermissionResult | None = None
    #: the call only reads (the tool's own declaration for this input)
    read_only: bool = False
    error: str = ""
    #: what the rules saw of the call (Bash's analysis rides on it)
    subject: Any = None
    #: the error is a bug or a broken dependency (the audit log, a stage
    #: that raised), not the call's own fault: a caller that must fail
    #: closed treats it as a failure, never as "invalid input". From a
    #: review: `shellgate hook` took any error for invalid input and gave no
    #: decision, so a Read of ~/.ssh/id_rsa whose permission stage raised
    #: (or whose audit line could not be written) ran in Claude Code.
    internal: bool = False


async def judge(pipeline: Pipeline, use: ToolUse, *, tool_checks: bool = True) -> Judgement:
    """Stages 1-4 of ``use``, audited as a run's are (``tool.requested``,
    ``tool.validated``, ``permission.decided``). Never raises.
    ``tool_checks=False`` skips the tool's own validation after the
    schema's: Edit's "read it first" concerns this gateway's session, not
    the caller's (the path's policy and the rules are still judged)."""
    ctx = pipeline.context(use)
    stage = "lookup"
    try:
        stages.audit(ctx, "tool.requested", tool=use.name, input=stages.logged_input(use))
        found = stages.lookup(pipeline.pool, use, pipeline.session.selected_tools)
        if isinstance(found, ToolResultMessage):
            return Judgement(error=found.text)
        tool = found.tool
        stage = "validate"
        checked = await (stages.validate(tool, use, ctx) if tool_checks
                         else stages.validate_schema(tool, use))
        if isinstance(checked, ToolResultMessage):
            stages.audit(ctx, "tool.validated", tool=tool.name, ok=False,
                         error=checked.text[:500])
            return Judgement(tool, error=checked.text)
        data, validation = checked
        stages.audit(ctx, "tool.validated", tool=tool.name, ok=True,
                     ask=validation.ask or None)
        stage = "prepare"
        await tool.prepare(data, ctx)
        stage = "permission"
        own = await tool.check_permissions(data, ctx)
        ctx.subject = tool.permission_matcher(data, ctx)
        result = await pipeline.decider.decide(tool, data, ctx, own, NO_OPINION, validation)
        stages.record_decision(tool, data, ctx, result)
        return Judgement(tool, data, result, tool.is_read_only(data, ctx),
                         subject=ctx.subject)
    except Exception as exc:
        from sandbox import PolicyError  # noqa: PLC0415 - loaded by now if it was raised

        kind = classify_tool_error(exc)
        with contextlib.suppress(Exception):
            stages.audit(ctx, "internal_error", tool=use.name, stage=stage, error=kind)
        if isinstance(exc, PolicyError):
            # the sandbox refuses this session's paths (a workspace in /tmp):
            # its own words say what to change
            return Judgement(error=f"the sandbox cannot be set up here: {exc}", internal=True)
        return Judgement(error=f"internal error in the {stage} stage ({kind})", internal=True)
