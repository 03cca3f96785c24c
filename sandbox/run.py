"""``run``: execute one command under a :class:`SandboxPolicy`.

Backends: ``bwrap`` (Linux: bubblewrap + seccomp), ``seatbelt`` (macOS:
``/usr/bin/sandbox-exec``) and ``none`` (no isolation at all: explicit,
logged loudly, never chosen by default). When the chosen backend cannot
start, :class:`SandboxUnavailable` is raised: there is no silent fallback to
running unsandboxed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import select
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .errors import SandboxUnavailable
from .gitguard import IndexStamp, quarantine_planted, stamp_indexes
from .linux.bwrap import BRIDGE_MOUNT, BwrapOptions, bwrap_args, bwrap_command, encode_args
from .linux.seccomp import SeccompSpec, export_bpf
from .macos.seatbelt import seatbelt_command
from .plan import HOME_WRITE_DENY, MANDATORY_WRITE_DENY, FsPlan, build_plan
from .policy import SandboxPolicy
from .supervise import ExecResult, OutputCallback, apply_rlimits, kill_tree, rlimits, supervise


def _warn(event: str, **fields: object) -> None:
    """A loud structured warning. structlog is imported on first use: the
    common path (a normal run) never pays for it."""
    import structlog  # noqa: PLC0415

    structlog.get_logger("shellgate.sandbox").warning(event, **fields)


def _proxy_class() -> type[DomainProxy]:
    from .proxy import DomainProxy  # noqa: PLC0415 - asyncio only for networked runs

    return DomainProxy


if TYPE_CHECKING:
    from .proxy import DomainProxy, ProxyEvent

Backend = Literal["bwrap", "seatbelt", "none"]
#: Port the in-sandbox bridge listens on (the sandbox has its own loopback).
PROXY_PORT = 3128
_INNER = str(Path(__file__).with_name("linux") / "inner.py")


def default_backend() -> Backend:
    return "seatbelt" if sys.platform == "darwin" else "bwrap"


def runtime_dir() -> Path:
    """A private per-user directory for sandbox scratch state (0700, owned by
    us, not a symlink: another user must not be able to pre-create it)."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    path = base / f"shellgate-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise SandboxUnavailable(f"{path} is not a private directory owned by this user")
    return path


@contextlib.contextmanager
def _workspace_lock(cwd: str) -> Iterator[Path]:
    """Shared lock on the workspace for the duration of a run; yields the
    file where created stubs are recorded. See :func:`_cleanup_stubs`.
    The runtime directory is hidden inside every sandbox, and the lock is
    never opened through a symlink."""
    key = hashlib.sha256(os.path.realpath(cwd).encode()).hexdigest()[:20]
    lock_path = runtime_dir() / f"{key}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield lock_path.with_suffix(".stubs")
        fcntl.flock(fd, fcntl.LOCK_UN)
        _cleanup_stubs(fd, lock_path.with_suffix(".stubs"))
    finally:
        os.close(fd)


def _record_stubs(plan: FsPlan, record: Path) -> None:
    """Stubs that bwrap will create on the host (mount points for missing
    protected paths) are written down before the run, so that they are
    removed even if this process dies."""
    created = [path for path, _ in plan.stubs if not os.path.lexists(path)]
    if created:
        with open(record, "a", encoding="utf-8") as handle:
            handle.write("".join(p + "\n" for p in created))


