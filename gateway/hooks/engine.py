"""The configured hooks of a session: for each event, the matching hooks
run in parallel, each one an audit event, their answers combined."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from ..context import SessionContext, ToolContext
from ..messages import ToolResultMessage
from .config import HookCommand, for_event
from .outcome import Combined, combine, interpret
from .protect import Watch
from .runner import HookRun, hook_env, run_hook
from .types import HookOutcome, PostHookOutcome


class ConfiguredHooks:
    """Claude Code's command hooks, run by the pipeline (tool events) and
    the agent client (session events)."""

    def __init__(self, hooks: Sequence[HookCommand], *, project_dir: str,
                 env: Mapping[str, str] | None = None, mode: str = "default",
                 transcript_path: str = "",
                 watches: Mapping[str, tuple[Watch, ...]] | None = None) -> None:
        self.hooks = tuple(hooks)
        #: per command, the paths it runs from in the agent's reach, as they
        #: were when the session started (see :mod:`.protect`)
        self.watches = dict(watches or {})
        self.project_dir = project_dir
        self.env = hook_env(project_dir, env)
        self.mode = mode
        self.transcript_path = transcript_path

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def _payload(self, session: SessionContext, event: str, **fields: Any) -> dict[str, Any]:
        return {"session_id": session.session_id, "transcript_path": self.transcript_path,
                "cwd": session.cwd, "permission_mode": session.mode or self.mode,
                "hook_event_name": event, **fields}

    async def run_event(self, event: str, session: SessionContext, *,
                        tool_name: str | None = None, call_id: str | None = None,
                        tool_use_id: str | None = None, **fields: Any) -> Combined:
        """Every hook of ``event`` matching ``tool_name``, at once; each
        run is audited (an audit log that cannot take it fails the call,
        like any other event)."""
        hooks = for_event(self.hooks, event, tool_name)
        if not hooks:
            return Combined()
        extra = {"tool_name": tool_name} if tool_name is not None else {}
        if tool_use_id is not None:
            extra["tool_use_id"] = tool_use_id
        payload = self._payload(session, event, **extra, **fields)
        ids = {"session_id": session.session_id, "call_id": call_id,
               "tool_use_id": tool_use_id, "hook_event": event, "tool": tool_name}
        try:
            runs = await asyncio.gather(*(self._run(h, payload) for h in hooks))
        except asyncio.CancelledError:
            # an interrupted call's hooks (killed, tree and all) leave a
            # trace too: every started hook is one hook.ran
            for h in hooks:
                with contextlib.suppress(Exception):
                    session.audit.emit("hook.ran", **ids, command=h.command,
                                       source=h.source or None, error="cancelled; killed")
            raise
        verdicts = [interpret(r) for r in runs]
        for v in verdicts:
            session.audit.emit(
                "hook.ran", **ids, command=v.run.hook.command, source=v.run.hook.source or None,
                exit_code=v.run.exit_code, timed_out=v.run.timed_out or None,
                duration_ms=v.run.duration_ms,
                decision=v.decision.name.lower() if v.decision is not None else None,
                block=v.block or None, updated_input=v.updated_input is not None or None,
                error=v.error)
        return combine(verdicts)

    async def _run(self, hook: HookCommand, payload: Mapping[str, Any]) -> HookRun:
        """One hook, in the project's directory — where its relative paths
        were resolved and kept from the sandbox. From a review: run in the
        session's directory, `./guard.sh` after a `cd sub` ran the
        sub/guard.sh a sandboxed command had just written. A hook whose
        files changed since the session started is not run at all."""
        for watch in self.watches.get(hook.command, ()):
            changed = watch.changed()
            if changed is not None:
                return HookRun(hook, None, refused=True,
                               error=f"not run: {changed} (start a new session once reviewed)")
        return await run_hook(hook, payload, cwd=self.project_dir, env=self.env)

    async def pre_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                           ctx: ToolContext) -> HookOutcome:
        combined = await self.run_event(
            "PreToolUse", ctx.session, tool_name=tool_name, call_id=ctx.call_id,
            tool_use_id=ctx.tool_use_id, tool_input=dict(tool_input))
        if not combined.verdicts:
            return HookOutcome()
        source = _source(combined)
        return HookOutcome(combined.decision, combined.reason, source,
                           updated_input=combined.updated_input, context=combined.context,
                           stop=combined.stop, errors=tuple(combined.errors))

    async def post_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                            result: ToolResultMessage, ctx: ToolContext) -> PostHookOutcome:
        event = "PostToolUseFailure" if result.is_error else "PostToolUse"
        fields: dict[str, Any] = {"tool_input": dict(tool_input)}
        if result.is_error:
            fields["error"] = result.text
        else:
            fields["tool_response"] = {"content": result.text, "is_error": False}
        combined = await self.run_event(event, ctx.session, tool_name=tool_name,
                                        call_id=ctx.call_id, tool_use_id=ctx.tool_use_id,
                                        **fields)
        return PostHookOutcome(combined.reason if combined.block else "", combined.context,
                               combined.stop, tuple(combined.errors))


def _source(combined: Combined) -> str:
    """The deciding hooks named for the denial text: "hook (userSettings)"."""
    deciding = [v for v in combined.verdicts
                if v.decision is not None and v.decision is combined.decision]
    sources = sorted({v.run.hook.source for v in deciding if v.run.hook.source})
    return f"hook ({', '.join(sources)})" if sources else "hook"
