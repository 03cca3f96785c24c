"""``shellgate run``'s warm daemon (see :mod:`.warm_daemon` for the daemon
and :mod:`.run_client` for the client and what a call through it keeps).

The daemon imports the run verb and the sandbox, and runs ``true`` in the
sandbox once in a throwaway directory, so that its children start with
every module loaded and every table built. A child takes one call: the
client's standard streams and working directory (descriptors), its umask,
environment and arguments; it checks that the client's state is the
daemon's (the key: the environment and the process's inherited state), and
runs the verb as the client's own process would, in the client's place.

A run is long; the child watches the socket the whole time: a Ctrl-C the
client passes on, or the client gone (killed, its terminal closed), is an
interrupt in the child's main thread — what Ctrl-C is to a run in the
client's own process: the tree is killed and the post-run guards run.
"""

from __future__ import annotations

import array
import contextlib
import io
import os
import signal
import socket
import sys
import threading

from . import run_client, warm_client
from .warm_daemon import STALE, scratch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .warm_sources import Sources

#: runs at once through the daemon (each a child supervising its command);
#: past it, calls wait in the backlog and their clients run them themselves
MAX_CHILDREN = 64
#: no run daemon on a kernel without SO_PEERPIDFD: the client's pid from
#: SO_PEERCRED may be another process's by the time /proc is read
PID_FALLBACK = False
#: a request: the arguments and the environment (the kernel's own limit on
#: both together is a few MiB)
MAX_REQUEST_BYTES = 16 << 20
#: how long a child waits for its request's bytes
REQUEST_TIMEOUT_S = 5.0


def own_address() -> str | None:
    return warm_client.address(os.environ, "run", warm_client.facts())


def warm_up() -> None:
    """Import the verb and run ``true`` once in the sandbox, in the daemon's
    throwaway directory (output to /dev/null; any failure leaves the daemon
    as warm as it got)."""
    # the settings loader, for a call in a project that has settings when
    # the warm-up's own directory and home had none
    from .. import permissions  # noqa: F401, PLC0415
    from . import main, parser, run  # noqa: F401, PLC0415 -- loaded once, for the children

    here = scratch(make=True)
    if here is not None:
        with contextlib.suppress(BaseException):
            main(["run", "--cwd", here, "--", "true"])
    # a run leaves the host-path watch's thread waiting for the next: the
    # daemon forks its children with one thread (warm_daemon.main)
    from sandbox import stop_idle_threads  # noqa: PLC0415

    stop_idle_threads()


def warm_spare() -> None:
    """Rehearse a run of ``true`` in the daemon's throwaway directory, up to the point
    where bubblewrap would start (the arguments parsed, the policy, the
    plan, the seccomp filter, bubblewrap's arguments), and release it: a
    spare forked from the daemon would otherwise take a copy-on-write fault
    on each page of the run path the first time the call touches it
    (measured: the plan 9.5 -> 6 ms, the launch's preparation 3.3 -> 2 ms).
    No command is started: bubblewrap's mounts would compete with the call
    the previous spare is serving (on a small machine, slowing it more
    than the warm-up saves). Nothing from the rehearsal is kept for the
    call, which plans afresh; any failure leaves the spare as warm as it got."""
    from .fastpath import fast_parse  # noqa: PLC0415 -- loaded by the warm-up
    from .run import rehearse_run  # noqa: PLC0415

    here = scratch()  # the daemon's: one repository-walk cache for all its spares
    with contextlib.suppress(BaseException):
        args = fast_parse(["run", "--", "true"])  # as a plain call is read
        if args is not None and here is not None:
            args.cwd = here
            rehearse_run(args)  # type: ignore[arg-type]
    # the rehearsal armed the host-path watch, whose thread waits for the
    # next run: the call starts it again, as it would in the daemon's child
    from sandbox import stop_idle_threads  # noqa: PLC0415

    stop_idle_threads()


def serve(conn: socket.socket, sources: Sources, status: bytes) -> int:
    """Take one call on ``conn`` from a client whose /proc status is
    ``status`` (checked: warm_daemon) and run it; the command's status goes
    back on it."""
    return serve_verb("run", conn, sources, status)


def serve_verb(verb: str, conn: socket.socket, sources: Sources, status: bytes) -> int:
    """:func:`serve` for a daemon of ``verb`` (``run``; ``check``:
    :mod:`.check_daemon`): a call of another verb is refused unrun."""
    umask = _umask(status)
    if umask is None:
        return 0  # closed unanswered: the client runs it itself
    conn.sendall(run_client.HELLO)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # a client that stalls ends the child
    signal.setitimer(signal.ITIMER_REAL, REQUEST_TIMEOUT_S)
    data, fds = _receive(conn)
    try:
        if sources.changed():
            _refuse(conn, "the package changed under the daemon")
            return STALE
        call = _parse(data, len(fds))
        if not isinstance(call, str) and call[0][:1] != [verb]:
            call = f"a call of another verb than {verb}"
        if isinstance(call, str):
            _refuse(conn, call)
            return 0
        words, env = call
        signal.setitimer(signal.ITIMER_REAL, 0)
        _adopt(fds, env, umask)
    finally:
        for fd in fds:
            os.close(fd)
    return _run(conn, words)


