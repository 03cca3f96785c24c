"""The one error root of :mod:`sandbox`.

A sandboxed command that fails, times out or is killed is a *result*
(:class:`~sandbox.ExecResult`), not an exception. Exceptions mean the sandbox
itself could not be built or started::

    SandboxError
     ├── PolicyError          a profile, setting or policy value is invalid
     └── SandboxUnavailable   the backend cannot run here (no bwrap, no user
                              namespaces, no seccomp); never falls back to
                              running unsandboxed
"""

from __future__ import annotations


class SandboxError(Exception):
    """Root of every exception raised by :mod:`sandbox`."""


class PolicyError(SandboxError, ValueError):
    """An invalid profile, setting or policy value."""


class SandboxUnavailable(SandboxError):
    """The sandbox cannot start on this machine; the message says why."""
