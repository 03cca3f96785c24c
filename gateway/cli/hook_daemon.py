"""The warm daemon behind ``shellgate hook`` (see :mod:`.hook_client`).

Started by a hook call that found none (``python -P -m
gateway.cli.hook_daemon SOCKET``), it imports the judgement once, warms it
on a throwaway project, and then answers each connection in a **forked
child**: the child judges the one call exactly as the in-process hook
would — it reads the settings, the trust file, the repository's facts and
writes the audit log afresh — and exits. So:

- a settings file changed since the last call is read as it is now: the
  daemon keeps nothing a judgement derives from the user's files (only
  imports, compiled tables and the package's own data);
- one call cannot leave anything behind for the next, and a call that
  costs the analyzer its memory or its time (``"a|" * 50000``) costs a
  child, not the daemon: the client falls back to its own judgement;
- the daemon's own state never changes after the warm-up.

It answers only a client of its own protocol and version, from its own
user. It exits when idle (``SHELLGATE_HOOK_DAEMON_IDLE`` seconds, default
600), when its socket is removed or replaced, and when the package's
files change under it (an upgrade, an edited profile): it says "stale" to
the call that finds out, which is then judged in the client's process.
Only one daemon serves a socket: it holds an exclusive lock beside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from . import hook_client

#: default idle time before the daemon exits
IDLE_S = 600.0
#: children at once (spares and those judging); past it, calls wait in the
#: socket's backlog, and their clients judge them past their share of time
MAX_CHILDREN = 8
#: children warmed and waiting for a call
SPARES = 2
#: what a spare judges before it waits: the commonest calls (a spare costs
#: the machine this much CPU after each call; the daemon warmed the rest)
_SPARE_WARM_UP = ("Bash", "Read")
#: a child's exit status when it found the package changed
_STALE = 3
#: a request is a page; a larger one is not a hook call
MAX_REQUEST_BYTES = 17 << 20
#: how long a child waits for its request's bytes
REQUEST_TIMEOUT_S = 5.0
#: the longest a judgement may take in a child, whatever the client said
MAX_JUDGEMENT_S = 30.0
#: the libraries whose upgrade makes the daemon stale (those it has loaded)
_LIBRARIES = ("tree_sitter", "tree_sitter_bash", "pydantic", "pydantic_core", "httpx")
#: the directories whose files make the daemon's version
_SOURCES = ("gateway", "analyzers", "sandbox", "profiles", "values", "regexes")


def fingerprint(root: str = hook_client.PACKAGE_ROOT) -> tuple[tuple[str, int, int], ...]:
    """Name, mtime and size of every source and data file of the package:
    when it changes, this daemon's code is not the code installed."""
    out: list[tuple[str, int, int]] = []
    stack = [os.path.join(root, name) for name in _SOURCES]
    while stack:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(entry.path)
            elif entry.name.endswith((".py", ".toml", ".json", ".sbpl")):
                with contextlib.suppress(OSError):
                    st = entry.stat()  # a linked file: its target's change counts
                    out.append((entry.path, st.st_mtime_ns, st.st_size))
    # the libraries the judgement runs on: an upgrade replaces files in
    # their directories, and changes the directories' times
    for module in _LIBRARIES:
        found = sys.modules.get(module)
        where = os.path.dirname(getattr(found, "__file__", None) or "") if found else ""
        with contextlib.suppress(OSError):
            if where:
                st = os.stat(where)
                out.append((where, st.st_mtime_ns, st.st_size))
    return tuple(sorted(out))


