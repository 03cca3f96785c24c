"""The one error root of :mod:`sandbox`.

A sandboxed command that fails, times out or is killed is a *result*
(:class:`~sandbox.ExecResult`), not an exception. Exceptions mean the sandbox
itself could not be built or started::

    SandboxError
     ├── PolicyError          a profile, setting or policy value is invalid
     ├── SandboxUnavailable   the backend cannot run here (no bwrap, no user
     │                        namespaces, no seccomp); never falls back to
     │                        running unsandboxed
     └── RunFailed            shellgate itself failed once the command had
                              started: the command was stopped, the post-run
                              guards ran, and ``result`` holds what they found

    KeyboardInterrupt
     └── RunInterrupted       Ctrl-C (or the warm daemon's client leaving)
                              during a run: the same, with ``result``

A run cut short by shellgate still reports what the guards found: the
report must reach the user on every way a run ends, or the command could
make it optional by ending that way.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .supervise import ExecResult


class SandboxError(Exception):
    """Root of every exception raised by :mod:`sandbox`."""


class PolicyError(SandboxError, ValueError):
    """An invalid profile, setting or policy value."""


class SandboxUnavailable(SandboxError):
    """The sandbox cannot start on this machine; the message says why."""


class RunFailed(SandboxError):
    """shellgate failed after the command started (a bug, a resource it
    could not get): the process tree was stopped; ``result`` carries the
    post-run guards' reports and problems."""

    def __init__(self, message: str, result: ExecResult) -> None:
        super().__init__(message)
        self.result = result


class RunInterrupted(KeyboardInterrupt):
    """An interrupt ended a run: the process tree was stopped; ``result``
    carries the post-run guards' reports and problems. A KeyboardInterrupt
    still, for every caller that stops on one."""

    def __init__(self, result: ExecResult) -> None:
        super().__init__()
        self.result = result
