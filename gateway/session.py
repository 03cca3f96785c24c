"""The composition root: a session's context, its tool pool, its decider
and hooks, assembled once; ``Session.run`` takes one ``tool_use`` through
the pipeline, ``Session.executor()`` a stream of them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .context import Approver, AuditSink, MemoryAudit, SessionContext
from .errors import UsageError
from .executor import StreamingExecutor
from .hooks import Hooks, NoHooks
from .messages import ProgressCallback, ToolResultMessage, ToolUse
from .permissions import DefaultDecider, PermissionDecider
from .pipeline import Pipeline
from .tools import AnyTool
from .tools.registry import PoolOptions, assemble_tool_pool


def make_context(
    cwd: str,
    *,
    workspace: str | None = None,
    extra_dirs: tuple[str, ...] = (),
    profile: str | None = None,
    home: str | None = None,
    audit: AuditSink | None = None,
    approver: Approver | None = None,
    results_dir: str | None = None,
    env: dict[str, str] | None = None,
) -> SessionContext:
    """A session working in ``workspace`` (``cwd`` unless given), under the
    sandbox profile ``profile`` (workspace-write by default), which the
    added directories join as writable roots. Persisted large results go
    to a private directory outside the workspace, hidden from sandboxed
    commands (the sandbox's runtime directory) and readable by Read."""
    from sandbox import PolicyError, load_profile, runtime_dir  # noqa: PLC0415

    real_cwd = os.path.realpath(cwd)
    ws = os.path.realpath(workspace) if workspace else real_cwd
    for label, path in (("working directory", real_cwd), ("workspace", ws),
                        *(("added directory", d) for d in extra_dirs)):
        if not os.path.isdir(path):
            raise UsageError(f"{label} {path!r} is not a directory")
    extra = tuple(os.path.realpath(d) for d in extra_dirs)
    try:
        policy = load_profile(profile)
    except PolicyError as exc:
        raise UsageError(str(exc)) from None
    if extra and policy.filesystem.workspace == "write":
        fs = policy.filesystem
        policy = policy.model_copy(update={"filesystem": fs.model_copy(
            update={"allow_write": (*fs.allow_write, *extra)})})
    context = SessionContext(
        workspace=ws, cwd=real_cwd, policy=policy,
        home=home or os.path.expanduser("~"), results_dir="", extra_dirs=extra,
        audit=audit or MemoryAudit(), approver=approver, env=env)
    if results_dir is None:
        results = Path(runtime_dir()) / "results" / context.session_id
        results.mkdir(parents=True, exist_ok=True, mode=0o700)
        results_dir = str(results)
    context.results_dir = os.path.realpath(results_dir)
    return context


@dataclass
class Session:
    """A session assembled: its context and the pipeline every call takes."""

    context: SessionContext
    pipeline: Pipeline

    @classmethod
    def open(cls, cwd: str, *, extra_tools: Sequence[AnyTool] = (),
             decider: PermissionDecider | None = None, hooks: Hooks | None = None,
             options: PoolOptions | None = None, **context_args: Any) -> Session:
        context = make_context(cwd, **context_args)
        pool = assemble_tool_pool(options or PoolOptions.from_env(), extra_tools)
        pipeline = Pipeline(context, pool, decider or DefaultDecider(), hooks or NoHooks())
        return cls(context, pipeline)

    @property
    def tools(self) -> Sequence[AnyTool]:
        return self.pipeline.pool

    async def run(self, use: ToolUse, on_progress: ProgressCallback | None = None,
                  ) -> ToolResultMessage:
        """One call through the whole pipeline (never raises). One at a
        time: calls share the session's directory, so several at once go
        through :meth:`executor`, which orders them."""
        if on_progress is None:
            return await self.pipeline.run(use)
        return await self.pipeline.run(use, on_progress)

    def executor(self) -> StreamingExecutor:
        """A batch of calls (one assistant message); needs a running loop."""
        return StreamingExecutor(self.pipeline)