def warm_up(tools: tuple[str, ...] | None = None) -> None:
    """Import and exercise every path a judgement of ``tools`` (default:
    all) takes, on a throwaway project with a throwaway audit log, so that
    each child starts warm."""
    from .hook import JUDGED, answer  # noqa: PLC0415

    saved = {k: os.environ.get(k) for k in ("SHELLGATE_AUDIT_LOG", "CLAUDE_PROJECT_DIR")}
    with tempfile.TemporaryDirectory(prefix="shellgate-warm-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "README.md").write_text("warm\n")
        os.environ["SHELLGATE_AUDIT_LOG"] = str(Path(tmp) / "audit.jsonl")
        os.environ["CLAUDE_PROJECT_DIR"] = str(project)
        inputs: dict[str, dict[str, Any]] = {
            "Bash": {"command": "git log --oneline -5 && cat README.md | grep -c warm"},
            "Read": {"file_path": str(project / "README.md")},
            "Edit": {"file_path": str(project / "README.md"), "old_string": "warm",
                     "new_string": "cold"},
            "Write": {"file_path": str(project / "new.txt"), "content": "x"},
            "Glob": {"pattern": "*.md"},
            "Grep": {"pattern": "warm"},
            "WebFetch": {"url": "https://example.com/", "prompt": "x"},
            "NotebookEdit": {"notebook_path": str(project / "a.ipynb"), "new_source": "x"},
        }
        try:
            for name in JUDGED if tools is None else tools:
                with contextlib.suppress(Exception):
                    answer({"hook_event_name": "PreToolUse", "tool_name": name,
                            "tool_input": inputs.get(name, {}), "cwd": str(project),
                            "session_id": "warm-up", "tool_use_id": "toolu_warm"})
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


class Daemon:
    """The listening socket, and the children that answer on it.

    A child is forked *before* its call arrives: it judges a throwaway call
    first (copying the pages a judgement touches — a fork's copy-on-write
    faults cost a cold child 15 ms), then waits in ``accept``, answers one
    call, and exits. It tells the daemon when it took a call (its pid on a
    pipe), and the daemon forks the next spare at once."""

    def __init__(self, where: str, idle: float) -> None:
        self.where = where
        self.idle = idle
        self.sources = fingerprint()
        self.listener: socket.socket | None = None
        self.inode: tuple[int, int] | None = None
        self.spares: set[int] = set()
        self.busy: set[int] = set()
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
        os.chmod(self.where, 0o600)
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
        while True:
            self.reap()
            if self.stale or not self.ours():
                return
            now = time.monotonic()
            if now - checked >= 5.0:
                checked = now
                if fingerprint() != self.sources:
                    return
            if now - last >= self.idle and not self.busy:
                return
            while len(self.spares) < SPARES and len(self.spares | self.busy) < MAX_CHILDREN:
                self.spares.add(self.fork_spare())
            timeout = max(0.05, min(self.idle - (now - last), 1.0))
            if select.select([self.took_r], [], [], timeout)[0]:
                data = os.read(self.took_r, 4096)
                for (pid,) in struct.iter_unpack("i", data[: len(data) // 4 * 4]):
                    self.spares.discard(pid)
                    self.busy.add(pid)
                last = time.monotonic()

    def fork_spare(self) -> int:
        pid = os.fork()
        if pid == 0:  # pragma: no cover -- the child, measured through the CLI
            _spare(self)
        return pid

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.spares.discard(pid)
            self.busy.discard(pid)
            if os.waitstatus_to_exitcode(status) == _STALE:
                self.stale = True

    def close(self) -> None:
        for pid in self.spares | self.busy:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.listener is not None:
            if self.ours():
                with contextlib.suppress(OSError):
                    os.unlink(self.where)
            self.listener.close()


def _spare(daemon: Daemon) -> None:
    """A spare child: warm its pages, answer one call, exit; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(daemon.took_r)
        warm_up(_SPARE_WARM_UP)
        listener = daemon.listener
        assert listener is not None
        conn = _accept(listener, daemon.pid)
        os.write(daemon.took_w, struct.pack("i", os.getpid()))
        listener.close()
        with conn:
            if hook_client.peer_uid(conn) != os.getuid():
                code = 0  # not ours to answer: closed unanswered
                return
            conn.sendall(hook_client.ACK)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_REAL, REQUEST_TIMEOUT_S)
            if fingerprint() != daemon.sources:
                _reply(conn, {"stale": "the package changed under the daemon"})
                code = _STALE
                return
            _reply(conn, _judged(_read_request(conn)))
        code = 0
    except BaseException:  # the client judges the call itself
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


def _read_request(conn: socket.socket) -> dict[str, Any]:
    conn.settimeout(REQUEST_TIMEOUT_S)
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            raise ValueError("the request is too large")
        chunks.append(chunk)
    request = json.loads(b"".join(chunks).decode("ascii"))
    if not isinstance(request, dict):
        raise ValueError("the request is not an object")
    return request


def _judged(request: dict[str, Any]) -> dict[str, Any]:
    """The message for one request, as the guard's judging child makes it."""
    if (request.get("protocol") != hook_client.PROTOCOL
            or request.get("version") != hook_client.VERSION):
        return {"stale": "another version of shellgate"}
    if request.get("key") != hook_client.key(os.environ):
        return {"stale": "a call of another environment"}
    cwd, umask, deadline = request.get("cwd"), request.get("umask"), request.get("deadline")
    if not isinstance(cwd, str) or not isinstance(umask, int) or not isinstance(
            deadline, (int, float)):
        return {"stale": "a malformed request"}
    # the client's own working directory and umask: a relative audit log
    # path (SHELLGATE_AUDIT_LOG=log) means the same file as in-process
    os.chdir(cwd)
    os.umask(umask & 0o777)
    signal.setitimer(signal.ITIMER_REAL, max(0.1, min(float(deadline), MAX_JUDGEMENT_S)))
    payload = request.get("payload")
    if not isinstance(payload, dict):
        return {"error": "the hook input is not a JSON object"}
    from .hook import answer  # noqa: PLC0415 -- imported by the warm-up

    try:
        return {"answer": answer(payload)}
    except BaseException as exc:  # each failure is reported, as in-process
        from .hook_guard import why  # noqa: PLC0415

        return {"error": why(exc)}


def _reply(conn: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n")


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
    if len(argv) != 1:
        print("usage: python -m gateway.cli.hook_daemon SOCKET", file=sys.stderr)
        return 2
    where = argv[0]
    # the socket this environment names, in a directory that is ours: a
    # daemon started with another environment would judge with it
    if hook_client.address(os.environ) != where:
        return 2
    lock = _lock(where)
    if lock is None:
        return 0
    try:
        idle = float(os.environ.get("SHELLGATE_HOOK_DAEMON_IDLE", IDLE_S))
    except ValueError:
        idle = IDLE_S
    warm_up()
    # forking is only safe with one thread: a lock held by another thread
    # at the fork would be held forever in the child
    if threading.active_count() != 1:
        return 1
    # what the warm-up made is shared by every child: frozen, the collector
    # leaves it alone, and a child copies fewer pages
    gc.freeze()
    daemon = Daemon(where, max(0.1, idle))
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
