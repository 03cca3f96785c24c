"""Limits the kernel keeps per user namespace, set in the sandbox's own.

inotify instances and watches are counted per user in every user
namespace up the chain, against the limit of each. From a review: 126
`inotify_init` calls in the sandbox used up the user's 128 instances — the
user's editors stopped seeing changes, and a concurrent run exited 125.
bubblewrap gives the sandbox a user namespace of its own; a limit set there
bounds what the sandbox can take of the user's, which pays for both.

The host process owns that namespace (same uid, parent namespace) and so
holds every capability in it. A forked child joins it (`setns` of a user
namespace needs a single-threaded caller) and writes the limits before the
command starts; the child does nothing else and leaves with ``_exit``.
"""

from __future__ import annotations

import ctypes
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["share_user_limits"]

CLONE_NEWUSER: Final = 0x10000000
#: the sandbox may take this fraction of the user's limit, never less than
#: the floor (a dev server watching a tree needs a few instances and
#: thousands of watches)
_SHARES: Final = {"max_inotify_instances": (4, 16), "max_inotify_watches": (4, 8192)}
_LIBC: list[ctypes.CDLL] = []


def share_user_limits(pid: int) -> str | None:
    """Set the limits of the user namespace ``pid`` lives in to a share of
    this namespace's; why not, or None. A failure leaves the run as it was
    (the limit keeps the user's other programs working; it contains
    nothing the sandbox could escape through)."""
    values = {}
    for name, (share, floor) in _SHARES.items():
        own = _read_limit(name)
        if own is None:
            return f"/proc/sys/user/{name} cannot be read"
        values[name] = min(own, max(floor, own // share))
    try:
        fd = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        return f"the sandbox's user namespace cannot be opened: {exc.strerror}"
    if os.fstat(fd).st_ino == os.stat("/proc/self/ns/user").st_ino:
        os.close(fd)
        return "the sandbox has no user namespace of its own"
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    setns = _LIBC[0].setns
    payload = [(f"/proc/sys/user/{name}", b"%d" % value) for name, value in values.items()]
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked child; its exit status is the result
        _in_child(setns, fd, payload)
    os.close(fd)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return None if code == 0 else f"the limits could not be set in the sandbox (status {code})"


def _in_child(setns: object, fd: int, payload: list[tuple[str, bytes]]) -> None:
    """Join the namespace, write, leave: nothing here may return."""
    code = 1
    try:
        if setns(fd, CLONE_NEWUSER) == 0:  # type: ignore[operator]
            for path, value in payload:
                out = os.open(path, os.O_WRONLY)
                os.write(out, value)
                os.close(out)
            code = 0
    except BaseException:  # noqa: S110 - the status says it failed
        pass
    finally:
        os._exit(code)


def _read_limit(name: str) -> int | None:
    try:
        with open(f"/proc/sys/user/{name}", "rb") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None
