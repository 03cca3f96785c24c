"""shellgate's warm daemons (clients: :mod:`.warm_client`): one process per
service, user, install and environment that has imported and warmed the
service's code once, and serves each call in a **forked child**.

Started by a call that found none (``python -P -m gateway.cli.warm_daemon
SERVICE SOCKET``), it imports the service (``hook``: :mod:`.hook_daemon`,
``run``: :mod:`.run_daemon`, ``check``: :mod:`.check_daemon`), warms it,
and keeps spare children forked and warm, each waiting in ``accept``; a
spare serves one call and exits. So:

- the daemon keeps nothing a call derives from the user's files (only
  imports, compiled tables, the package's own data, and caches that check
  their files before each use): each call reads settings, trust, the
  repository and the filesystem afresh;
- one call cannot leave anything behind for the next, and a call that
  costs its child the memory or the time costs a child, not the daemon;
- the daemon's own state never changes after the warm-up.

It serves only a client of its own protocol and version, from its own
user. It exits when idle (``SHELLGATE_<SERVICE>_DAEMON_IDLE`` seconds,
default 600), when its socket is removed or replaced, and when the
package's files change under it (an upgrade, an edited profile): the
child that finds out tells its call so, which is then served in the
client's process. Only one daemon serves a socket: it holds an exclusive
lock beside it (children close their copy, so a long run does not keep a
new daemon out).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import os
import select
import signal
import socket
import stat
import struct
import sys
import threading
import time

from . import warm_client
from .warm_sources import Sources

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Service(Protocol):
        """What a daemon serves (a module: hook_daemon, run_daemon)."""

        #: children at once (spares and busy); past it, calls wait in the
        #: socket's backlog, and their clients serve them themselves
        MAX_CHILDREN: int

        def own_address(self) -> str | None:
            """The socket this process's environment names for the service."""

        def warm_up(self) -> None:
            """Import and exercise the service once, in the daemon."""

        def warm_spare(self) -> None:
            """Touch in a fresh spare the pages a call will (copy-on-write)."""

        #: whether a kernel without SO_PEERPIDFD may serve (the client's
        #: pid from SO_PEERCRED, which may be reused: a judgement, never a run)
        PID_FALLBACK: bool

        def serve(self, conn: socket.socket, sources: Sources, status: bytes) -> int:
            """Serve one call from a client whose /proc status is ``status``;
            the child's exit status (:data:`STALE` when the package changed
            under the daemon)."""


