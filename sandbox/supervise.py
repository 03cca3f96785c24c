"""Process supervision: stream output, cap what is kept, enforce the wall
timeout on the whole process tree, return an :class:`ExecResult`.

No process may outlive its call. The sandboxed tree lives in its own PID
namespace under bwrap, so killing bwrap's tree ends everything inside; the
supervisor also walks the tree with psutil (the ``none`` backend has no PID
namespace) and kills every descendant, first politely, then with SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

from values import valueclass

from .policy import Limits
from .sizes import human
from .stdin import StdinFeeder

#: on_output(stream, chunk): stream is "stdout" or "stderr"
OutputCallback = Callable[[str, bytes], None]

_READ_CHUNK = 65536
#: how often the limits are checked: the cgroup's counters are cheap to
#: read; counting the tree with psutil (no cgroup) walks all of /proc
_LIMIT_POLL = 0.1
_NPROC_POLL = 0.25


TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time (a tenth of a cold start)
    from typing import Any, Protocol

    class TreeMonitor(Protocol):
        """What a backend knows about the sandbox's process tree (bubblewrap:
        the run's cgroup and the sandbox's PID 1)."""

        def processes(self) -> int | None:
            """Processes in the sandbox, or None: count the tree instead."""

        def forks_refused(self) -> int:
            """Forks the kernel refused at the process cap."""

        def oom_kills(self) -> int:
            """Processes the memory limit killed."""

        def overfull(self) -> str | None:
            """Why a private filesystem holds too much, if it does."""

        def kill(self) -> None:
            """End everything in the sandbox at once."""


@valueclass
class ExecResult:
    """How a sandboxed command ended. Output is kept as bytes (an image a
    command prints must survive to the edge that decodes it) and capped: the
    head and the tail are kept, with a marker saying how much was dropped;
    :attr:`stdout_text`/:attr:`stderr_text` decode it (UTF-8, replacement
    characters for invalid bytes)."""

    exit_code: int | None
    signal: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool
    duration: float
    killed_reason: str | None = None
    #: protected paths the command created anyway and the sandbox removed
    #: or renamed (see sandbox.guards)
    tampered: tuple[str, ...] = ()
    #: the command could not be executed (exit 127/126): why, as strerror
    exec_error: str | None = None
    #: problems the post-run guards met (an unreadable index …), one line each
    problems: tuple[str, ...] = ()
    #: changes to review: planted files undone, instruction files changed …
    reports: tuple[str, ...] = ()
    #: the memory limit was reached and the process tree was killed
    memory_exceeded: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


class OutputCapture:
    """Keeps the first and last ``limit // 2`` bytes of a stream."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def data(self) -> bytes:
        """What was kept, with a marker where the middle was dropped."""
        if not self.truncated:
            return bytes(self.head + self.tail)
        dropped = self.total - len(self.head) - len(self.tail)
        marker = f"\n[... {dropped} bytes of output truncated ...]\n".encode()
        return bytes(self.head) + marker + bytes(self.tail)

    def text(self) -> str:
        return self.data().decode("utf-8", "replace")


def rlimits(limits: Limits, *, data: int | None = None) -> list[tuple[int, int]]:
    """(resource, value) pairs; each is set as both soft and hard limit, so
    the sandboxed process cannot raise it again. ``data``: RLIMIT_DATA, the
    per-process memory bound used where no memory cgroup can be had.

    RLIMIT_NPROC is a backstop at twice the cap, not the cap: it counts the
    user's processes, and as root every root process on the host, so at the
    cap itself it would refuse forks before the watchdog (which kills the
    tree at the cap) saw the tree reach it — a fork bomb would then spin on
    EAGAIN until the wall timeout."""
    nproc = 2 * limits.max_processes if limits.max_processes is not None else None
    pairs = (
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_AS, limits.address_space_bytes),
        (resource.RLIMIT_DATA, data),
        (resource.RLIMIT_NOFILE, open_files(limits)),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_NPROC, nproc),
    )
    return [(res, value) for res, value in pairs if value is not None]


#: one sandbox may fill at most this fraction of the kernel's open-file table
_FILE_TABLE_SHARE = 2
#: and each process gets at least this many descriptors
_MIN_OPEN_FILES = 64
_FILE_MAX: list[int | None] = []


