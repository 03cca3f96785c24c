"""The client side of ``shellgate hook``'s daemon: standard library only,
run by the guard before any heavy import.

Claude Code starts a new hook process for every tool call, and importing
the analyzer, the settings models and the pipeline costs a Python process
about a third of a second. A warm daemon (:mod:`.hook_daemon`) has paid
that once; the guard hands it the call over a unix socket and prints its
answer. When there is no daemon, the guard starts one for the next calls
and judges this call itself, as before.

Where the socket is, and who may use it:

- ``$XDG_RUNTIME_DIR/shellgate/hook-<key>.sock``. The runtime directory
  must be the user's own and closed to others (``0700``, as the XDG spec
  has it); otherwise — or with no ``XDG_RUNTIME_DIR`` at all — there is no
  daemon and each call is judged in its own process. A directory others
  may enter would let another user put a socket there that answers
  ``allow``.
- ``<key>`` hashes the protocol, the package's version and place, the
  interpreter, the user and the whole environment (less ``PWD`` and the
  like): the daemon judges with the environment it was started with
  (``HOME``, ``CLAUDE_PROJECT_DIR``, the audit log's place and key), so a
  call from another environment reaches another daemon, never one that
  would judge it with the wrong home or log.
- Both ends check the other's user id (``SO_PEERCRED``).

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

import contextlib
import json
import os
import select
import stat
import sys
import time

# The C modules under hashlib and socket, when they are there: every hook
# call pays for its imports, and hashlib (OpenSSL) and socket (its enums)
# cost 8 ms of a 30 ms call; the objects are the same.
try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover -- a Python built without it
    from hashlib import blake2b
try:
    import _socket as socket
except ImportError:  # pragma: no cover
    import socket  # type: ignore[no-redef]

#: what client and daemon must agree on; bumped when the messages change
PROTOCOL = 1
#: the package's version, part of the socket's key
VERSION = "0.1.0"
#: the environment variables that change between calls of one agent and
#: mean nothing to a judgement (the call's cwd is sent with it)
_VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})
#: a daemon is started at most this often (a daemon that cannot start must
#: not cost every call a start)
SPAWN_INTERVAL_S = 10.0
#: the longest the daemon is waited for before the call is judged here:
#: a share of what is left of the deadline, so that the in-process
#: judgement still has time after a hung daemon
DAEMON_SHARE = 0.5
#: what a daemon's child sends the moment it takes a call, and how long
#: the client waits for it
ACK = b"+"
ACK_S = 1.0
#: an answer is a page; a larger one is not the daemon's
MAX_REPLY_BYTES = 4 << 20
#: unix socket paths are limited to 108 bytes by the kernel
_MAX_SOCKET_PATH = 100

#: the package's root: the directory holding gateway/, analyzers/, …
#: (os.path, not pathlib: pathlib costs a hook call 7 ms to import)
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


class Absent(Exception):
    """No daemon answered: judge the call here."""


def enabled(env: dict[str, str] | os._Environ[str]) -> bool:
    return env.get("SHELLGATE_HOOK_DAEMON", "1").strip().lower() not in ("0", "off", "no", "false")


def key(env: dict[str, str] | os._Environ[str]) -> str:
    """The daemon's name for this user, install and environment."""
    material = json.dumps([PROTOCOL, VERSION, PACKAGE_ROOT, sys.executable, os.getuid(),
                           sorted((k, v) for k, v in env.items() if k not in _VOLATILE)],
                          ensure_ascii=True)
    return blake2b(material.encode("ascii"), digest_size=16).hexdigest()


def runtime_dir(env: dict[str, str] | os._Environ[str]) -> str | None:
    """``$XDG_RUNTIME_DIR/shellgate``, made if need be, when both are the
    user's own and closed to others (``None`` otherwise)."""
    base = env.get("XDG_RUNTIME_DIR", "")
    if not base or not os.path.isabs(base) or not _private(base):
        return None
    here = os.path.join(base, "shellgate")
    with contextlib.suppress(FileExistsError):
        os.mkdir(here, 0o700)
    return here if _private(here) else None


def _private(path: str) -> bool:
    """A real directory (no link), ours, that no one else may enter."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and st.st_mode & 0o077 == 0)


def address(env: dict[str, str] | os._Environ[str]) -> str | None:
    """Where this environment's daemon listens (``None``: no daemon here)."""
    if not enabled(env):
        return None
    here = runtime_dir(env)
    if here is None:
        return None
    path = os.path.join(here, f"hook-{key(env)}.sock")
    return path if len(path) <= _MAX_SOCKET_PATH else None


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of ``sock``
    (``struct ucred``: pid, uid, gid, each a native int)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder, signed=True)


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
            start(where, env)
            raise Absent("the daemon was not running") from None
        except OSError as exc:
            raise Absent(f"the daemon's socket: {exc}") from None
        if peer_uid(sock) != os.getuid():
            raise Absent("the daemon's socket belongs to another user")
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


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def start(where: str, env: dict[str, str] | os._Environ[str]) -> None:
    """Start the daemon for ``where`` in the background, at most once per
    :data:`SPAWN_INTERVAL_S` (the daemon itself makes sure only one runs)."""
    stamp = where.removesuffix(".sock") + ".started"
    try:
        # O_NONBLOCK, and a regular file of ours only: from a review, a FIFO
        # planted at this name made the open block for ever, and the hook
        # printed nothing (Claude Code runs the call)
        fd = os.open(stamp, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                     | os.O_NONBLOCK, 0o600)
        try:
            st = os.fstat(fd)
            # one link only: a hard link planted here would have another
            # file truncated (from a review)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_nlink != 1:
                return
            if st.st_size and time.time() - st.st_mtime < SPAWN_INTERVAL_S:
                return
            os.ftruncate(fd, 0)
            os.write(fd, b"1")
        finally:
            os.close(fd)
        import subprocess  # noqa: PLC0415 -- only when a daemon is started

        # its own session and no inherited descriptors: Claude Code waits for
        # the hook's stdout to close, and kills the hook's process group
        subprocess.Popen(
            [sys.executable, "-P", "-m", "gateway.cli.hook_daemon", where],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd="/", env=dict(env), start_new_session=True, close_fds=True)
    except OSError:
        return  # no daemon: every call is judged in its own process
