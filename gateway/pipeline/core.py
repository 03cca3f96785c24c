"""The pipeline: the stages in order, each failure turned into data."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence

from values import field, valueclass

from ..context import SessionContext, ToolContext
from ..decisions import Decision
from ..hooks import Hooks, NoHooks
from ..messages import Progress, ProgressCallback, ToolResultMessage, ToolUse
from ..permissions import DefaultDecider, PermissionDecider
from ..tools import AnyTool
from . import stages
from .results import classify_tool_error

#: stages after which nothing has run yet
_BEFORE_EXECUTION = frozenset({"lookup", "validate", "prepare", "permission"})


def _ignore(_: Progress) -> None:
    return None


@valueclass(frozen=False, slots=False)
class Pipeline:
    """A session's pipeline: its context, its tool pool, who decides and
    which hooks run."""

    session: SessionContext
    pool: Sequence[AnyTool]
    decider: PermissionDecider = field(default_factory=DefaultDecider)
    hooks: Hooks = field(default_factory=NoHooks)

    def __post_init__(self) -> None:
        # what ToolSearch searches: the pool this session's calls are looked
        # up in (a tool sees its session, never the pipeline)
        self.session.tools = tuple(self.pool)

    def context(self, use: ToolUse) -> ToolContext:
        return ToolContext(self.session, use.id)

    async def run(self, use: ToolUse, on_progress: ProgressCallback = _ignore,
                  ctx: ToolContext | None = None) -> ToolResultMessage:
        """Never raises (a cancellation becomes an "interrupted" result)."""
        ctx = ctx or self.context(use)
        started = time.perf_counter()
        stage = ctx.stage = "lookup"
        try:
            stages.audit(ctx, "tool.requested", tool=use.name, input=stages.logged_input(use))
            if self.session.stop_reason is not None:
                # From a review: `continue: false` set the reason and nothing
                # read it — the next call of the batch (`touch after-stop`)
                # ran. A stopped session runs no further call.
                ctx.outcome = "denied"
                return stages.emit(use, stages.error_result(
                    use, f"The session was stopped by a hook ({self.session.stop_reason}); "
                    "no further tool call runs in it"), ctx, started, ctx.outcome)
            found = stages.lookup(self.pool, use, self.session.selected_tools)
            if isinstance(found, ToolResultMessage):
                ctx.outcome = "unknown-tool"
                return stages.emit(use, found, ctx, started, ctx.outcome)
            tool = found.tool
            stage = ctx.stage = "validate"
            checked = await stages.validate(tool, use, ctx)
            if isinstance(checked, ToolResultMessage):
                ctx.outcome = "invalid"
                stages.audit(ctx, "tool.validated", tool=tool.name, ok=False,
                             error=checked.text[:500])
                return stages.emit(use, checked, ctx, started, ctx.outcome)
            data, validation = checked
            stages.audit(ctx, "tool.validated", tool=tool.name, ok=True,
                         ask=validation.ask or None)
            stage = ctx.stage = "prepare"
            hook = await stages.prepare(tool, data, use, ctx, self.hooks)
            if hook.stop is not None:
                # `continue: false`: the session stops, and this call with it
                self.session.stop_reason = hook.stop
                ctx.outcome = "denied"
                return stages.emit(use, stages.error_result(
                    use, f"A hook stopped the session: {hook.stop}"), ctx, started, ctx.outcome)
            if hook.updated_input is not None:
                rewritten = await stages.rewrite(tool, use, hook, ctx)
                if isinstance(rewritten, ToolResultMessage):
                    ctx.outcome = "invalid"
                    return stages.emit(use, rewritten, ctx, started, ctx.outcome)
                data, validation = rewritten
            stage = ctx.stage = "permission"
            permission = await stages.permit(tool, data, ctx, self.decider, hook, validation)
            # written before anything runs: a log that cannot take it fails
            # the call here ("nothing was run"), never after the fact
            stages.record_decision(tool, data, ctx, permission)
            if permission.decision is not Decision.ALLOW:
                ctx.outcome = "denied"
                return stages.emit(use, stages.denied(use, tool, permission), ctx, started,
                                   ctx.outcome)
            stage = ctx.stage = "execute"
            result = await stages.execute(tool, data, ctx, _relay(use, tool.name, on_progress))
            if result.context_modifier is not None and not ctx.concurrent:
                # a non-safe call runs alone: its change holds before the next starts
                result.context_modifier(self.session)
            stage = ctx.stage = "map"
            message = stages.map_result(tool, result, use, ctx, found)
            ctx.exit_code = getattr(result.data, "exit_code", None)
            ctx.outcome = "error" if message.is_error else "ok"
            stage = ctx.stage = "post-hooks"
            message = await stages.post_hooks(tool, data, message, ctx, self.hooks)
            if hook.context:
                message = stages.with_hook_text(
                    message, f"<system-reminder>{hook.context}</system-reminder>")
            stage = ctx.stage = "emit"
            return stages.emit(use, message, ctx, started, ctx.outcome)
        except asyncio.CancelledError:
            ctx.outcome = "cancelled"
            message = stages.error_result(use, "Interrupted: the call was cancelled before it "
                                          "finished" + (" (its process tree was stopped)"
                                                        if stage == "execute" else ""))
            return self._last_emit(use, message, ctx, started)
        except Exception as exc:
            ctx.outcome = "internal"
            kind = classify_tool_error(exc)
            # The sink itself may be what failed (a full disk): the error
            # result still goes back, and nothing more is attempted with it.
            with contextlib.suppress(Exception):
                stages.audit(ctx, "internal_error", tool=use.name, stage=stage, error=kind)
            if stage == "execute":
                text = f"{use.name} failed: {kind}"
            elif stage in _BEFORE_EXECUTION:
                text = f"Internal error in the {stage} stage ({kind}); nothing was run"
            else:  # it ran: saying otherwise would mislead the model into running it again
                text = f"{use.name} ran, but its result was lost in the {stage} stage ({kind})"
            return self._last_emit(use, stages.error_result(use, text), ctx, started)

    def _last_emit(self, use: ToolUse, message: ToolResultMessage, ctx: ToolContext,
                   started: float) -> ToolResultMessage:
        with contextlib.suppress(Exception):
            return stages.emit(use, message, ctx, started, ctx.outcome)
        return message


def _relay(use: ToolUse, name: str, on_progress: ProgressCallback) -> ProgressCallback:
    """Progress with this call's ids; a listener's failure never stops the
    tool (the output is still in the result)."""
    broken = False

    def relay(p: Progress) -> None:
        nonlocal broken
        if broken:
            return
        try:
            on_progress(Progress(use.id, name, p.kind, p.text, p.extra))
        except Exception:
            broken = True

    return relay