#: default idle time before the daemon exits
IDLE_S = 600.0
#: how often the daemon looks at the package's files in full: while it has
#: served a call in the last RECHECK_BUSY_S seconds, and otherwise
RECHECK_S = 1.0
RECHECK_BUSY_S = 60.0
RECHECK_IDLE_S = 5.0
#: children warmed and waiting for a call
SPARES = 2
#: a child's exit status when it found the package changed
STALE = 3
class Daemon:
    """The listening socket, and the children that serve on it.

    A child is forked *before* its call arrives: it warms the pages a call
    touches (a fork's copy-on-write faults cost a cold child 15 ms), then
    waits in ``accept``, serves one call, and exits. It tells the daemon
    when it took a call (its pid on a pipe), and the daemon forks the next
    spare at once."""

    def __init__(self, where: str, idle: float, service: Service, lock: int) -> None:
        self.where = where
        self.idle = idle
        self.service = service
        self.lock = lock
        #: the package's files as this daemon found them, and the watch on
        #: them (set up before the daemon's first look: warm_sources.py)
        self.sources = Sources()
        self.listener: socket.socket | None = None
        self.inode: tuple[int, int] | None = None
        self.spares: set[int] = set()
        self.busy: set[int] = set()
        #: spares reaped before their "took" was read (from a review: they
        #: were then counted busy for ever, and a flood of calls jammed the
        #: daemon)
        self.reaped: set[int] = set()
        self.stale = False
        #: the daemon's pid, for its children to see it go (recorded
        #: before any fork: from a review, a spare that read its parent
        #: only after its warm-up read init's when the daemon had died
        #: meanwhile, and lived for ever holding the lock and the socket)
        self.pid = os.getpid()
        self.took_r, self.took_w = os.pipe()

    def bind(self) -> None:
        """Listen at :attr:`where`, owner-only (the directory is too)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.where)  # a dead daemon's; we hold the lock
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        old = os.umask(0o177)
        try:
            listener.bind(self.where)
        finally:
            os.umask(old)
        # no chmod: the umask made it 0600, and a chmod by name follows a
        # link put in its place (from a review)
        listener.listen(64)
        listener.setblocking(False)
        st = os.lstat(self.where)
        self.inode = (st.st_dev, st.st_ino)
        self.listener = listener

    def ours(self) -> bool:
        """Is the socket at :attr:`where` still the one this daemon made?"""
        try:
            st = os.lstat(self.where)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.inode

    def serve(self) -> None:
        last = time.monotonic()
        checked = last
        most = self.service.MAX_CHILDREN
        while True:
            self.reap()
            if self.stale or not self.ours():
                return
            now = time.monotonic()
            # the package's files looked at in full (warm_sources: what no
            # event reports is found here): each second while calls come,
            # every few when idle, as before the watch
            if now - checked >= (RECHECK_S if now - last < RECHECK_BUSY_S else RECHECK_IDLE_S):
                checked = now
                if self.sources.recheck():
                    return
            if now - last >= self.idle and not self.busy:
                return
            while len(self.spares) < SPARES and len(self.spares | self.busy) < most:
                self.spares.add(self.fork_spare())
            timeout = max(0.05, min(self.idle - (now - last), 1.0))
            if select.select([self.took_r], [], [], timeout)[0]:
                self.took(os.read(self.took_r, 4096))
                last = time.monotonic()

    def took(self, data: bytes) -> None:
        """Spares' news that they took a call (their pids)."""
        for (pid,) in struct.iter_unpack("i", data[: len(data) // 4 * 4]):
            self.spares.discard(pid)
            if pid in self.reaped:
                self.reaped.discard(pid)  # it took a call and is done already
            else:
                self.busy.add(pid)

    def fork_spare(self) -> int:
        pid = os.fork()
        if pid == 0:  # pragma: no cover -- the child, measured through the CLI
            _spare(self)
        self.reaped.discard(pid)  # a number used again: the old one's entry is stale
        return pid

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.spares:
                self.spares.discard(pid)
                if len(self.reaped) < 4096:  # a spare that took nothing sends nothing
                    self.reaped.add(pid)
            self.busy.discard(pid)
            if os.waitstatus_to_exitcode(status) == STALE:
                self.stale = True

    def close(self) -> None:
        """Stop the spares. A busy child is left to finish its call (a run's
        child supervises a command: killing it would end the command with no
        cleanup); it holds neither the socket nor the lock."""
        for pid in self.spares:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.listener is not None:
            if self.ours():
                with contextlib.suppress(OSError):
                    os.unlink(self.where)
            self.listener.close()


def _spare(daemon: Daemon) -> None:
    """A spare child: warm its pages, serve one call, exit; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(daemon.took_r)
        os.close(daemon.lock)
        daemon.service.warm_spare()
        listener = daemon.listener
        assert listener is not None
        conn = _accept(listener, daemon.pid)
        os.write(daemon.took_w, struct.pack("i", os.getpid()))
        os.close(daemon.took_w)
        listener.close()
        with conn:
            # the client's own state, as /proc shows it, must be the
            # daemon's: a sandboxed command is the same user
            # (warm_client.same_state_peer)
            status = None
            if warm_client.peer_uid(conn) == os.getuid():
                status = warm_client.same_state_peer(
                    conn, warm_client.facts(), pid_fallback=daemon.service.PID_FALLBACK)
            if status is None:
                code = 0  # not ours to serve: closed unanswered
                return
            code = daemon.service.serve(conn, daemon.sources, status)
    except BaseException:  # the client serves the call itself
        code = 1
    finally:
        os._exit(code)


def _accept(listener: socket.socket, parent: int) -> socket.socket:
    """The next call, for a spare: the listener is non-blocking (spares
    race for each call), and a spare whose daemon died leaves."""
    while True:
        if os.getppid() != parent:
            raise SystemExit(1)
        if select.select([listener], [], [], 1.0)[0]:
            try:
                conn, _ = listener.accept()
            except BlockingIOError:
                continue  # another spare took it
            conn.setblocking(True)
            return conn


#: the daemon's throwaway directory and its (device, inode) (see :func:`scratch`)
_SCRATCH: list[tuple[str, tuple[int, int]]] = []


def scratch(*, make: bool = False) -> str | None:
    """A throwaway directory for the warm-ups: made by the daemon's warm-up
    (``make``; in ``$TMPDIR``, private), the same for each of its spares,
    removed when the daemon leaves; None when there is none or it is gone.
    One per daemon, not one per spare: from a review, the run path keeps a
    repository-walk cache per directory it plans for, and a directory per
    spare wrote one per call, pushing the caches of real workspaces out."""
    if not _SCRATCH and make:
        import atexit  # noqa: PLC0415
        import shutil  # noqa: PLC0415
        import tempfile  # noqa: PLC0415

        try:
            made = tempfile.mkdtemp(prefix="shellgate-warm-")
            st = os.lstat(made)
        except OSError:
            return None
        _SCRATCH.append((made, (st.st_dev, st.st_ino)))
        # the daemon's exit only: its children leave by os._exit
        atexit.register(shutil.rmtree, made, ignore_errors=True)
    if not _SCRATCH:
        return None
    here, identity = _SCRATCH[0]
    # the very directory made, not whatever now has its name: from a review,
    # with the directory removed, another user's link put at its name had
    # the spares rehearse in (and cache a walk of) the link's target
    try:
        st = os.lstat(here)
    except OSError:
        return None
    return here if stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) == identity else None


def _lock(where: str) -> int | None:
    """The exclusive lock beside the socket (``None``: another daemon has it)."""
    fd = os.open(where.removesuffix(".sock") + ".lock",
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in warm_client.SERVICES:
        print("usage: python -m gateway.cli.warm_daemon {hook,run,check} SOCKET", file=sys.stderr)
        return 2
    name, where = argv
    service: Service = importlib.import_module(f"{__package__}.{name}_daemon")
    # the socket this environment names, in a directory that is ours: a
    # daemon started with another environment would serve with it
    if service.own_address() != where:
        return 2
    lock = _lock(where)
    if lock is None:
        return 0
    try:
        idle = float(os.environ.get(f"SHELLGATE_{name.upper()}_DAEMON_IDLE", IDLE_S))
    except ValueError:
        idle = IDLE_S
    service.warm_up()
    # forking is only safe with one thread: a lock held by another thread
    # at the fork would be held forever in the child
    if threading.active_count() != 1:
        return 1
    # what the warm-up made is shared by every child: frozen, the collector
    # leaves it alone, and a child copies fewer pages
    gc.freeze()
    daemon = Daemon(where, max(0.1, idle), service, lock)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        daemon.bind()
        daemon.serve()
    finally:
        daemon.close()
        os.close(lock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
