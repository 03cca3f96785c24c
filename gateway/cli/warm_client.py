"""What the clients of shellgate's warm daemons share: standard library
only (C modules where they exist), imported before anything heavy.

``shellgate hook`` and ``shellgate run`` are started anew for every call,
and most of such a process's time is Python importing shellgate. A warm
daemon (:mod:`.warm_daemon`) has paid that once; the client hands it the
call over a unix socket. One daemon per *service* (``hook``, ``run``,
``check``), user, install and environment.

Where the socket is, and who may use it:

- ``$XDG_RUNTIME_DIR/shellgate/<service>-<key>.sock``. The runtime
  directory must be the user's own and closed to others (``0700``, as the
  XDG spec has it); otherwise — or with no ``XDG_RUNTIME_DIR`` at all —
  there is no daemon and each call is served in its own process. A
  directory others may enter would let another user put a socket there
  that answers for the daemon. The directory is hidden from every
  sandboxed command (sandbox/owndirs.py): a command must never reach a
  daemon that runs or judges commands.
- ``<key>`` hashes the protocol, the package's version and place, the
  interpreter, the user and the whole environment (less ``PWD`` and the
  like), and whatever else a service names (``run``: the process's
  limits, groups, cgroup and namespaces): the daemon serves a call with
  the state it was started with, so a call from another environment
  reaches another daemon.
- Both ends check the other's user id (``SO_PEERCRED``), and that the
  other is in their own namespaces and state, read from /proc through a
  pidfd of it (:func:`same_state_peer`): a sandboxed command is the same
  user, and must neither be served nor answer as the daemon.

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
           "address", "enabled", "facts", "key", "peer_uid", "read_proc", "runtime_dir",
           "same_state_peer", "socket", "start", "umask"]

#: what clients and daemons must agree on; bumped when the messages change
PROTOCOL = 3
#: the package's version, part of the socket's key
VERSION = "0.1.0"
#: the services a daemon can give
SERVICES = ("hook", "run", "check")
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


#: the process's state a child inherits from its parent, beyond the
#: environment, as /proc shows it: read for this process, and for the
#: process at the other end of the socket
_STATUS_FIELDS = (b"Uid", b"Gid", b"Groups", b"CapInh", b"CapPrm", b"CapEff", b"CapBnd",
                  b"CapAmb", b"NoNewPrivs", b"Seccomp", b"Seccomp_filters",
                  b"Cpus_allowed_list", b"Mems_allowed_list")
_NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
#: the files of /proc/PID read whole
_WHOLE = ("limits", "cgroup", "personality", "oom_score_adj", "attr/current")
#: getsockopt(SOL_SOCKET, SO_PEERPIDFD): a pidfd of the process at the
#: other end (Linux 6.5; the module has no name for it before Python 3.13)
_SO_PEERPIDFD = 77


def facts(pid: int | str = "self") -> list[str]:
    """What a process started by process ``pid`` would inherit besides the
    environment: its users and groups, capabilities, seccomp and
    no-new-privileges, CPU and memory sets, resource limits, cgroup,
    namespaces, personality, security label, root, oom score, nice value and
    scheduling policy. A daemon started by a client in another state
    (``ulimit -v`` lowered, a systemd unit's cgroup, a container's
    namespaces, a seccomp filter, ``setarch -R``, ``chrt -i``) serves no
    client in this one: from a daemon with higher limits or in another
    cgroup, a run would escape what the client is held to. Unreadable
    entries are facts too (``\0unreadable``): they match nothing else."""
    base = f"/proc/{pid}/"
    status = read_proc(base + "status").splitlines()
    out = [repr(line) for line in status if line.split(b":", 1)[0] in _STATUS_FIELDS]
    out += [f"{name}={read_proc(base + name)!r}" for name in _WHOLE]
    for name in (*(f"ns/{ns}" for ns in _NAMESPACES), "root"):
        try:
            out.append(f"{name}={os.readlink(base + name)}")
        except OSError:
            out.append(f"{name}=\0unreadable")
    # nice, rt_priority and policy: fields 19, 40 and 41 of stat, counted
    # from after the command's name (which may hold spaces and parentheses)
    fields = read_proc(base + "stat").rpartition(b")")[2].split()
    out.append(f"sched={[fields[i] for i in (16, 37, 38) if i < len(fields)]!r}")
    return out


def same_state_peer(sock: socket.socket, mine: list[str], *,
                    pid_fallback: bool = False) -> bytes | None:
    """The /proc status of the process at the other end of ``sock`` when it
    is in this one's state (``mine``, see :func:`facts`), else None. Read
    from /proc through a pidfd of that process, never from what it says: a
    sandboxed command is the same user, but in other namespaces, under
    seccomp. From a review: a command in a sandbox with
    unix sockets allowed reached a daemon whose runtime directory was not
    hidden, sent a request with its environment, and had `--cwd /opt/x`
    written on the host; another renamed the runtime directory's parent,
    bound a socket of its own where the client looked, and read the host's
    working directory descriptor. The pid is read from the pidfd before and
    after: the same number both times means it was that process's (a pid is
    not reused while a pidfd holds it, and a reaped one reads -1)."""
    try:
        pidfd = sock.getsockopt(socket.SOL_SOCKET, _SO_PEERPIDFD)
    except OSError:
        # a kernel before 6.5: no run daemon; the hook's (it judges, never
        # runs) reads the pid SO_PEERCRED gives, which may be reused
        if not pid_fallback:
            return None
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        pid = int.from_bytes(creds[0:4], sys.byteorder, signed=True)
        return read_proc(f"/proc/{pid}/status") if pid > 0 and facts(pid) == mine else None
    try:
        pid = _pidfd_pid(pidfd)
        if pid <= 0 or facts(pid) != mine:
            return None
        status = read_proc(f"/proc/{pid}/status")
        return status if _pidfd_pid(pidfd) == pid else None
    finally:
        os.close(pidfd)


def _pidfd_pid(pidfd: int) -> int:
    for line in read_proc(f"/proc/self/fdinfo/{pidfd}").splitlines():
        if line.startswith(b"Pid:"):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return -1
    return -1


def read_proc(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b"\0unreadable"


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