def _cleanup_stubs(fd: int, record: Path) -> None:
    """Remove recorded stubs once no run holds the workspace (exclusive lock
    without waiting; if another run is active, it cleans up when it ends).
    Only empty files and empty directories are removed."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return
    try:
        try:
            paths = record.read_text("utf-8").splitlines()
        except FileNotFoundError:
            return
        for path in dict.fromkeys(paths):
            if not _is_stub_name(path):
                continue  # only ever a mandatory-deny name; never an arbitrary path
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISDIR(st.st_mode):
                    os.rmdir(path)  # fails unless empty
                elif stat.S_ISREG(st.st_mode) and st.st_size == 0:
                    os.unlink(path)
        record.unlink(missing_ok=True)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


_STUB_NAMES = frozenset(
    rel.split("/")[i]
    for rel, _ in (*MANDATORY_WRITE_DENY, *HOME_WRITE_DENY)
    for i in range(len(rel.split("/")))
) | {"commondir"}


def _is_stub_name(path: str) -> bool:
    return os.path.isabs(path) and os.path.basename(path) in _STUB_NAMES


def _check_tripwires(before: list[str]) -> tuple[str, ...]:
    """Remove what the command created at a tripwire path; report it."""
    tampered = []
    for path in before:
        if os.path.lexists(path):
            tampered.append(path)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
    return tuple(tampered)


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass
class _Resources:
    fds: list[int] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    proxy: DomainProxy | None = None
    tripwires: list[str] = field(default_factory=list)
    indexes: list[IndexStamp] = field(default_factory=list)

    def close(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def sandbox_env(policy: SandboxPolicy, environ: dict[str, str]) -> dict[str, str]:
    """The environment the command sees: the allowlist, then the sandbox's
    own settings (private TMPDIR, proxy variables)."""
    env = policy.env.filter(environ)
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    # git inside the sandbox never adopts a bare repository it merely finds in
    # the current directory: a planted one (HEAD, objects/, refs/, config)
    # would bring its own diff.external / fsmonitor.
    env.update(
        {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.bareRepository",
            "GIT_CONFIG_VALUE_0": "explicit",
        }
    )
    if policy.filesystem.private_tmp:
        env["TMPDIR"] = "/tmp"  # noqa: S108 - the private /tmp inside the sandbox
    if policy.network.mode == "allowlist":
        url = f"http://127.0.0.1:{PROXY_PORT}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = url
        env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    return env


def build_bwrap(
    argv: Sequence[str],
    policy: SandboxPolicy,
    cwd: str,
    *,
    home: str,
    res: _Resources,
    on_proxy_event: Callable[[ProxyEvent], None] | None = None,
    record: Path | None = None,
) -> tuple[list[str], list[int], Callable[[int], None]]:
    """The bwrap command line, the fds to pass, and the hook that applies
    the resource limits once the sandbox process exists."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    scratch = tempfile.mkdtemp(prefix="run-", dir=runtime_dir())
    res.dirs.append(scratch)
    private_tmp = os.path.join(scratch, "tmp")
    os.mkdir(private_tmp, 0o700)
    plan = build_plan(policy, cwd, home=home, private_tmp=private_tmp, hide=(str(runtime_dir()),))
    res.tripwires = [p for p in plan.tripwires if not os.path.lexists(p)]
    res.indexes = stamp_indexes(plan.writable)
    if record is not None:
        _record_stubs(plan, record)
    networked = policy.network.mode == "allowlist"
    unix = policy.network.allow_unix_sockets
    # The base filter (bwrap --seccomp) covers everything in the sandbox; with
    # networking the bridge needs AF_UNIX and AF_INET, and the command gets a
    # second, stricter filter from the launcher.
    base = export_bpf(SeccompSpec(allow_unix=unix or networked, allow_inet=networked))
    seccomp_fd = _memfd("shellgate-seccomp", base)
    res.fds.append(seccomp_fd)
    pass_fds = [seccomp_fd]
    command = list(argv)
    bridge_dir = None
    if networked:
        bridge_dir = os.path.join(scratch, "bridge")
        os.mkdir(bridge_dir, 0o755)
        proxy = _proxy_class()(
            policy.network, os.path.join(bridge_dir, "proxy.sock"), on_event=on_proxy_event
        )
        proxy.start()
        res.proxy = proxy
        child_fd = _memfd(
            "shellgate-seccomp-child", export_bpf(SeccompSpec(allow_unix=unix, allow_inet=True))
        )
        res.fds.append(child_fd)
        pass_fds.append(child_fd)
        # The launcher is copied next to the socket: the package itself may
        # live under /tmp, which the sandbox replaces with its own.
        shutil.copyfile(_INNER, os.path.join(bridge_dir, "inner.py"))
        command = [
            _python_outside_tmp(),
            "-I",
            "-S",
            f"{BRIDGE_MOUNT}/inner.py",
            "--socket",
            f"{BRIDGE_MOUNT}/proxy.sock",
            "--port",
            str(PROXY_PORT),
            "--filter-fd",
            str(child_fd),
            "--",
            *argv,
        ]
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    res.fds += [info_r, info_w, block_r, block_w]
    pass_fds += [info_w, block_r]
    args = bwrap_args(
        plan,
        BwrapOptions(
            share_net=False,
            seccomp_fd=seccomp_fd,
            bridge_dir=bridge_dir,
            hide_run=not unix,
            info_fd=info_w,
            block_fd=block_r,
        ),
    )
    args_fd = _memfd("shellgate-bwrap-args", encode_args(args))
    res.fds.append(args_fd)
    pass_fds.append(args_fd)

    def start_gate(pid: int) -> None:
        """bwrap has created the sandbox and waits on the block fd: set the
        limits on the sandbox's process (everything in it inherits them),
        then let the command run. No limits, no command."""
        os.close(info_w)  # our copies: EOF on info_r if bwrap dies early
        os.close(block_r)
        res.fds.remove(info_w)
        res.fds.remove(block_r)
        child = _read_child_pid(info_r)
        if child is None:
            return  # bwrap failed before the sandbox existed; its stderr says why
        if rlimits(policy.limits):
            apply_rlimits(child, policy.limits)
        os.write(block_w, b"1")

    return bwrap_command(bwrap, args_fd, command), pass_fds, start_gate