def open_files(limits: Limits) -> int | None:
    """RLIMIT_NOFILE: the limit, lowered so that every process the sandbox
    may have, each with as many descriptors, fills at most half of the
    kernel's table (``fs.file-max``, read once). From a review: 1,024
    processes × 4,096 descriptors exceed this machine's file-max, and a
    full table fails every open on the host."""
    if limits.open_files is None or limits.max_processes is None:
        return limits.open_files
    if not _FILE_MAX:
        try:
            with open("/proc/sys/fs/file-max", "rb") as f:
                _FILE_MAX.append(int(f.read().strip()))
        except (OSError, ValueError):
            _FILE_MAX.append(None)
    file_max = _FILE_MAX[0]
    if file_max is None:
        return limits.open_files
    share = file_max // _FILE_TABLE_SHARE // limits.max_processes
    return min(limits.open_files, max(_MIN_OPEN_FILES, share))


def apply_rlimits(pid: int, limits: Limits, *, data: int | None = None) -> None:
    """Lower ``pid``'s limits (never raise them above what it already has)."""
    for res, value in rlimits(limits, data=data):
        _soft, hard = resource.prlimit(pid, res)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.prlimit(pid, res, (cap, cap))


def kill_tree(pid: int, grace: float = 0.2) -> None:
    """SIGKILL the process group of ``pid``, SIGTERM then SIGKILL ``pid`` and
    every descendant. ``pid`` itself is signalled but not reaped: its parent
    (a ``Popen``) must still read its exit status."""
    # psutil costs 20 ms to import: a run whose process ended by itself
    # (most runs) never needs it
    import psutil  # noqa: PLC0415

    try:
        root = psutil.Process(pid)
        children = root.children(recursive=True)
    except psutil.Error:
        root, children = None, []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the session leader's group, at once
    for p in (*children, *([root] if root else [])):
        with contextlib.suppress(psutil.Error):
            p.terminate()
    _, alive = psutil.wait_procs(children, timeout=grace)
    for p in (*alive, *([root] if root else [])):
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=grace)


class StartError(Exception):
    """The process could not be started, or its start gate failed with an
    OSError: nothing ran. (An error raised by ``on_output`` is not this: the
    command is running by then.)"""

    def __init__(self, cause: OSError) -> None:
        super().__init__(str(cause))
        self.cause = cause


@valueclass(frozen=False, slots=False)
class _Loop:
    """The state one supervision loop keeps."""

    proc: subprocess.Popen[bytes]
    sel: selectors.BaseSelector
    captures: dict[str, OutputCapture]
    on_output: OutputCallback | None
    monitor: TreeMonitor | None = None
    timed_out: bool = False
    killed_reason: str | None = None
    memory_exceeded: bool = False


def _spawn(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: str | None,
    pass_fds: Sequence[int],
    stdin: bytes | int | None,
    spawning: Callable[[], contextlib.AbstractContextManager[None]] | None = None,
) -> tuple[subprocess.Popen[bytes], StdinFeeder | None]:
    """Start the process. Its stdin is /dev/null or a pipe this process
    feeds (see :mod:`sandbox.stdin`): never the caller's descriptor.
    ``spawning`` wraps the fork alone: a thread this one started inside it
    would stay in the run's cgroup (on v1 a thread inherits its creator's)."""
    with (spawning or contextlib.nullcontext)():
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
        )
    feeder = None
    if stdin is not None and proc.stdin is not None:
        # The feeder owns the write end from here on (and closes it).
        feeder = StdinFeeder(stdin, os.dup(proc.stdin.fileno()))
        proc.stdin.close()
    return proc, feeder


