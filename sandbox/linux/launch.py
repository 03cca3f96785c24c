"""Launching one command under bubblewrap: the scratch directory, the
seccomp and argument memfds, the network launcher, and reading how it went.

:func:`prepare` turns a plan and a policy into a :class:`Launch` (the bwrap
command line, the descriptors to pass, the start gate); after the run,
:meth:`Launch.interpret` decides from bubblewrap's ``--json-status-fd`` and
the launcher's channel — never from the command's output — whether the
command ran:

* it ran: the result is the command's;
* it could not be executed (not found, not executable): exit 127 or 126,
  as a shell reports it;
* it never started (a mount failed, the namespaces could not be made):
  :class:`SandboxUnavailable`, which ``shellgate run`` reports as exit 125.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import profiles as profile_data
from values import field, replace, valueclass

from ..cgroups import RunCgroup
from ..cleanup import remove_tree
from ..errors import SandboxUnavailable
from ..gitpaths import move_below
from ..plan import FsPlan
from ..policy import SandboxPolicy
from ..programs import system_program, temp_root, which
from ..supervise import ExecResult, apply_rlimits, rlimits
from .bwrap import BwrapOptions, bwrap_args, bwrap_command, encode_args
from .reach import covering
from .seccomp import SeccompSpec, cached_bpf
from .userns import share_user_limits
from .watch import MountWatch

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from typing import Any

    from ..proxy import DomainProxy, LaunchChannel, ProxyEvent

#: Port the command reaches the proxy on (the sandbox has its own loopback).
PROXY_PORT = 3128
_INNER = Path(__file__).with_name("inner.py")
#: how long bwrap may take to create the sandbox before it is given up
_START_TIMEOUT = 30.0
#: errnos a shell reports as 126 (found, not executable); anything else is 127
_NOT_EXECUTABLE = frozenset({errno.EACCES, errno.ENOEXEC, errno.EISDIR, errno.EPERM})
_STRERROR = {os.strerror(code): code for code in errno.errorcode}
#: bubblewrap refuses more than 9,000 arguments, --args included; the
#: command's own words come on top
_MAX_BWRAP_ARGS = 8000


@functools.cache
def _kernel_interfaces() -> Mapping[str, Any]:
    return profile_data.read_toml("kernel-interfaces.toml")


def proc_read_only(as_root: bool) -> tuple[str, ...]:
    """The /proc entries made read-only: ``("/proc",)`` (all of it) when
    uid 0 is the host's root, else a few entries."""
    data = _kernel_interfaces()["proc"]
    if as_root and data["read_only_all_as_root"]:
        return ("/proc",)
    return tuple(f"/proc/{name}" for name in data["read_only"])


def sys_hidden(as_root: bool) -> tuple[str, ...]:
    """The /sys directories (that exist here) hidden in the sandbox; as
    root, ``("/sys",)``: all of it (see :func:`sys_visible`)."""
    if as_root:
        return ("/sys",)
    return tuple(p for p in _kernel_interfaces()["sys"]["hidden"] if os.path.isdir(p))


def sys_visible(as_root: bool) -> tuple[str, ...]:
    """What is bound back, read-only, over a hidden /sys (root only)."""
    if not as_root:
        return ()
    return tuple(p for p in _kernel_interfaces()["sys"]["visible_as_root"] if os.path.isdir(p))


@valueclass(frozen=False, slots=False)
class Resources:
    """Everything a launch holds on the host, released by :meth:`close`."""

    fds: list[int] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    proxy: DomainProxy | None = None
    socks: list[socket.socket] = field(default_factory=list)
    watches: list[MountWatch] = field(default_factory=list)
    cgroup: RunCgroup | None = None

    def close(self) -> list[str]:
        """Release everything; the problems met, one line each."""
        problems: list[str] = []
        if self.cgroup is not None:
            problem = self.cgroup.close()
            if problem:
                problems.append(problem)
        for watch in self.watches:
            watch.close()
        if self.proxy is not None:
            self.proxy.stop()
        for sock in self.socks:
            sock.close()
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        for d in self.dirs:
            problem = remove_tree(d)
            if problem:
                problems.append(problem)
        return problems

    def memfd(self, name: str, data: bytes) -> int:
        fd = os.memfd_create(name, 0)
        self.fds.append(fd)
        # all of it, or no sandbox: a memfd's writes stop at the process's
        # file size limit (`ulimit -f`), and a cut filter or argument list
        # must never reach bubblewrap
        if os.write(fd, data) != len(data):
            raise OSError(errno.EFBIG, f"{name}: the file size limit cut it short "
                                       "(ulimit -f)")
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def pipe(self) -> tuple[int, int]:
        r, w = os.pipe()
        self.fds += [r, w]
        return r, w

    def release(self, fd: int) -> None:
        """Close our copy of ``fd`` now (the child has its own)."""
        if fd in self.fds:
            self.fds.remove(fd)
            os.close(fd)