def _python_outside_tmp() -> str:
    """An interpreter the sandbox can see (its /tmp is private)."""
    for candidate in (os.path.realpath(sys.executable), shutil.which("python3") or ""):
        if candidate and not candidate.startswith(("/tmp/", tempfile.gettempdir() + "/")):  # noqa: S108
            return candidate
    raise SandboxUnavailable("no Python interpreter outside /tmp for the network launcher")


def _read_child_pid(fd: int, timeout: float = 30.0) -> int | None:
    """The ``child-pid`` from bwrap's ``--info-fd`` JSON, or None at EOF."""
    data = b""
    deadline = time.monotonic() + timeout
    while b"}" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise SandboxUnavailable("bubblewrap did not report its sandbox process")
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
    try:
        return int(json.loads(data[: data.index(b"}") + 1])["child-pid"])
    except (ValueError, KeyError) as exc:
        raise SandboxUnavailable(f"unexpected bubblewrap info: {data[:200]!r}") from exc


def run(
    argv: Sequence[str],
    policy: SandboxPolicy,
    *,
    cwd: str,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    on_output: OutputCallback | None = None,
    backend: Backend | None = None,
    stdin: bytes | int | None = None,
    on_proxy_event: Callable[[ProxyEvent], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ExecResult:
    """Run ``argv`` in ``cwd`` under ``policy``. Returns how it ended; raises
    :class:`SandboxUnavailable` when the sandbox itself cannot start."""
    if not argv:
        raise SandboxUnavailable("nothing to run")
    if not os.path.isdir(cwd):
        raise SandboxUnavailable(f"working directory {cwd!r} does not exist")
    chosen = backend or default_backend()
    environ = dict(os.environ if env is None else env)
    home = environ.get("HOME") or os.path.expanduser("~")
    sb_env = sandbox_env(policy, environ)
    res = _Resources()
    try:
        if chosen == "none":
            _warn(
                "sandbox.disabled",
                argv=list(argv)[:3],
                cwd=cwd,
                note="running WITHOUT a sandbox (backend none)",
            )
            return supervise(
                argv,
                env=sb_env,
                cwd=cwd,
                limits=policy.limits,
                timeout=timeout,
                on_output=on_output,
                stdin=stdin,
                on_start=on_start,
            )
        if chosen == "seatbelt":
            private_tmp = tempfile.mkdtemp(prefix="run-", dir=runtime_dir())
            res.dirs.append(private_tmp)
            sb_env["TMPDIR"] = private_tmp
            proxy_port = None
            if policy.network.mode == "allowlist":
                res.proxy = _proxy_class()(policy.network, None, on_event=on_proxy_event)
                res.proxy.start()
                proxy_port = res.proxy.port
                for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
                    sb_env[name] = sb_env[name.lower()] = f"http://127.0.0.1:{proxy_port}"
            full = seatbelt_command(
                argv, policy, cwd, home=home, private_tmp=private_tmp, proxy_port=proxy_port
            )
            return supervise(
                full,
                env=sb_env,
                cwd=cwd,
                limits=policy.limits,
                timeout=timeout,
                on_output=on_output,
                stdin=stdin,
                on_start=on_start,
            )
        with _workspace_lock(cwd) as record:
            full, fds, gate = build_bwrap(
                argv, policy, cwd, home=home, res=res, on_proxy_event=on_proxy_event, record=record
            )
            result = supervise(
                full,
                env=sb_env,
                cwd=cwd,
                limits=policy.limits,
                timeout=timeout,
                pass_fds=fds,
                on_output=on_output,
                stdin=stdin,
                on_start=on_start,
                after_spawn=gate,
            )
            tampered = _check_tripwires(res.tripwires) + quarantine_planted(res.indexes)
            if tampered:
                _warn("sandbox.tampered", paths=list(tampered))
        _raise_if_sandbox_failed(result)
        return dataclasses.replace(result, tampered=tampered) if tampered else result
    except OSError as exc:
        raise SandboxUnavailable(f"cannot start the sandbox: {exc}") from None
    finally:
        res.close()


def _raise_if_sandbox_failed(result: ExecResult) -> None:
    """bwrap reports its own setup failures as `bwrap: ...` on stderr."""
    first = result.stderr.lstrip().splitlines()[:1]
    if result.exit_code not in (0, None) and first and first[0].startswith("bwrap: "):
        message = first[0][len("bwrap: ") :]
        if "execvp" not in message:  # the command itself was not found: its own error
            raise SandboxUnavailable(f"bubblewrap failed: {message}")


class BackgroundProcess:
    """A sandboxed command running on a thread: read its output as it comes,
    wait for it, or stop it (the whole process tree)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        self._result: ExecResult | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._pid: int | None = None

    def _on_output(self, stream: str, data: bytes) -> None:
        with self._lock:
            self._chunks[stream].append(data)

    def _on_start(self, pid: int) -> None:
        self._pid = pid

    def read(self) -> tuple[str, str]:
        """New output since the last call: (stdout, stderr)."""
        with self._lock:
            out = b"".join(self._chunks["stdout"]).decode("utf-8", "replace")
            err = b"".join(self._chunks["stderr"]).decode("utf-8", "replace")
            self._chunks = {"stdout": [], "stderr": []}
        return out, err

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> ExecResult | None:
        """The result once the command ended (``None`` if still running)."""
        self._done.wait(timeout)
        if self._error is not None:
            raise self._error
        return self._result

    def stop(self, timeout: float = 5.0) -> ExecResult | None:
        """Kill the whole process tree and wait for the result."""
        if self._pid is not None and self.running:
            kill_tree(self._pid)
        return self.wait(timeout)


def start_background(
    argv: Sequence[str],
    policy: SandboxPolicy,
    *,
    cwd: str,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    backend: Backend | None = None,
) -> BackgroundProcess:
    """Start ``argv`` in the sandbox without waiting for it."""
    bg = BackgroundProcess()

    def target() -> None:
        try:
            bg._result = run(
                argv,
                policy,
                cwd=cwd,
                env=env,
                timeout=timeout,
                on_output=bg._on_output,
                on_start=bg._on_start,
                backend=backend,
            )
        except BaseException as exc:  # handed to the caller by wait()
            bg._error = exc
        finally:
            bg._done.set()

    threading.Thread(target=target, name="shellgate-background", daemon=True).start()
    return bg
