"""The composition root: a session's context, its tool pool, its decider
and hooks, assembled once; ``Session.run`` takes one ``tool_use`` through
the pipeline, ``Session.executor()`` a stream of them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from values import valueclass

from .context import Approver, AuditSink, MemoryAudit, Questioner, SessionContext
from .errors import UsageError
from .executor import StreamingExecutor
from .hooks import Hooks, NoHooks
from .messages import ProgressCallback, ToolResultMessage, ToolUse
from .pathnames import inside
from .permissions import (
    DefaultDecider,
    PermissionDecider,
    PermissionSettings,
    RulesDecider,
    path_rule_check,
    sandbox_policy,
    start_session_mode,
)
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
    hidden: tuple[str, ...] = (),
    questioner: Questioner | None = None,
) -> SessionContext:
    """A session working in ``workspace`` (``cwd`` unless given), under the
    sandbox profile ``profile`` (workspace-write by default), which the
    added directories join as writable roots; ``hidden`` paths (the audit
    log) no command and no file tool may see. Persisted large results go
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
    if hidden:
        # in the policy, not only the file tools' plan: the sandbox builds
        # its own plan from it for every command (the audit log was
        # readable by `cat` while Read refused it)
        fs = policy.filesystem
        policy = policy.model_copy(update={"filesystem": fs.model_copy(
            update={"deny_read": (*fs.deny_read, *(os.path.realpath(h) for h in hidden))})})
    context = SessionContext(
        workspace=ws, cwd=real_cwd, policy=policy,
        home=home or os.path.expanduser("~"), results_dir="", extra_dirs=extra,
        audit=audit or MemoryAudit(), approver=approver, env=env, questioner=questioner)
    if results_dir is None:
        results = Path(runtime_dir()) / "results" / context.session_id
        results.mkdir(parents=True, exist_ok=True, mode=0o700)
        results_dir = str(results)
    context.results_dir = os.path.realpath(results_dir)
    return context


def apply_permissions(context: SessionContext, permissions: PermissionSettings) -> None:
    """The settings' sandbox key and deny rules, made part of the sandbox's
    policy: a Read deny of a directory hides it from commands (``cat``,
    ``grep -r``) and the file tools alike, an Edit deny makes it read-only —
    the rule holds where no analysis looks. ``allowSecretWrites`` names the
    files Edit and Write may write a secret into."""
    from sandbox import PolicyError  # noqa: PLC0415

    try:
        policy = sandbox_policy(context.policy, permissions, workspace=context.workspace,
                                home=context.home)
    except PolicyError as exc:
        raise UsageError(str(exc)) from None
    if permissions.sandbox is not None:
        context.sandbox_settings = permissions.sandbox
        context.allow_secret_writes = tuple(permissions.sandbox.filesystem.allow_secret_writes)
    context.policy = policy
    context.rule_denied = path_rule_check(permissions, context.workspace, context.home)
    context.search_excludes = tuple(
        r.content for r in permissions.of("deny")
        if r.tool == "Read" and r.content is not None and "/" not in r.content.rstrip("/"))


