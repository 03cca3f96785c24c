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

The same watch stops the run when a *sentinel* appears: a name that must
stay missing and that no mount can guard — inside a git directory
(``.git/commondir``: git writes in ``.git`` all the time), or a missing
protected path (``.claude/settings.json``, ``.mcp.json``, ``~/.bashrc``),
which a mount would need an empty stub on the host for — and that a host
process (an editor polling `git status`, an agent reloading its settings)
would obey before the post-run tripwire moves it aside. Reproducer:
``echo /tmp/planted > .git/commondir`` while the editor is open; the
editor's git reads its config, and its ``core.fsmonitor``, from
``/tmp/planted``.

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

Armed before the sandbox exists, so a command cannot use up the user's
inotify instances first; if it cannot be armed, the run does not start
(fail closed). A queue overflow (events lost) counts as a trip.

One inotify instance serves every run of the process (:class:`_Inotify`):
closing an instance that held watches waits for an SRCU grace period, 10 to
15 ms, which a run must not pay; removing a watch is cheap.
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
from collections.abc import Callable, Iterable

_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_ONLYDIR = 0x01000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_ONLYDIR
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len
#: protected files larger than this are not copied (and so not restored)
_MAX_COPY = 1 << 20
_ENOENT, _ENOTDIR = 2, 20


class WatchUnavailable(OSError):
    """The watch could not be set up: the run must not start."""


