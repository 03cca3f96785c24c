"""The settings made part of the sandbox's policy: one answer for every
verb that runs commands (``run``, ``tool``, the agent's sessions).

From a review: `shellgate run --settings .claude/settings.json` read the
file's ``sandbox`` key on its own path, with no repository rule, while
`shellgate tool` refused the same file — a cloned repository's
``allowWrite: ["~"]`` and ``allowUnixSockets`` reached `run` unchecked.
Every verb now loads settings with :func:`load_permissions` and turns them
into a policy here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .merge import PermissionSettings
from .path_rules import literal_prefix

if TYPE_CHECKING:
    from sandbox import SandboxPolicy


def grant_root(entry: str, workspace: str, home: str) -> str:
    """Where a ``sandbox.filesystem.allowWrite`` entry leads: ``~`` and
    ``~/`` from ``home``, a relative one from the workspace, links
    resolved."""
    expanded = home + entry[1:] if entry == "~" or entry.startswith("~/") else entry
    return os.path.realpath(os.path.join(workspace, expanded))


def granted_roots(permissions: PermissionSettings, workspace: str,
                  home: str) -> tuple[str, ...]:
    """The writable roots the merged settings grant."""
    sandbox = permissions.sandbox
    if sandbox is None:
        return ()
    return tuple(grant_root(e, workspace, home) for e in sandbox.filesystem.allow_write)


def sandbox_policy(policy: SandboxPolicy, permissions: PermissionSettings, *,
                   workspace: str, home: str) -> SandboxPolicy:
    """``policy`` with the settings in it: the merged ``sandbox`` key (its
    lists added, its limits only lowering), each Read deny rule naming a
    path hidden and each Edit/Write one made read-only (the rule holds
    where no analysis looks). The user's own settings files need nothing
    here: the sandbox keeps them read-only wherever a writable root holds
    them (``profiles/host-run-files.toml``). Raises ``sandbox.PolicyError``
    for a value the sandbox refuses."""
    from sandbox import apply_settings  # noqa: PLC0415 - pydantic: not for every start

    if permissions.sandbox is not None:
        policy = apply_settings(policy, permissions.sandbox)
        for limits in permissions.sandbox_limits:
            policy = apply_settings(policy, limits)
    hide: list[str] = []
    block: list[str] = []
    for rule in permissions.of("deny"):
        if rule.content is None or rule.tool not in ("Read", "Edit", "Write"):
            continue
        path = literal_prefix(rule.content, root=rule.root, cwd=workspace, home=home)
        if path is not None:
            (hide if rule.tool == "Read" else block).append(path)
    fs = policy.filesystem
    return policy.model_copy(update={"filesystem": fs.model_copy(update={
        "deny_read": (*fs.deny_read, *hide),
        "deny_write": (*fs.deny_write, *block)})})