def _umask(status: bytes) -> int | None:
    """The umask in a /proc status (the client's own, not what it says)."""
    for line in status.splitlines():
        if line.startswith(b"Umask:"):
            try:
                return int(line.split()[1], 8)
            except (IndexError, ValueError):
                return None
    return None


def _receive(conn: socket.socket) -> tuple[bytes, list[int]]:
    """The request's bytes and the descriptors that came with them."""
    fds = array.array("i")
    size = fds.itemsize
    data, ancillary, flags, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(size * 8))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % size])
    received = list(fds)
    if flags & socket.MSG_CTRUNC:
        received.append(-1)  # more than were asked for: refused below
    if len(data) < 4:
        return b"", [fd for fd in received if fd >= 0]
    want = int.from_bytes(data[:4], "big")
    chunks = [data[4:]]
    got = len(data) - 4
    while got < want and got <= MAX_REQUEST_BYTES:
        chunk = conn.recv(min(1 << 20, want - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    body = b"".join(chunks)
    if len(body) != want or -1 in received:
        body = b""
    return body, [fd for fd in received if fd >= 0]


def _parse(data: bytes, nfds: int) -> tuple[list[str], dict[bytes, bytes]] | str:
    """The call's arguments and environment, or why it is refused."""
    fields = data.split(b"\0")
    if len(fields) < 5 or fields[0] != run_client.MAGIC or nfds != run_client.PASSED_FDS:
        return "a malformed request"
    if fields[1] != str(warm_client.PROTOCOL).encode() or fields[2] != warm_client.VERSION.encode():
        return "another version of shellgate"
    try:
        argc = int(fields[4])
    except ValueError:
        return "a malformed request"
    words = [os.fsdecode(w) for w in fields[5:5 + argc]]
    pairs = fields[5 + argc:]
    if len(words) != argc or any(b"=" not in p for p in pairs):
        return "a malformed request"
    env = dict(p.split(b"=", 1) for p in pairs)
    facts = warm_client.facts()
    own = warm_client.key(os.environ, facts)
    # the environment the client sent must be the one its key names, and the
    # daemon's: the daemon's modules were loaded with its environment
    # (from a review of the hook's daemon: a link from one environment's
    # socket to another's had a call served with the other's HOME)
    theirs = warm_client.key({os.fsdecode(k): os.fsdecode(v) for k, v in env.items()}, facts)
    if fields[3].decode("ascii", "replace") != own or theirs != own:
        return "a call of another environment"
    return words, env


def _refuse(conn: socket.socket, why: str) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(run_client.REFUSED + why.encode("ascii", "replace") + b"\n")


def _adopt(fds: list[int], env: dict[bytes, bytes], umask: int) -> None:
    """Take the client's place: its standard streams, working directory,
    umask and environment (the volatile part the key leaves out: PWD …)."""
    # what the warm-ups left in the daemon's own stream buffers goes to the
    # daemon's /dev/null now, not to the client's descriptors once they
    # are 0-2: from the suite's unprivileged leg, a check warm-up's verdict
    # (a block-buffered stdout, copied by the fork) came out at the head of
    # the client's output
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)  # inheritable, as the client's were
    os.fchdir(fds[3])
    os.umask(umask & 0o777)
    os.environ.clear()
    os.environb.update(env)
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        stream = io.TextIOWrapper(
            io.open(fd, "rb" if fd == 0 else "wb", closefd=False),  # noqa: SIM115, UP020
            encoding=old.encoding, errors=old.errors,
            # as Python makes them: stdout line-buffered on a terminal,
            # stderr always
            line_buffering=fd == 2 or (fd == 1 and os.isatty(1)),
            write_through=getattr(old, "write_through", False))
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run(conn: socket.socket, words: list[str]) -> int:
    """Run the verb with the socket watched; send its status."""
    main_thread = threading.main_thread().ident
    assert main_thread is not None
    done = threading.Lock()
    finished = False
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def watch() -> None:
        # an interrupt passed on by the client, or the client gone: one
        # SIGINT per run (a second one, in the middle of the kill of the
        # tree, is what a review used to stop that kill halfway)
        while True:
            try:
                data = conn.recv(64)
            except OSError:
                data = b""
            if data and run_client.INTERRUPT not in data:
                continue
            with done:
                if not finished:
                    signal.pthread_kill(main_thread, signal.SIGINT)
            return

    threading.Thread(target=watch, name="run-client", daemon=True).start()
    code = 130
    try:
        conn.sendall(run_client.RUNS)
        from . import main  # noqa: PLC0415 -- loaded by the warm-up

        code = _status(main, words)
    except KeyboardInterrupt:
        code = 130
    finally:
        with done:
            finished = True
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    with contextlib.suppress(OSError):
        conn.sendall(run_client.STATUS + str(code).encode() + b"\n")
    return 0


def _status(main: object, words: list[str]) -> int:
    """The verb's exit status, as the process's own would be (argparse's
    usage errors leave by SystemExit)."""
    try:
        code = main(words)  # type: ignore[operator]
    except SystemExit as exc:
        code = exc.code
    if code is None:
        return 0
    if not isinstance(code, int):
        print(code, file=sys.stderr)  # as Python does with SystemExit("why")
        return 1
    return code