def supervise(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    limits: Limits,
    timeout: float | None = None,
    pass_fds: Sequence[int] = (),
    on_output: OutputCallback | None = None,
    stdin: bytes | int | None = None,
    on_start: Callable[[int], None] | None = None,
    after_spawn: Callable[[int], None] | None = None,
    monitor: TreeMonitor | None = None,
    spawning: Callable[[], contextlib.AbstractContextManager[None]] | None = None,
) -> ExecResult:
    """Run ``argv`` to completion under ``limits``; never raises for the
    command's own failures, only for failing to start it (:class:`StartError`).
    ``stdin``: bytes to write, a descriptor to copy until end-of-file, or
    None for /dev/null. ``after_spawn(pid)`` runs right after the process
    exists; if it raises, the tree is killed and the exception propagates.
    ``spawning()``: a context the process is started in (the cgroup it is
    born in)."""
    deadline_s = timeout if timeout is not None else limits.wall_timeout
    start = time.monotonic()
    held = InterruptsHeld()
    held.hold()
    try:
        proc, feeder = _spawn(argv, env, cwd, pass_fds, stdin, spawning)
    except BaseException as exc:
        held.release()  # nothing was started
        if isinstance(exc, OSError):
            raise StartError(exc) from exc
        raise
    state = None
    try:
        held.release()  # an interrupt that came meanwhile is raised here
        if after_spawn is not None:
            try:
                after_spawn(proc.pid)
            except OSError as exc:
                raise StartError(exc) from exc
        if on_start is not None:
            on_start(proc.pid)
        if feeder is not None:
            feeder.start()
        assert proc.stdout is not None and proc.stderr is not None
        state = _Loop(
            proc,
            selectors.DefaultSelector(),
            {name: OutputCapture(limits.max_output_bytes) for name in ("stdout", "stderr")},
            on_output,
            monitor,
        )
        state.sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
        state.sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
        _watch(state, start + deadline_s, deadline_s, limits)
    except BaseException:
        if state is None:  # not yet supervised: nothing may outlive the call
            # a second Ctrl-C must not stop the kill halfway (from a review:
            # two interrupts 1 ms apart left bubblewrap waiting at its gate,
            # and the gate's close let the command run unsupervised)
            with InterruptsHeld():
                kill_tree(proc.pid)
                proc.wait()
                _close_pipes(proc, feeder)
        raise
    finally:
        if state is not None:
            with InterruptsHeld():
                _finish(state)
                _close_pipes(proc, feeder)
    if monitor is not None and not state.killed_reason and monitor.oom_kills():
        _memory_exceeded(state, limits)  # it ended before the watchdog looked
    code = proc.returncode
    exit_code, sig = (None, -code) if code < 0 else (code, None)
    return ExecResult(
        exit_code=exit_code,
        signal=sig,
        stdout=state.captures["stdout"].data(),
        stderr=state.captures["stderr"].data(),
        timed_out=state.timed_out,
        truncated=any(c.truncated for c in state.captures.values()),
        duration=time.monotonic() - start,
        killed_reason=state.killed_reason,
        memory_exceeded=state.memory_exceeded,
    )


class InterruptsHeld:
    """Ctrl-C (SIGINT) held back while the process is started, and raised at
    :meth:`release`, inside the code that kills what was started. Attack
    (from a review of the run daemon, whose child turns its client's death
    into a SIGINT): an interrupt that landed inside ``Popen``, or between it
    and the supervision loop, left bubblewrap running unsupervised; the
    post-run guards looked while the command was still writing, and it
    finished after them. Reproducer: ``shellgate run -- sh -c 'sleep 1.5;
    echo f >> m' & sleep 0.04; kill $!`` — about one run in thirty wrote
    ``f``. Only the main thread has Python signal handlers; elsewhere this
    holds nothing."""

    def __init__(self) -> None:
        self.previous: Any = None
        self.pending = False
        self.holding = False

    def __enter__(self) -> InterruptsHeld:
        return self.hold()

    def hold(self) -> InterruptsHeld:
        import threading  # noqa: PLC0415 -- loaded already: the stdin feeder's

        # a handler not set from Python (None) cannot be put back: not held
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is not None):
            self.previous = signal.signal(signal.SIGINT, self._note)
            self.holding = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()  # idempotent: a held interrupt is raised on the way out

    def _note(self, _signum: int, _frame: object) -> None:
        self.pending = True

    def release(self, *, deliver: bool = True) -> bool:
        """Put the handler back; raise a held interrupt the way it would
        have come (the previous handler, or the default action), or with
        ``deliver`` false leave it to the caller. Whether one came."""
        if not self.holding:
            return False
        self.holding = False
        signal.signal(signal.SIGINT, self.previous)
        if self.pending and deliver:
            signal.raise_signal(signal.SIGINT)
        return self.pending


