"""Stop the sandbox when a host process replaces a path it protects.

The protections are mounts on paths: `/dev/null` over a hidden file, a path
bound read-only onto itself. Linux detaches a mount in every namespace when,
on the host, the path it sits on is unlinked or renamed over — and that is
how editors, `git config` and credential helpers save (write a temporary
file, rename it into place). Attack (from a review): while the command
looped on `git config core.fsmonitor …` (refused), the user ran
`git config user.name x` on the host; the rename detached the read-only
mount, the command's next try wrote `.git/config`, and the host's next
`git status` ran the planted program. A hidden `~/.env` rotated with
`sed -i` became readable the same way.

A mount cannot be put back from outside, so the watch ends the sandbox
instead: an inotify watch on the parent directory of every mounted-over
path reports a rename or unlink of that name, and the sandbox's PID 1 gets
SIGKILL (which ends every process in its PID namespace at once). The run is
reported as killed, naming the path. This narrows the window to the
watcher's wake-up (well under a millisecond on an idle machine); it cannot
close it, which the README says.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import struct
import threading
from collections.abc import Iterable

_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_DELETE = 0x00000200
_IN_ONLYDIR = 0x01000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = _IN_MOVED_FROM | _IN_MOVED_TO | _IN_DELETE | _IN_ONLYDIR
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len


class MountWatch:
    """Watches the names of ``targets`` in their parent directories; on a
    rename or unlink of one, SIGKILLs ``pid`` (the sandbox's PID 1) once."""

    def __init__(self, targets: Iterable[str]) -> None:
        self.watched: dict[str, set[str]] = {}
        for target in targets:
            parent, name = os.path.split(target.rstrip("/"))
            if parent and name:
                self.watched.setdefault(parent, set()).add(name)
        self.tripped: str | None = None
        self.problem: str | None = None
        self._fd = -1
        self._dirs: dict[int, str] = {}
        self._pid: int | None = None
        self._stop_r, self._stop_w = os.pipe()
        self._thread: threading.Thread | None = None

    def start(self, pid: int) -> None:
        """Begin watching; ``pid`` is killed on a trip. A watch that cannot
        be set up is reported in :attr:`problem` (the run goes on)."""
        self._pid = pid
        if not self.watched:
            return
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            self.problem = ("cannot watch the protected paths for replacement on the host: "
                            f"{os.strerror(ctypes.get_errno())}")
            return
        self._fd = fd
        for parent in self.watched:
            wd = libc.inotify_add_watch(fd, os.fsencode(parent), _MASK)
            if wd >= 0:
                self._dirs[wd] = parent
            elif ctypes.get_errno() not in (2, 20):  # ENOENT, ENOTDIR: nothing to replace
                self.problem = (f"cannot watch {parent} for replacement on the host: "
                                f"{os.strerror(ctypes.get_errno())}")
        self._thread = threading.Thread(target=self._run, name="shellgate-mount-watch",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the watch; safe to call more than once (descriptors are
        closed once, never a number reused by someone else)."""
        if self._stop_w < 0:
            return
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"x")
        if self._thread is not None:
            self._thread.join(2)
        for fd in (self._fd, self._stop_r, self._stop_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fd = self._stop_r = self._stop_w = -1

    def _run(self) -> None:
        while True:
            readable = select.select([self._fd, self._stop_r], [], [])[0]
            if self._stop_r in readable:
                return
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                return
            for parent, name in _events(data, self._dirs):
                if name in self.watched.get(parent, ()):
                    self._trip(os.path.join(parent, name))
                    return

    def _trip(self, path: str) -> None:
        if self.tripped is None:
            self.tripped = (f"{path} was replaced on the host during the run, which lifts "
                            "the sandbox's protection of it; the command was stopped")
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._pid, signal.SIGKILL)


def _events(data: bytes, dirs: dict[int, str]) -> list[tuple[str, str]]:
    out = []
    offset = 0
    while offset + _EVENT.size <= len(data):
        wd, _mask, _cookie, length = _EVENT.unpack_from(data, offset)
        raw = data[offset + _EVENT.size : offset + _EVENT.size + length]
        offset += _EVENT.size + length
        name = os.fsdecode(raw.split(b"\0", 1)[0])
        if wd in dirs and name:
            out.append((dirs[wd], name))
    return out
