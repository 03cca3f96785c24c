"""The client side of ``shellgate hook``'s daemon: standard library only,
run by the guard before any heavy import.

Claude Code starts a new hook process for every tool call, and importing
the analyzer, the settings models and the pipeline costs a Python process
about a third of a second. A warm daemon (:mod:`.hook_daemon`) has paid
that once; the guard hands it the call over a unix socket and prints its
answer. When there is no daemon, the guard starts one for the next calls
and judges this call itself, as before.

Where the socket is and who may use it: see :mod:`.warm_client`
(``hook-<key>.sock``; the key covers the environment the daemon judges
with: ``HOME``, ``CLAUDE_PROJECT_DIR``, the audit log's place and key).

What the daemon says is checked like the in-process judgement's answer:
only one of the three well-formed decisions is printed; anything else
(no daemon, a daemon that is stale, busy, hung, dead or talking nonsense)
sends the call to the in-process judgement — the daemon never makes the
hook more permissive than it is without it. The daemon is the user's own
process: a program already running as the user could as well rewrite the
user's settings, so the socket is not defended against the same user.

``SHELLGATE_HOOK_DAEMON=0`` turns the daemon off.
"""

from __future__ import annotations

import json
import os
import select
import time

from . import warm_client
from .warm_client import ACK, ACK_S, PROTOCOL, VERSION, Absent, key, peer_uid, socket, start
from .warm_client import umask as _umask

__all__ = ["ACK", "ACK_S", "PROTOCOL", "VERSION", "Absent", "address", "ask", "key"]

#: the longest the daemon is waited for before the call is judged here:
#: a share of what is left of the deadline, so that the in-process
#: judgement still has time after a hung daemon
DAEMON_SHARE = 0.5
#: an answer is a page; a larger one is not the daemon's
MAX_REPLY_BYTES = 4 << 20


def address(env: dict[str, str] | os._Environ[str]) -> str | None:
    """Where this environment's hook daemon listens (``None``: no daemon)."""
    return warm_client.address(env, "hook")


def ask(payload: object, end: float, env: dict[str, str] | os._Environ[str]) -> object:
    """The daemon's message for ``payload`` (a dict with ``answer``, or
    ``error``). Raises :class:`Absent` when no daemon answered in its share
    of the time left — the caller judges the call itself."""
    where = address(env)
    if where is None:
        raise Absent("no daemon here")
    wait_until = time.monotonic() + max(0.0, end - time.monotonic()) * DAEMON_SHARE
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(max(0.01, wait_until - time.monotonic()))
        try:
            sock.connect(where)
        except (FileNotFoundError, ConnectionRefusedError):
            start(where, env, "hook")
            raise Absent("the daemon was not running") from None
        except OSError as exc:
            raise Absent(f"the daemon's socket: {exc}") from None
        if peer_uid(sock) != os.getuid():
            raise Absent("the daemon's socket belongs to another user")
        # and the daemon is in this process's state: a command in a sandbox
        # is the same user, and could bind a socket where this one looks
        # (see warm_client.same_state_peer) and answer "allow"
        if warm_client.same_state_peer(sock, warm_client.facts(), pid_fallback=True) is None:
            raise Absent("the daemon is not in this process's namespaces and state")
        # the key: the daemon judges with its own environment, and answers
        # only a call of that environment (from a review: a link from one
        # environment's socket to another's had a call judged with the
        # other's HOME and project, and a key in ~/.ssh was allowed)
        request = {"protocol": PROTOCOL, "version": VERSION, "key": key(env), "cwd": _cwd(),
                   "umask": _umask(), "deadline": max(0.0, end - time.monotonic()),
                   "payload": payload}
        sock.sendall(json.dumps(request, ensure_ascii=True).encode("ascii") + b"\n")
        sock.shutdown(socket.SHUT_WR)
        # A child that took the call says so at once: a daemon whose
        # children are all stopped or busy costs a call ACK_S, not its share
        # of the deadline (the connection sits in the kernel's backlog)
        first = _read_all(sock, min(wait_until, time.monotonic() + ACK_S), 1)
        if first != ACK:
            raise Absent("the daemon did not take the call")
        reply = _read_all(sock, wait_until)
    except OSError as exc:
        raise Absent(f"the daemon: {exc}") from None
    finally:
        sock.close()
    try:
        message = json.loads(reply.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        raise Absent("the daemon's reply is not JSON") from None
    if not isinstance(message, dict) or not ("answer" in message or "error" in message):
        raise Absent(f"the daemon did not answer ({str(message)[:80]})")
    return message


def _read_all(sock: socket.socket, until: float, most: int = MAX_REPLY_BYTES) -> bytes:
    """What ``sock`` sends until its end, or ``most`` bytes, by ``until``."""
    chunks: list[bytes] = []
    size = 0
    while size < most:
        left = until - time.monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            raise Absent("the daemon did not answer in time")
        chunk = sock.recv(min(1 << 16, most - size))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        chunks.append(chunk)
    if most == MAX_REPLY_BYTES:
        raise Absent("the daemon's reply is too large")
    return b"".join(chunks)


def _cwd() -> str:
    """This process's directory; none (removed) is judged in-process, where
    a relative path means what it means here (from a review: the daemon
    read the relative audit log as /…, and allowed what in-process asked)."""
    try:
        return os.getcwd()
    except OSError:
        raise Absent("no working directory") from None