def _memory_exceeded(state: _Loop, limits: Limits) -> None:
    state.memory_exceeded = True
    size = human(limits.memory) if limits.memory else "the limit"
    state.killed_reason = (f"memory limit of {size} reached: the kernel killed a process, "
                           "and the whole process tree was stopped")


def _over_limit(state: _Loop, limits: Limits, count_tree: bool) -> bool:
    """Check the memory and process limits; True (with the reason set)
    when the tree must be killed."""
    monitor, cap = state.monitor, limits.max_processes
    count = None
    if monitor is not None:
        if monitor.oom_kills():
            _memory_exceeded(state, limits)
            return True
        if cap is not None and monitor.forks_refused():
            state.killed_reason = f"more than {cap} processes (a fork was refused at the cap)"
            return True
        full = monitor.overfull()
        if full:
            state.killed_reason = full
            return True
        count = monitor.processes()
    if count is None and count_tree:
        count = _count_tree(state.proc.pid)
    if cap is not None and count is not None and count >= cap:
        state.killed_reason = f"more than {cap} processes"
        return True
    return False


def _watch(state: _Loop, deadline: float, deadline_s: float, limits: Limits) -> None:
    """Pump output until both streams end, the deadline passes, or a limit
    is crossed (memory, processes)."""
    next_check = time.monotonic() + _LIMIT_POLL
    next_nproc_check = time.monotonic() + _NPROC_POLL
    sel = state.sel
    while sel.get_map():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            state.timed_out = True
            state.killed_reason = f"wall timeout of {deadline_s:g}s"
            return
        if state.proc.poll() is not None and not _drain_ready(sel):
            return  # exited, pipes may be held open by nothing we care about
        _pump(sel, sel.select(timeout=min(remaining, _LIMIT_POLL)), state.captures,
              state.on_output)
        now = time.monotonic()
        if now >= next_check:
            next_check = now + _LIMIT_POLL
            count_tree = now >= next_nproc_check
            if count_tree:
                next_nproc_check = now + _NPROC_POLL
            if _over_limit(state, limits, count_tree):
                return


def _finish(state: _Loop) -> None:
    """Whatever ended the loop, nothing started here may outlive the call.
    A command that exited on its own left nothing in bwrap's PID namespace
    (the kernel ended it with PID 1); its process group still gets a
    SIGKILL for the ``none`` backend."""
    proc = state.proc
    if state.monitor is not None and proc.poll() is None:
        # SIGKILL to the sandbox's PID 1 ends every process in its PID
        # namespace at once: walking a fork bomb's tree process by process
        # took seconds.
        state.monitor.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(2.0)  # bwrap notices its child's end and exits
    if proc.poll() is None:
        kill_tree(proc.pid)
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _drain_rest(state.sel, state.captures, state.on_output)
    state.sel.close()


def _close_pipes(proc: subprocess.Popen[bytes], feeder: StdinFeeder | None) -> None:
    if feeder is not None:
        feeder.stop()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def _drain_ready(sel: selectors.BaseSelector) -> bool:
    """After the process exited: is there still data waiting right now?"""
    return bool(sel.select(timeout=0.05))


def _drain_rest(
    sel: selectors.BaseSelector,
    captures: dict[str, OutputCapture],
    on_output: OutputCallback | None,
) -> None:
    """Everything still buffered in the pipes once the tree is dead."""
    deadline = time.monotonic() + 1.0
    while sel.get_map() and time.monotonic() < deadline:
        events = sel.select(timeout=0.05)
        if not events:
            break
        _pump(sel, events, captures, on_output)


def _pump(
    sel: selectors.BaseSelector,
    events: list[tuple[selectors.SelectorKey, int]],
    captures: dict[str, OutputCapture],
    on_output: OutputCallback | None,
) -> None:
    """Read what is ready; a stream at EOF leaves the selector."""
    for key, _ in events:
        data = os.read(key.fileobj.fileno(), _READ_CHUNK)  # type: ignore[union-attr]
        if not data:
            sel.unregister(key.fileobj)
            continue
        captures[key.data].feed(data)
        if on_output is not None:
            on_output(key.data, data)


def _count_tree(pid: int) -> int:
    import psutil  # noqa: PLC0415

    try:
        return 1 + len(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return 0
