"""The ``hooks`` key of every settings source, gathered for the session.

A repository's files (project, local, a ``--settings`` file inside the
project) bring programs that would run on the host, unsandboxed, at the
first tool call; their hooks are kept apart, and the session runs them only
in a workspace the user trusted. ``disableAllHooks: true`` (Claude Code's
switch) turns hooks off, but only from a source a repository cannot write —
a cloned repository must not switch off the user's own guard hooks;
``allowManagedHooksOnly`` in the managed policy keeps the policy's alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from values import valueclass

from ..hooks import HookCommand, parse_hooks
from .settings import Problem, SettingsFile, Source


@valueclass
class HookSettings:
    hooks: tuple[HookCommand, ...] = ()
    #: from a repository's files: run only in a trusted workspace
    repository_hooks: tuple[HookCommand, ...] = ()
    problems: tuple[Problem, ...] = ()


def collect_hooks(ordered: Sequence[SettingsFile]) -> HookSettings:
    """``ordered``: highest precedence first (policy's hooks run first)."""
    problems: list[Problem] = []
    managed_only = any(f.extra.get("allowManagedHooksOnly") is True
                       for f in ordered if f.source is Source.POLICY)
    disabled = any(f.extra.get("disableAllHooks") is True
                   for f in ordered if not f.untrusted)
    for f in ordered:
        if f.untrusted and f.extra.get("disableAllHooks") is True:
            problems.append(Problem(f.path, "disableAllHooks: a repository's settings cannot "
                                    "switch off the user's hooks; ignored"))
    hooks: list[HookCommand] = []
    repository: list[HookCommand] = []
    for f in ordered:
        value = f.extra.get("hooks")
        if value is None:
            continue
        found, said = parse_hooks(value, source=f.source.label, origin=f.path)
        problems.extend(Problem(f.path, p) for p in said)
        if disabled:
            continue
        if managed_only and f.source is not Source.POLICY:
            if found:
                problems.append(Problem(f.path, "hooks ignored: the managed policy sets "
                                        "allowManagedHooksOnly"))
            continue
        (repository if f.untrusted else hooks).extend(found)
    return HookSettings(tuple(hooks), tuple(repository), tuple(problems))