@valueclass(frozen=False, slots=False)
class SandboxMonitor:
    """The limits' view of one sandbox (a :class:`~sandbox.supervise.TreeMonitor`):
    its cgroup, if it has one, and its PID 1 once bubblewrap reports it."""

    group: RunCgroup | None
    pid: int | None = None
    #: mount point inside the sandbox -> most files it may hold, watched
    #: only where no memory cgroup counts them (see :meth:`overfull`)
    file_caps: dict[str, int] = field(default_factory=dict)

    def overfull(self) -> str | None:
        """A private tmpfs holding more files than its size cap could hold
        pages. Attack (from a red-team review, unprivileged): 400,000 empty
        files in a 1 MiB /tmp held ~330 MB of kernel memory that no limit
        counted; bubblewrap 0.8 cannot cap a tmpfs's files, so the
        supervisor looks (statvfs through the sandbox's root) and stops it."""
        if self.pid is None:
            return None
        for mount, cap in self.file_caps.items():
            try:
                st = os.statvfs(f"/proc/{self.pid}/root{mount}")
            except OSError:
                continue
            if st.f_blocks * st.f_frsize > (cap + 1) * 4096:
                # not the private tmpfs (yet): while bubblewrap sets up, the
                # path is still the host's root filesystem, whose hundreds of
                # thousands of files killed a command before its first line
                # (a flake of the unprivileged escape suite under load)
                continue
            if st.f_files - st.f_ffree > cap:
                return (f"more than {cap} files in {mount} (no more than its size cap "
                        "holds pages)")
        return None

    def processes(self) -> int | None:
        return self.group.processes() if self.group is not None else None

    def forks_refused(self) -> int:
        return self.group.forks_refused() if self.group is not None else 0

    def oom_kills(self) -> int:
        return self.group.oom_kills() if self.group is not None else 0

    def kill(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)


@valueclass(frozen=False, slots=False)
class Launch:
    """A prepared bwrap run: what to execute and how to read its outcome."""

    argv: list[str]
    pass_fds: list[int]
    gate: Callable[[int], None]
    status: _Status
    argv0: str
    watch: MountWatch
    monitor: SandboxMonitor
    channel: LaunchChannel | None = None
    #: what the run should know about its limits (a fallback taken)
    notes: tuple[str, ...] = ()
    #: around the fork of bwrap: it is born in the run's cgroup where it can be
    spawning: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext

    def interpret(self, result: ExecResult) -> ExecResult:
        """The command's result, an exec failure (126/127), or — when the
        command never started — :class:`SandboxUnavailable`."""
        self.watch.stop()
        if self.watch.tripped:
            restored = self.watch.restore()
            notes = tuple(
                f"{path} was put back as it was before the run; the version found there is "
                f"{path}.replaced-during-run (review it: the command may have written to it)"
                for path in restored) + tuple(
                f"{path} was moved to {kept} the moment it appeared" for path, kept in
                self.watch.moved)
            return replace(result, killed_reason=self.watch.tripped,
                                       tampered=(*result.tampered, *restored),
                                       reports=(*result.reports, *notes))
        if result.timed_out or result.killed_reason:
            return result
        statuses = self.status.read_rest()
        executed = any("exit-code" in s for s in statuses)
        if not executed:
            if result.signal is not None:
                return result  # bwrap itself was killed from outside: nothing to add
            message = _bwrap_message(result.stderr_text)
            if self.channel is None and message.startswith("execvp "):
                return _exec_failure(result, self.argv0, message.rpartition(": ")[2])
            raise SandboxUnavailable(f"bubblewrap failed: {message}")
        if self.channel is None:
            return result
        state = self.channel.wait(2.0)
        if state == "started":
            return result
        if state == "exec-failed":
            return _exec_failure(result, self.argv0, self.channel.message,
                                 self.channel.errno)
        raise SandboxUnavailable(
            f"the network launcher failed: {self.channel.message or 'no report'}")


class _Status:
    """bwrap's ``--json-status-fd``: one JSON object per line."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def read_first(self, timeout: float = _START_TIMEOUT) -> dict[str, object] | None:
        """The first object (``child-pid``), or None at end-of-file."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                raise SandboxUnavailable("bubblewrap did not report its sandbox process")
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return _parse(line)

    def read_rest(self, timeout: float = 2.0) -> list[dict[str, object]]:
        """Every object still to come (bwrap has exited: end-of-file is near)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                break
            chunk = os.read(self.fd, 4096)
            if not chunk:
                break
            self.buffer += chunk
        return [obj for line in self.buffer.splitlines() if (obj := _parse(line))]


def _parse(line: bytes) -> dict[str, object] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _bwrap_message(stderr: str) -> str:
    """bubblewrap's own complaint (the command never ran, so stderr is
    bubblewrap's alone)."""
    lines = [line for line in stderr.strip().splitlines() if line.startswith("bwrap: ")]
    return lines[-1][len("bwrap: "):] if lines else (stderr.strip()[-300:] or "no message")


