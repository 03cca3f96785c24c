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
reported as killed, naming the path.

That narrows the window; it does not close it: a command retrying a write
every few hundred microseconds wins the race (from a review). So, for a
protected *file*, the watch keeps a copy of its content from before the
run, and after a trip the file is put back as it was, the replaced version
kept beside it for the user to review (:meth:`MountWatch.restore`). A copy
of the bytes, not a descriptor of the original: in the window the command
can write the original inode itself, and a restore from it would plant
what it wrote. A hidden file read in the window stays read: the run is
stopped and reported.

Set up before the sandbox exists, so a command cannot use up the user's
inotify instances first; if it cannot be set up, the run does not start
(fail closed). A queue overflow (events lost) counts as a trip.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import stat
import struct
import threading
from collections.abc import Iterable

_IN_Q_OVERFLOW = 0x00004000
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_DELETE = 0x00000200
_IN_ONLYDIR = 0x01000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = _IN_MOVED_FROM | _IN_MOVED_TO | _IN_DELETE | _IN_ONLYDIR
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len
#: protected files larger than this are not copied (and so not restored)
_MAX_COPY = 1 << 20


class WatchUnavailable(OSError):
    """The watch could not be set up: the run must not start."""


class MountWatch:
    """Watches the names of ``targets`` in their parent directories; on a
    rename or unlink of one, SIGKILLs ``pid`` (the sandbox's PID 1) once.
    ``files`` are protected files to put back after a trip."""

    def __init__(self, targets: Iterable[str], files: Iterable[str] = ()) -> None:
        self.watched: dict[str, set[str]] = {}
        for target in targets:
            parent, name = os.path.split(target.rstrip("/"))
            if parent and name:
                self.watched.setdefault(parent, set()).add(name)
        self.tripped: str | None = None
        self.tripped_path: str | None = None
        self._fd = -1
        self._dirs: dict[int, str] = {}
        self._pid: int | None = None
        self._stop_r, self._stop_w = os.pipe()
        self._thread: threading.Thread | None = None
        #: protected file -> (its content, its mode) from before the run
        self._originals: dict[str, tuple[bytes, int]] = {}
        for path in files:
            with contextlib.suppress(OSError):
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
                try:
                    st = os.fstat(fd)
                    if stat.S_ISREG(st.st_mode) and st.st_size <= _MAX_COPY:
                        self._originals[path] = (os.read(fd, _MAX_COPY + 1)[:_MAX_COPY],
                                                 stat.S_IMODE(st.st_mode))
                finally:
                    os.close(fd)

    def arm(self) -> None:
        """Create the watches, before the sandbox exists. Raises
        :class:`WatchUnavailable` when they cannot be made."""
        if not self.watched:
            return
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise WatchUnavailable(
                ctypes.get_errno(), "cannot watch the protected paths for replacement on "
                f"the host ({os.strerror(ctypes.get_errno())}; the user's inotify instances "
                "may be used up)")
        self._fd = fd
        for parent in self.watched:
            wd = libc.inotify_add_watch(fd, os.fsencode(parent), _MASK)
            if wd >= 0:
                self._dirs[wd] = parent
            elif ctypes.get_errno() not in (2, 20):  # ENOENT, ENOTDIR: nothing to replace
                raise WatchUnavailable(ctypes.get_errno(), f"cannot watch {parent} for "
                                       f"replacement on the host: "
                                       f"{os.strerror(ctypes.get_errno())}")

    def start(self, pid: int) -> None:
        """Act on events (those queued since :meth:`arm` included): ``pid``
        is killed on a trip."""
        self._pid = pid
        if self._fd < 0:
            return
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

    def close(self) -> None:
        self.stop()
        self._originals.clear()

    def restore(self) -> list[str]:
        """After a trip over a protected file: put its original content back
        (what the command may have written in the window is undone) and keep
        the version found there as ``PATH.replaced-during-run``; returns the
        paths restored. The host's own change is in that kept copy."""
        path = self.tripped_path
        if path is None or path not in self._originals:
            return []
        original, mode = self._originals[path]
        parent, name = os.path.split(path)
        tmp = os.path.join(parent, f".{name}.shellgate-restore")
        try:
            with contextlib.suppress(FileNotFoundError):
                os.rename(path, os.path.join(parent, f"{name}.replaced-during-run"))
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(original)
            os.rename(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return []
        return [path]

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
                if parent == "" or name in self.watched.get(parent, ()):
                    self._trip(os.path.join(parent, name) if parent else "")
                    return

    def _trip(self, path: str) -> None:
        if self.tripped is None:
            self.tripped_path = path or None
            self.tripped = (
                f"{path} was replaced on the host during the run, which lifts the "
                "sandbox's protection of it; the command was stopped" if path else
                "the watch over the protected paths lost events; the command was stopped")
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._pid, signal.SIGKILL)


def _events(data: bytes, dirs: dict[int, str]) -> list[tuple[str, str]]:
    out = []
    offset = 0
    while offset + _EVENT.size <= len(data):
        wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
        raw = data[offset + _EVENT.size : offset + _EVENT.size + length]
        offset += _EVENT.size + length
        if mask & _IN_Q_OVERFLOW:
            out.append(("", ""))  # events were lost: fail closed
            continue
        name = os.fsdecode(raw.split(b"\0", 1)[0])
        if wd in dirs and name:
            out.append((dirs[wd], name))
    return out
