"""What the clients of shellgate's warm daemons share: standard library
only (C modules where they exist), imported before anything heavy.

``shellgate hook`` and ``shellgate run`` are started anew for every call,
and most of such a process's time is Python importing shellgate. A warm
daemon (:mod:`.warm_daemon`) has paid that once; the client hands it the
call over a unix socket. One daemon per *service* (``hook``, ``run``), user,
install and environment.

Where the socket is, and who may use it:

- ``$XDG_RUNTIME_DIR/shellgate/<service>-<key>.sock``. The runtime
  directory must be the user's own and closed to others (``0700``, as the
  XDG spec has it); otherwise — or with no ``XDG_RUNTIME_DIR`` at all —
  there is no daemon and each call is served in its own process. A
  directory others may enter would let another user put a socket there
  that answers for the daemon. The directory is hidden from every
  sandboxed command (sandbox/runner.py): a command must never reach a
  daemon that runs or judges commands.
- ``<key>`` hashes the protocol, the package's version and place, the
  interpreter, the user and the whole environment (less ``PWD`` and the
  like), and whatever else a service names (``run``: the process's
  limits, groups, cgroup and namespaces): the daemon serves a call with
  the state it was started with, so a call from another environment
  reaches another daemon.
- Both ends check the other's user id (``SO_PEERCRED``).

``SHELLGATE_<SERVICE>_DAEMON=0`` turns a service's daemon off.
"""

from __future__ import annotations

import os
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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["ACK", "ACK_S", "PACKAGE_ROOT", "PROTOCOL", "SERVICES", "VERSION", "Absent",
           "address", "enabled", "key", "peer_uid", "runtime_dir", "socket", "start", "umask"]

#: what clients and daemons must agree on; bumped when the messages change
PROTOCOL = 2
#: the package's version, part of the socket's key
VERSION = "0.1.0"
#: the services a daemon can give
SERVICES = ("hook", "run")
#: the environment variables that change between calls of one agent and
#: mean nothing to the daemon's state (a call's cwd is sent with it)
_VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})
#: a daemon is started at most this often (a daemon that cannot start must
#: not cost every call a start)
SPAWN_INTERVAL_S = 10.0
#: what a daemon's child sends the moment it takes a call, and how long
#: the client waits for it
ACK = b"+"
ACK_S = 1.0
#: unix socket paths are limited to 108 bytes by the kernel
_MAX_SOCKET_PATH = 100

#: the package's root: the directory holding gateway/, analyzers/, …
#: (os.path, not pathlib: pathlib costs a hook call 7 ms to import)
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


class Absent(Exception):
    """No daemon took the call: serve it here."""


def enabled(env: Mapping[str, str], service: str) -> bool:
    flag = env.get(f"SHELLGATE_{service.upper()}_DAEMON", "1")
    return flag.strip().lower() not in ("0", "off", "no", "false")


def key(env: Mapping[str, str], extra: Iterable[str] = ()) -> str:
    """The daemon's name for this user, install and environment (and
    ``extra``, a service's own facts). Each item is length-prefixed, so no
    two different states make the same material."""
    items = [str(PROTOCOL), VERSION, PACKAGE_ROOT, sys.executable, str(os.getuid()),
             *(f"{k}={v}" for k, v in sorted(env.items()) if k not in _VOLATILE),
             "\0extra", *extra]
    material = "".join(f"{len(item)}:{item}" for item in items)
    return blake2b(material.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def runtime_dir(env: Mapping[str, str]) -> str | None:
    """``$XDG_RUNTIME_DIR/shellgate``, made if need be, when both are the
    user's own and closed to others (``None`` otherwise)."""
    base = env.get("XDG_RUNTIME_DIR", "")
    if not base or not os.path.isabs(base) or not _private(base):
        return None
    here = os.path.join(base, "shellgate")
    try:
        os.mkdir(here, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return here if _private(here) else None


def _private(path: str) -> bool:
    """A real directory (no link), ours, that no one else may enter."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and st.st_mode & 0o077 == 0)


def address(env: Mapping[str, str], service: str, extra: Iterable[str] = ()) -> str | None:
    """Where this environment's daemon of ``service`` listens (``None``: no
    daemon here)."""
    if not enabled(env, service):
        return None
    here = runtime_dir(env)
    if here is None:
        return None
    path = os.path.join(here, f"{service}-{key(env, extra)}.sock")
    return path if len(path) <= _MAX_SOCKET_PATH else None


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of ``sock``
    (``struct ucred``: pid, uid, gid, each a native int)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder, signed=True)


def umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def start(where: str, env: Mapping[str, str], service: str) -> None:
    """Start the daemon of ``service`` for ``where`` in the background, at
    most once per :data:`SPAWN_INTERVAL_S` (the daemon itself makes sure
    only one runs)."""
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
            [sys.executable, "-P", "-m", "gateway.cli.warm_daemon", service, where],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd="/", env=dict(env), start_new_session=True, close_fds=True)
    except OSError:
        return  # no daemon: every call is served in its own process