def session_hooks(context: SessionContext, permissions: PermissionSettings, *,
                  trusted: bool | None = None) -> tuple[Hooks, tuple[str, ...]]:
    """The settings' hooks for this session, and what to tell the user.

    A repository's own hooks run only in a workspace the user trusted
    (``trusted``; by default the trust file says): they are programs on the
    host, and a freshly cloned repository must run none of them. Every file
    a hook runs that lies where sandboxed commands may write joins the
    sandbox's write-denied paths — the next tool call would run it on the
    host — and is checked again before each run; so do the user's settings
    files when they lie there."""
    from .hooks import ConfiguredHooks, guard_hooks, is_trusted, trust_file  # noqa: PLC0415

    roots = [*(os.path.realpath(d) for d in context.allowed_dirs),
             *context.allow_write_roots()]

    def writable(path: str) -> bool:
        real = os.path.realpath(path)
        return path.startswith("/") and any(inside(real, r) for r in roots)

    notes: list[str] = []
    # From a review: a user settings file that is a link into the workspace
    # (a dotfiles repository: ~/.claude/settings.json -> ws/claude/settings.json)
    # was given a hook by a sandboxed `cat >`; the next session ran it on the
    # host as the user's own. Such a file (found or not yet made) is kept.
    user_files = (os.path.join(context.home, ".claude", "settings.json"),
                  os.path.join(context.home, ".config", "shellgate", "settings.json"))
    deny = [os.path.realpath(f) for f in (*permissions.files, *user_files) if writable(f)]
    hooks = list(permissions.hooks)
    if permissions.repository_hooks:
        if trusted is None:
            # From a review: XDG_CONFIG_HOME inside the workspace put the
            # trust file where `printf '{"trusted": [...]}' >` wrote it.
            where = str(trust_file())
            trusted = not writable(where) and is_trusted(context.workspace)
            if writable(where):
                notes.append(f"the trust file {where} lies where sandboxed commands may write; "
                             "it is not read")
        if trusted:
            hooks.extend(permissions.repository_hooks)
        else:
            notes.append(f"{len(permissions.repository_hooks)} hook(s) from this repository's "
                         "settings were not run: the workspace is not trusted (shellgate trust "
                         f"{context.workspace})")
    env = context.env if context.env is not None else os.environ
    guard = guard_hooks(hooks, context.workspace, context.home, roots, env.get("PATH", ""))
    deny += guard.deny_write
    if deny:
        fs = context.policy.filesystem
        context.policy = context.policy.model_copy(update={"filesystem": fs.model_copy(
            update={"deny_write": (*fs.deny_write, *dict.fromkeys(deny))})})
        context.forget_plan()
    notes.extend(guard.notes)
    if not hooks:
        return NoHooks(), tuple(notes)
    return ConfiguredHooks(hooks, project_dir=context.workspace, env=context.env,
                           mode=str(permissions.mode), watches=guard.watches), tuple(notes)


@valueclass(frozen=False, slots=False)
class Session:
    """A session assembled: its context and the pipeline every call takes."""

    context: SessionContext
    pipeline: Pipeline
    #: what the user should hear about this session once (hooks not run)
    notes: tuple[str, ...] = ()

    @classmethod
    def open(cls, cwd: str, *, extra_tools: Sequence[AnyTool] = (),
             decider: PermissionDecider | None = None, hooks: Hooks | None = None,
             options: PoolOptions | None = None,
             permissions: PermissionSettings | None = None,
             trusted: bool | None = None,
             base_tools: Sequence[AnyTool] | None = None,
             **context_args: Any) -> Session:
        """A session; with ``permissions`` (from :func:`load_permissions`)
        its rules, mode, added directories, sandbox settings and hooks
        apply (``trusted``: whether the workspace may run its repository's
        own hooks; by default the trust file says). ``base_tools`` replaces
        the built-in set (an embedder's own, a test's WebFetch that may
        reach a local server); ``extra_tools`` come after it and lose a
        clash of names to it."""
        if permissions is not None:
            dirs = (*context_args.pop("extra_dirs", ()), *(
                d for d in permissions.additional_dirs if os.path.isdir(d)))
            context_args["extra_dirs"] = tuple(dict.fromkeys(dirs))
        context = make_context(cwd, **context_args)
        notes: tuple[str, ...] = ()
        if permissions is not None:
            apply_permissions(context, permissions)
            start_session_mode(context, permissions.mode)
            decider = decider or RulesDecider(permissions)
            if hooks is None:
                hooks, notes = session_hooks(context, permissions, trusted=trusted)
        blanket = tuple(r.text for r in permissions.of("deny")
                        if r.content is None) if permissions is not None else ()
        pool_options = options or PoolOptions.from_env()
        if blanket:
            pool_options = PoolOptions(pool_options.simple, (*pool_options.denied, *blanket))
        pool = assemble_tool_pool(pool_options, extra_tools, base_tools)
        pipeline = Pipeline(context, pool, decider or DefaultDecider(), hooks or NoHooks())
        return cls(context, pipeline, notes)

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

    async def close(self) -> None:
        """End the session: what it started ends with it (background tasks
        and their process trees), last started first. Never raises; safe
        to call twice."""
        self.context.closed = True
        closers, self.context.closers[:] = list(self.context.closers), []
        for closer in reversed(closers):
            try:
                done = closer()
                if done is not None:
                    await done
            except Exception:  # noqa: S112 -- one closer's failure must not keep the rest
                continue

    def executor(self) -> StreamingExecutor:
        """A batch of calls (one assistant message); needs a running loop."""
        return StreamingExecutor(self.pipeline)
