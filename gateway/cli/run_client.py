"""The client side of ``shellgate run``'s warm daemon: standard library
only (C modules), run by ``main()`` before anything else is imported.

A cold ``shellgate run -- true`` spends most of its time importing the
sandbox (about 40 ms on a small machine, twice a bare ``python -c pass``);
the sandbox itself costs about 10 ms. A warm daemon (:mod:`.run_daemon`)
has imported it once, and runs each call in a child forked for it, which
takes this process's standard streams and working directory (passed as
descriptors over the socket, ``SCM_RIGHTS``), its umask, its environment
and its arguments, and runs the verb exactly as this process would. This
one waits for the exit status and exits with it.

What is the same as a run in this process: the command's output goes to
the same descriptors (a terminal stays a terminal, a pipe a pipe), its
stdin is this process's, its exit status and shellgate's own messages are
the same, Ctrl-C stops it (the child gets the interrupt: the tree is killed
and the post-run guards run), and when this process dies (SIGTERM,
SIGKILL, a closed terminal) the command is stopped too: the child sees the
socket close. A call is served by a daemon started with the same state
only (see :func:`.warm_client.facts`); anything else, and any failure before the child
has taken the call, runs the verb in this process. What differs: the
command is a descendant of the daemon, not of this process, so a shell's
``time`` or a process-tree walk from here does not see its CPU time or
its processes.

Never twice: the request is sent only once a child has said it is there,
and after it is sent the call is the child's unless it refuses in so
many words (or closes the socket before saying it runs the command). So a
call that waited in a busy daemon's backlog, and is then run here, is
never also run there.

``SHELLGATE_RUN_DAEMON=0`` turns the daemon off.
"""

from __future__ import annotations

import os
import sys

from . import warm_client
from .warm_client import socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["confined", "request", "run"]

#: a child says it is there before the request is sent ...
HELLO = b"?"
#: ... then that it runs the command, or refuses (the rest of the line: why)
RUNS = b"+"
REFUSED = b"-"
#: and at the end, ``=<status>``
STATUS = b"="
#: sent to the child on Ctrl-C
INTERRUPT = b"i"
#: what opens a request
MAGIC = b"shellgate-run"
#: the descriptors passed: stdin, stdout, stderr, the working directory
PASSED_FDS = 4
#: the exit status when the child was lost after it started the command
EXIT_LOST = 125


def confined() -> bool:
    """Is this process under no-new-privileges? Landlock (which /proc does
    not show) needs it for anyone but root, and so do most confinements
    (containers' no-new-privileges, systemd's NoNewPrivileges=): such a
    client runs in its own process, where its confinement holds the
    sandbox too. From a review: a client confined by Landlock wrote, through
    a daemon that was not, a file its own process could not."""
    return any(line.split() == [b"NoNewPrivs:", b"1"]
               for line in warm_client.read_proc("/proc/self/status").splitlines())


def request(words: Sequence[str], env: Mapping[bytes, bytes], key: str) -> bytes:
    """A request: length-prefixed, NUL-separated fields (no field holds a NUL:
    arguments and the environment cannot). No umask: the daemon reads the
    client's own from /proc."""
    fields = [MAGIC, str(warm_client.PROTOCOL).encode(), warm_client.VERSION.encode(),
              key.encode(), str(len(words)).encode(),
              *(os.fsencode(w) for w in words), *(k + b"=" + v for k, v in env.items())]
    body = b"\0".join(fields)
    return len(body).to_bytes(4, "big") + body


def run(words: Sequence[str], service: str = "run") -> int | None:
    """``shellgate run`` (or ``check``: ``service``, the verb, the first of
    ``words``) with ``words`` through its warm daemon: its exit status, or
    None when it is to run in this process."""
    env = os.environ
    # Linux only: the state it compares is read from /proc, the peer's
    # user from SO_PEERCRED
    if sys.platform != "linux" or not warm_client.enabled(env, service) or confined():
        return None
    extra = warm_client.facts()
    where = warm_client.address(env, service, extra)
    if where is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        return _call(sock, where, words, extra, service)
    finally:
        sock.close()


def _call(sock: socket.socket, where: str, words: Sequence[str], mine: list[str],
          service: str) -> int | None:
    env = os.environ
    try:
        sock.settimeout(warm_client.ACK_S)
        try:
            sock.connect(where)
        except (FileNotFoundError, ConnectionRefusedError):
            warm_client.start(where, env, service)
            return None
        if (warm_client.peer_uid(sock) != os.getuid()
                or warm_client.same_state_peer(sock, mine) is None):
            return None
        # no request before a child has the call: one still in the backlog
        # when this process gives up is closed unsent, and runs nothing
        if sock.recv(1) != HELLO:
            return None
        # O_PATH: a directory the user may enter but not list is a cwd too
        cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None  # no daemon, a busy or stopped one, no working directory
    try:
        data = request(words, os.environb, warm_client.key(env, mine))
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, cwd))
        sock.settimeout(None)
        sent = sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        if sent < len(data):
            sock.sendall(data[sent:])
    except OSError:
        pass  # the child runs nothing before the whole request, and says so
    finally:
        os.close(cwd)
    return _wait(sock)


def _wait(sock: socket.socket) -> int | None:
    """The child's word on the call, then its exit status (None: run it
    here). Ctrl-C here is passed to the child, which stops the command as a
    run in this process would and reports its status."""
    interrupted = started = False
    reply = b""
    while len(reply) < 256:
        try:
            chunk = sock.recv(256)
        except KeyboardInterrupt:
            interrupted = True
            _send(sock, INTERRUPT)
            continue
        except OSError:
            chunk = b""
        if not chunk:
            break
        reply += chunk
        if not started and reply[:1] == RUNS:
            started, reply = True, reply[1:]
        if not started and reply[:1] == REFUSED and reply.endswith(b"\n"):
            break
        if started and reply[:1] == STATUS and reply.endswith(b"\n"):
            try:
                return int(reply[1:-1])
            except ValueError:
                break
    if not started:
        # it never said it runs the command, so nothing ran: run it here,
        # unless the user interrupted it meanwhile
        return 130 if interrupted else None
    try:
        sys.stderr.write("shellgate: the warm daemon's child that ran the command ended "
                         "before it; the command was stopped\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return EXIT_LOST


def _send(sock: socket.socket, data: bytes) -> None:
    try:  # noqa: SIM105 -- contextlib costs a cold run collections and functools
        sock.sendall(data)
    except OSError:
        pass