def _exec_failure(
    result: ExecResult, argv0: str, strerror: str, code: int | None = None
) -> ExecResult:
    code = code if code is not None else _STRERROR.get(strerror, errno.ENOENT)
    return replace(
        result,
        exit_code=126 if code in _NOT_EXECUTABLE else 127,
        signal=None,
        stderr=f"shellgate: {argv0}: {strerror}\n".encode(),
        exec_error=strerror,
    )


def prepare(
    argv: Sequence[str],
    policy: SandboxPolicy,
    plan: FsPlan,
    res: Resources,
    *,
    on_proxy_event: Callable[[ProxyEvent], None] | None = None,
    empty_dir: str | None = None,
    state_dir: str | None = None,
) -> Launch:
    """Everything bwrap needs for ``argv`` under ``policy`` and ``plan``.
    ``empty_dir``: an empty read-only directory to hide directories with;
    ``state_dir``: the sandbox's private state (the compiled seccomp filter
    is kept there)."""
    # never a bwrap a sandboxed command could have written: it runs on the host
    bwrap = system_program("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed in a system directory (/usr, /bin, /sbin: "
            "where no sandboxed command can write): apt-get install bubblewrap")
    networked = policy.network.mode == "allowlist"
    # One filter for everything in the sandbox (bwrap's PID 1 included):
    # AF_UNIX only when the policy asks for it, IP only when networked.
    spec = SeccompSpec(allow_unix=policy.network.allow_unix_sockets, allow_inet=networked)
    seccomp_fd = res.memfd("shellgate-seccomp", cached_bpf(spec, state_dir))
    pass_fds = [seccomp_fd]
    command, channel, child_end = list(argv), None, None
    if networked:
        command, channel, child_end = _network(argv, policy, res, on_proxy_event)
        pass_fds.append(child_end.fileno())
    status_r, status_w = res.pipe()
    block_r, block_w = res.pipe()
    pass_fds += [status_w, block_r]
    limits = policy.limits
    group, notes = _cgroup(policy)
    res.cgroup = group
    monitor = SandboxMonitor(group)
    if group is None or group.memory is None:
        monitor.file_caps = _file_caps(policy)
    # No memory cgroup: each process's data segment is bounded instead.
    data = limits.memory if limits.memory is not None and (
        group is None or group.memory is None) else None
    # what bubblewrap mounts: a hidden path in a directory closed to the
    # sandbox is hidden as that directory (linux/reach.py)
    mounted = covering(plan)
    args = bwrap_args(mounted, _options(policy, seccomp_fd, status_w, block_r, empty_dir))
    if len(args) > _MAX_BWRAP_ARGS:
        raise SandboxUnavailable(
            f"the sandbox would take {len(args)} bubblewrap arguments (at most "
            f"{_MAX_BWRAP_ARGS}): too many protected or hidden paths in this plan")
    args_fd = res.memfd("shellgate-bwrap-args", encode_args(args))
    pass_fds.append(args_fd)
    status = _Status(status_r)
    watch = _armed_watch(mounted, res)

    def gate(pid: int) -> None:
        """bwrap has created the sandbox and waits on the block fd: set the
        limits on the sandbox's process (everything in it inherits them),
        then let the command run. No limits, no command."""
        del pid
        res.release(status_w)  # our copies: end-of-file once bwrap is done with them
        res.release(block_r)
        if child_end is not None:
            child_end.close()  # the launcher's end: end-of-file when its exec succeeds
        first = status.read_first()
        child = first.get("child-pid") if first else None
        if not isinstance(child, int):
            return  # bwrap failed before the sandbox existed; interpret() says why
        if rlimits(limits, data=data):
            apply_rlimits(child, limits, data=data)
        # the kernel's per-user counters (inotify): the sandbox's own
        # namespace gets a share, so the user's editors keep theirs
        share_user_limits(child)
        if group is not None:
            try:
                # before the command starts: all of it inherits the group (a
                # no-op where bwrap was born in it; refused where the
                # starting thread could not leave it again)
                group.attach(child)
            except ProcessLookupError:
                return  # bwrap's setup failed after it reported; interpret() says why
        _prefer_for_oom(child)
        monitor.pid = child
        watch.start(child)
        os.write(block_w, b"1")

    return Launch(bwrap_command(bwrap, args_fd, command), pass_fds, gate, status,
                  argv[0], watch, monitor, channel, notes,
                  group.spawning if group is not None else contextlib.nullcontext)


