"""``shellgate hook``: shellgate's analysis and policy as a Claude Code
PreToolUse hook, and ``shellgate hook install|uninstall``.

Claude Code runs the call itself, with no sandbox around it, so the answer
is narrower than the gateway's own decision:

    allow   only what is provably read-only inside the project (the
            analyzer's verdict, the file tools' read policy) — git reads in
            a repository whose configuration runs programs are not
    deny    hard limits, sensitive paths and shellgate's deny rules, with
            the check or rule that decided
    —       anything else: no decision, so Claude Code's own rules and its
            prompt decide (a hook's ``ask`` would override the user's allow
            rules and prompt for every ``npm test``)

The user's allow rules are left out of the judgement (Claude Code applies
them itself), and so are the modes and the sandbox's auto-allow: here,
nothing is sandboxed. Entered through :mod:`.hook_guard`, which turns any
failure of this module into a fail-closed answer.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..decisions import Decision
from ..errors import UsageError
from ..messages import ToolUse
from ..pipeline import Judgement, judge
from ..session import Session
from .hook_guard import decision

#: the tools whose calls shellgate judges; others get no decision
JUDGED = ("Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "NotebookEdit")
#: tools whose own checks concern this gateway's session (read-before-edit):
#: only the schema, the path's policy and the rules are judged for them
_WRITERS = ("Edit", "Write", "NotebookEdit")
#: where a denial may come from for the hook to pass it on: a settings deny
#: rule, the analyzer (hard limits, secrets), the sensitive-path list
_DENY_SOURCES = frozenset({"analyzer", "sensitive-paths", "policySettings", "flagSettings",
                           "cliArg", "localSettings", "projectSettings", "userSettings"})


def main(args: argparse.Namespace) -> int:
    action = args.action
    if action in ("install", "uninstall"):
        from .hook_install import change_hook  # noqa: PLC0415

        return change_hook(action, project=not args.user, cwd=os.getcwd())
    if action is not None:
        raise UsageError(f"shellgate hook: unknown action {action!r} (install, uninstall)")
    from .hook_guard import run  # noqa: PLC0415

    return run()


def answer(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hook's answer to one PreToolUse call (``None``: no decision).
    Raises on anything it cannot read: the guard answers for it."""
    if payload.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return None
    name, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
    if not isinstance(name, str) or not isinstance(tool_input, dict):
        raise ValueError("the hook input has no tool_name or tool_input")
    if name not in JUDGED:
        return None
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise ValueError(f"the hook input's cwd {cwd!r} is not a directory")
    project = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
    if not os.path.isdir(project):
        project = cwd
    session = _session(cwd, project, name)
    use = ToolUse(str(payload.get("tool_use_id") or f"toolu_{uuid.uuid4().hex[:20]}"), name,
                  tool_input)
    got = asyncio.run(_judge(session, use, tool_checks=name not in _WRITERS))
    if got.permission is None:
        return None  # invalid input: Claude Code's own validation says so
    result = got.permission
    if result.decision is Decision.DENY and result.source in _DENY_SOURCES:
        return decision("deny", f"shellgate: {result.explain()}")
    if result.decision is Decision.DENY:
        secret = _sensitive(tool_input, session.context.home)
        if secret is not None:
            return decision("deny", f"shellgate: {secret}")
    if result.decision is Decision.ALLOW and got.read_only:
        return decision("allow", f"shellgate: {result.reason}")
    return None


def _sensitive(tool_input: Mapping[str, Any], home: str) -> str | None:
    """Why a file tool's path is a secret, when the sandbox's policy hid it
    (the sandbox hides ``~/.ssh`` whole; the hook has no sandbox, and says
    what the path is)."""
    from analyzers import match_sensitive  # noqa: PLC0415

    for key in ("file_path", "notebook_path", "path"):
        value = tool_input.get(key)
        if not isinstance(value, str) or not value:
            continue
        for path in dict.fromkeys((value, os.path.realpath(value))):
            hit = match_sensitive(path, home)
            if hit is not None and hit.level != "ask":
                return f"{value} is sensitive ({hit.why}); no rule allows it"
    return None


async def _judge(session: Session, use: ToolUse, *, tool_checks: bool) -> Judgement:
    try:
        return await judge(session.pipeline, use, tool_checks=tool_checks)
    finally:
        await session.close()


def _session(cwd: str, project: str, tool_name: str) -> Session:
    """A session judging as the gateway would, less what Claude Code
    decides itself: no allow rules, the default mode, no auto-allow, no
    hooks (Claude Code runs the user's). The audit log is written — or the
    call fails closed."""
    from ..audit import FileAudit, audit_key, audit_location  # noqa: PLC0415
    from ..hooks import NoHooks  # noqa: PLC0415
    from ..permissions import CliPermissions, Mode, load_permissions  # noqa: PLC0415

    home = os.path.expanduser("~")
    loaded = load_permissions(os.path.realpath(project), home, CliPermissions())
    sandbox = loaded.sandbox
    if sandbox is not None:
        sandbox = sandbox.model_copy(update={"auto_allow_bash_if_sandboxed": False})
    permissions = dataclasses.replace(
        loaded, rules=tuple(r for r in loaded.rules if r.behavior != "allow"),
        mode=Mode.DEFAULT, sandbox=sandbox)
    location = Path(os.path.realpath(audit_location(None, os.environ)))
    audit = FileAudit(location, key=audit_key(os.environ))
    from ..tools.registry import builtin_tool  # noqa: PLC0415

    # only the tool judged is imported: each call is a new process
    tool = builtin_tool(tool_name)
    return Session.open(cwd, workspace=project, permissions=permissions, audit=audit,
                        hooks=NoHooks(), hidden=(str(audit.root),),
                        base_tools=[tool] if tool is not None else None)
