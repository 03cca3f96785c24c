"""The permission stage's seam: a :class:`PermissionDecider` turns the
tool's own answer (and a hook's) into the call's decision, and an ``ask``
is put to the session's approver — or, with nobody to answer, denied.

The permissions issue fills the decider with settings, rules and modes;
:class:`DefaultDecider` is the fail-closed stand-in: read-only allows,
anything else asks."""

from __future__ import annotations

from .decider import DefaultDecider, PermissionDecider, resolve_ask

__all__ = ["DefaultDecider", "PermissionDecider", "resolve_ask"]