def _file_caps(policy: SandboxPolicy) -> dict[str, int]:
    limits, caps = policy.limits, {"/dev/shm": policy.limits.shm_size // 4096}  # noqa: S108
    if policy.filesystem.private_tmp:
        caps["/tmp"] = limits.tmp_size // 4096  # noqa: S108
    if not policy.network.allow_unix_sockets:  # /run is the sandbox's own tmpfs
        caps["/run"] = limits.run_size // 4096
    return caps


def _prefer_for_oom(pid: int) -> None:
    """When the machine runs out of memory, the kernel's OOM killer should
    take the sandbox first, not the user's editor: its score is raised to
    the maximum (inherited by everything it starts; raising needs no
    privilege). Best effort: where /proc refuses it (a non-dumpable
    process), the memory limit is still there."""
    with contextlib.suppress(OSError):
        fd = os.open(f"/proc/{pid}/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)


def _options(policy: SandboxPolicy, seccomp_fd: int, status_fd: int,
             block_fd: int, empty_dir: str | None) -> BwrapOptions:
    as_root = os.geteuid() == 0
    limits = policy.limits
    return BwrapOptions(
        seccomp_fd=seccomp_fd,
        hide_run=not policy.network.allow_unix_sockets,
        status_fd=status_fd,
        block_fd=block_fd,
        proc_read_only=proc_read_only(as_root),
        sys_hidden=sys_hidden(as_root),
        sys_visible=sys_visible(as_root),
        tmp_size=limits.tmp_size,
        shm_size=limits.shm_size,
        run_size=limits.run_size,
        empty_dir=empty_dir,
    )


def _armed_watch(plan: FsPlan, res: Resources) -> MountWatch:
    """The mount watch over every name the plan mounts over, armed before
    the sandbox exists (no watch, no run)."""
    watch = MountWatch([*plan.hidden_files, *plan.hidden_dirs, *plan.protected, *plan.pinned],
                       files=plan.protected, sentinels=plan.sentinels,
                       move_aside=functools.partial(move_below, plan.writable))
    res.watches.append(watch)
    try:
        watch.arm()
    except OSError as exc:
        raise SandboxUnavailable(str(exc)) from None
    return watch


def _cgroup(policy: SandboxPolicy) -> tuple[RunCgroup | None, tuple[str, ...]]:
    """The run's cgroup (None where the machine has none for this user:
    rlimits and the watchdog instead). A group that should be possible but
    cannot be made is a note, and the fallback."""
    limits = policy.limits
    try:
        return RunCgroup.create(limits.memory, limits.max_processes), ()
    except OSError as exc:
        return None, (f"no cgroup for this run ({exc.strerror or exc}): memory is bounded per "
                      "process (RLIMIT_DATA) and processes by the watchdog",)


def _network(
    argv: Sequence[str],
    policy: SandboxPolicy,
    res: Resources,
    on_proxy_event: Callable[[ProxyEvent], None] | None,
) -> tuple[list[str], LaunchChannel, socket.socket]:
    """The launcher command, the host's channel to it, and the child's end
    of the socket pair (see ``linux/inner.py``)."""
    import socket  # noqa: PLC0415 - networked runs only (its enums: ~2 ms of every start)

    from ..proxy import DomainProxy, LaunchChannel  # noqa: PLC0415 - asyncio only when networked

    host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    res.socks += [host_end, child_end]
    child_end.set_inheritable(True)
    channel = LaunchChannel(host_end)
    proxy = DomainProxy(policy.network, None, on_event=on_proxy_event, channel=channel)
    proxy.start()
    res.proxy = proxy
    command = [
        _python_outside_tmp(),
        "-I",
        "-S",
        "-c",
        _launcher_source(),
        "--channel",
        str(child_end.fileno()),
        "--port",
        str(PROXY_PORT),
        "--",
        *argv,
    ]
    return command, channel, child_end


@functools.cache
def _launcher_source() -> str:
    """``inner.py`` without its docstring and comments: it travels in argv
    (no file to copy into the sandbox, no extra mount) and shows in ``ps``."""
    text = _INNER.read_text("utf-8").split('"""', 2)[2]
    lines = (line for line in text.splitlines() if line.strip())
    return "\n".join(line for line in lines if not line.lstrip().startswith("#"))


def _python_outside_tmp() -> str:
    """An interpreter the sandbox can see (its /tmp is private)."""
    for candidate in (os.path.realpath(sys.executable), which("python3") or ""):
        if candidate and not candidate.startswith(("/tmp/", temp_root() + "/")):  # noqa: S108
            return candidate
    raise SandboxUnavailable("no Python interpreter outside /tmp for the network launcher")