class _Inotify:
    """The process's one inotify instance, its watches counted by use, and
    the thread that hands each event to the runs that watch it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: held while events are read and handed out (see drain)
        self.reading = threading.Lock()
        self.fd = -1
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.refs: dict[int, int] = {}
        self.dirs: dict[int, str] = {}
        self.subscribers: set[MountWatch] = set()
        self.thread: threading.Thread | None = None
        #: written to end the thread (shutdown)
        self.wake = (-1, -1)

    def _ensure(self) -> None:
        if self.fd >= 0:
            return
        fd = self.libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise WatchUnavailable(err, "cannot watch the protected paths for replacement on "
                                   f"the host ({os.strerror(err)}; the user's inotify "
                                   "instances may be used up)")
        self.fd = fd
        self.wake = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.thread = threading.Thread(target=self._run, args=(fd, self.wake[0]),
                                       name="shellgate-mount-watch", daemon=True)
        self.thread.start()

    def add(self, parent: str) -> int | None:
        """A watch on ``parent`` (shared with other runs), or None when
        there is nothing there to replace."""
        with self.lock:
            self._ensure()
            wd = int(self.libc.inotify_add_watch(self.fd, os.fsencode(parent), _MASK))
            if wd < 0:
                err = ctypes.get_errno()
                if err in (_ENOENT, _ENOTDIR):
                    return None
                raise WatchUnavailable(err, f"cannot watch {parent} for replacement on the "
                                       f"host: {os.strerror(err)}")
            self.refs[wd] = self.refs.get(wd, 0) + 1
            self.dirs[wd] = parent
            return wd

    def release(self, wd: int) -> None:
        with self.lock:
            self.refs[wd] -= 1
            if self.refs[wd] == 0:
                del self.refs[wd]
                self.dirs.pop(wd, None)
                self.libc.inotify_rm_watch(self.fd, wd)

    def shutdown(self) -> bool:
        """End the thread and the instance when no run uses them (True when
        neither is left)."""
        with self.lock:
            if self.subscribers or self.refs:
                return False
            thread, self.thread = self.thread, None
            if thread is not None:
                os.write(self.wake[1], b"x")
        if thread is not None:
            thread.join()
        with self.lock:
            self._forget()
        return True

    def _forget(self) -> None:
        """Close the instance and the pipe (no thread reads them)."""
        for fd in (self.fd, *self.wake):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.fd, self.wake = -1, (-1, -1)
        self.refs.clear()
        self.dirs.clear()

    def after_fork(self) -> None:
        """In a forked child: the parent's thread is not here, and its lock
        may have been held at the fork. The child starts afresh: on the
        inherited instance its runs would arm watches that no thread reads,
        and a protected path replaced on the host would go unnoticed (a warm
        daemon's children; tests/gateway/test_run_daemon.py)."""
        self.lock = threading.Lock()
        self.reading = threading.Lock()
        self.thread = None
        self.subscribers.clear()
        self._forget()

    def _run(self, fd: int, wake: int) -> None:
        while True:
            if wake in select.select([fd, wake], [], [])[0]:
                return
            try:
                self._dispatch(fd)
            except OSError:
                return

    def drain(self) -> None:
        """Hand out every event already queued, now. A run ends in
        microseconds after making a sentinel (`mkdir .kube && echo x >
        .kube/config`), before the thread has read the event: stopping the
        watch then dropped it, and the run was not reported as stopped."""
        fd = self.fd
        if fd < 0:
            return
        with contextlib.suppress(OSError):
            self._dispatch(fd)

    def _dispatch(self, fd: int) -> None:
        """Read what is queued (none: return) and hand it to the runs."""
        with self.reading:
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    return
                with self.lock:
                    events = _events(data, self.dirs)
                    subscribers = list(self.subscribers)
                for parent, name, mask in events:
                    for watch in subscribers:
                        watch.on_event(parent, name, mask)


_INOTIFY = _Inotify()
os.register_at_fork(after_in_child=_INOTIFY.after_fork)


def stop_idle_threads() -> bool:
    """End the watch's thread when no run is using it, so that a process
    that forks next (a warm daemon) forks with one thread; the next run
    starts it again. True when it is gone."""
    return _INOTIFY.shutdown()


class MountWatch:
    """Watches the names of ``targets`` in their parent directories; on a
    rename or unlink of one, or on the creation of a ``sentinels`` name,
    SIGKILLs ``pid`` (the sandbox's PID 1) once. ``files`` are protected
    files to put back after a trip."""

    def __init__(self, targets: Iterable[str], files: Iterable[str] = (),
                 sentinels: Iterable[str] = (),
                 move_aside: Callable[[str], str | None] | None = None) -> None:
        self.watched: dict[str, set[str]] = {}
        self.sentinels: set[str] = set()
        for target in (*targets, *sentinels):
            parent, name = os.path.split(target.rstrip("/"))
            if parent and name:
                self.watched.setdefault(parent, set()).add(name)
        self.sentinels = {s.rstrip("/") for s in sentinels}
        self.tripped: str | None = None
        self.tripped_path: str | None = None
        #: moves a sentinel aside the moment it appears (its new path, or
        #: None); what it moved, in order
        self._move_aside = move_aside
        self.moved: list[tuple[str, str]] = []
        self._pid: int | None = None
        self._wds: list[int] = []
        self._lock = threading.Lock()
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
        """Watch, before the sandbox exists. Raises :class:`WatchUnavailable`
        when the watches cannot be made."""
        if not self.watched:
            return
        with _INOTIFY.lock:
            _INOTIFY.subscribers.add(self)
        try:
            for parent in self.watched:
                wd = _INOTIFY.add(parent)
                if wd is not None:
                    self._wds.append(wd)
        except WatchUnavailable:
            self.stop()
            raise

    def start(self, pid: int) -> None:
        """From now on a trip kills ``pid``; one that happened since
        :meth:`arm` kills it at once."""
        with self._lock:
            self._pid = pid
            if self.tripped is not None:
                _kill(pid)

    def stop(self) -> None:
        """End the watch, once what is queued has been seen; safe to call
        more than once."""
        if self._wds:
            _INOTIFY.drain()
        with _INOTIFY.lock:
            _INOTIFY.subscribers.discard(self)
        wds, self._wds = self._wds, []
        for wd in wds:
            _INOTIFY.release(wd)

    def close(self) -> None:
        self.stop()
        self._originals.clear()

    def on_event(self, parent: str, name: str, mask: int = 0) -> None:
        if parent and name not in self.watched.get(parent, ()):
            return
        path = os.path.join(parent, name) if parent else ""
        if path in self.sentinels:
            if not mask & (_IN_CREATE | _IN_MOVED_TO):
                return  # a sentinel going away is the post-run check's business
        elif mask & _IN_CREATE:
            return  # a new name is no replacement; only sentinels count
        with self._lock:
            if self.tripped is None:
                self.tripped_path = path or None
                self.tripped = self._why(path)
            if self._pid is not None:
                _kill(self._pid)
        if path in self.sentinels and self._move_aside is not None:
            # At once, not after the run: the sandbox ends only when its last
            # process does, and one in uninterruptible sleep (`sync` after
            # writing gigabytes) kept a planted `.claude/settings.json` in
            # place for seconds (from a review). The post-run tripwire
            # checks again.
            with contextlib.suppress(Exception):
                kept = self._move_aside(path)
                if kept is not None:
                    self.moved.append((path, kept))

    def _why(self, path: str) -> str:
        if not path:
            return "the watch over the protected paths lost events; the command was stopped"
        if path in self.sentinels:
            return (f"{path} was created during the run: the host runs or obeys what is there "
                    "by itself (git, an agent's or editor's settings, a shell's startup file), "
                    "and a host process running meanwhile would have; the command was stopped "
                    "and what it made there is moved aside")
        return (f"{path} was replaced or removed during the run (on the host, or by the "
                "command through a link), which lifts the sandbox's protection of it; the "
                "command was stopped")

    def restore(self) -> list[str]:
        """After a trip over a protected file: put its content from before
        the run back and keep the version found there as
        ``PATH.replaced-during-run`` (the host's change is in it, and perhaps
        the command's); returns the paths restored."""
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


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def _events(data: bytes, dirs: dict[int, str]) -> list[tuple[str, str, int]]:
    """(directory, name, mask) per event; ("", "", mask) when events were lost."""
    out = []
    offset = 0
    while offset + _EVENT.size <= len(data):
        wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
        raw = data[offset + _EVENT.size : offset + _EVENT.size + length]
        offset += _EVENT.size + length
        if mask & _IN_Q_OVERFLOW:
            out.append(("", "", mask))  # events were lost: fail closed
            continue
        if mask & _IN_IGNORED:
            continue
        name = os.fsdecode(raw.split(b"\0", 1)[0])
        if wd in dirs and name:
            out.append((dirs[wd], name, mask))
    return out
