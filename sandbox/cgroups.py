"""A control group per run: a real memory limit on the whole process tree,
and a process count the kernel enforces.

Attack it answers (from a review): ``python3 -c 'bytearray(4 << 30)'``
succeeded inside ``shellgate run`` — nothing bounded the command's memory,
and an agent's runaway test suite can take the machine down. ``RLIMIT_AS``
is no answer (V8, the JVM and sanitizers reserve far more address space than
they use); ``RLIMIT_DATA`` bounds each process, not the tree, and not the
pages of tmpfs or shared memory. A memory cgroup bounds all of it.

Where one can be had, a run gets its own child of shellgate's *own* cgroup
(``/proc/self/cgroup``), so the limit nests inside whatever already bounds
shellgate:

* cgroup v1 (this is what a root shellgate gets on a hybrid host with no
  systemd as PID 1): a child in the ``memory`` hierarchy —
  ``memory.limit_in_bytes``, and ``memory.memsw.limit_in_bytes`` so swap
  does not extend it — and one in the ``pids`` hierarchy;
* cgroup v2: a child of a cgroup that delegates ``memory`` to its children
  (its ``cgroup.subtree_control`` names it, as a delegated systemd user
  service or a container's root does): ``memory.max``, ``memory.swap.max``
  = 0, ``memory.oom.group`` = 1 (the whole tree goes, not one process), and
  ``pids.max`` when the ``pids`` controller is delegated too.

Otherwise the fallback is ``RLIMIT_DATA`` on every process (see
:func:`mechanism`, which ``shellgate doctor`` reports).

How the sandbox gets in: on cgroup v1 the thread starting bubblewrap steps
into the run's groups for the moment of the fork (:meth:`RunCgroup.spawning`)
and back, so bwrap and everything it starts are born in them. A thread
moving itself is the one move the kernel makes without its global
threadgroup lock, whose write side waits for an RCU grace period: writing
the sandbox's pid to ``cgroup.procs`` cost 10-25 ms of every run, the step
costs well under one. Elsewhere (cgroup v2, where a thread cannot leave its
process's group) the sandbox's first process is moved into the group before
the command starts (the start gate in :mod:`sandbox.linux.launch`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import time

from values import valueclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_PREFIX = "shellgate-"
_SEQ = itertools.count()


@valueclass
class Mechanism:
    """How runs are limited on this machine, and why."""

    memory: str  # "cgroup v1" | "cgroup v2" | "RLIMIT_DATA"
    processes: str  # "cgroup v1" | "cgroup v2" | "watchdog"
    why: str


@valueclass
class Places:
    """Where a run's groups are made: parent directories, or None."""

    version: int
    memory: str | None
    pids: str | None
    why: str


def parse_cgroup(text: str) -> dict[str, str]:
    """``/proc/self/cgroup``: controller (or "" for the v2 hierarchy) ->
    the process's cgroup path."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def parse_mountinfo(text: str) -> dict[str, tuple[str, str]]:
    """``/proc/self/mountinfo``: controller (or "" for cgroup2) -> (mount
    point, root of the mount)."""
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        fstype, root, point = tail[0], fields[3], fields[4]
        if fstype == "cgroup2":
            out.setdefault("", (point, root))
        elif fstype == "cgroup":
            for option in tail[2].split(","):
                out.setdefault(option, (point, root))
    return out


def _own_dir(
    controller: str, own: dict[str, str], mounts: dict[str, tuple[str, str]]
) -> str | None:
    if controller not in own or controller not in mounts:
        return None
    point, root = mounts[controller]
    path = own[controller]
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root):] or "/"
    full = os.path.normpath(os.path.join(point, path.lstrip("/")))
    return full if os.path.isdir(full) else None


def _proc(name: str, whose: str = "self") -> str:
    try:
        with open(f"/proc/{whose}/{name}", encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


def _thread_cgroup() -> str:
    """The calling thread's groups: a child it forks is born in them, and
    :meth:`RunCgroup.spawning` returns it to them (the run's groups are made
    below them). A thread of a process moved thread by thread may sit
    elsewhere than ``/proc/self`` says."""
    return _proc("cgroup", "thread-self") or _proc("cgroup")


def _writable(directory: str) -> bool:
    return os.access(directory, os.W_OK | os.X_OK)


def _read(path: str) -> str:
    with open(path, encoding="ascii") as handle:
        return handle.read()


def _places(cgroup: str | None = None) -> Places:
    return _places_of(_proc("cgroup") if cgroup is None else cgroup)


@functools.cache
def _places_of(cgroup: str) -> Places:
    return places_for(parse_cgroup(cgroup), parse_mountinfo(_proc("mountinfo")))


def places_for(own: dict[str, str], mounts: dict[str, tuple[str, str]]) -> Places:
    """Where a process in cgroups ``own``, seeing ``mounts``, makes a run's
    groups (and why not, when it cannot)."""
    memory_v1 = _own_dir("memory", own, mounts)
    if memory_v1 is not None:
        if not _writable(memory_v1):
            return Places(1, None, None, f"the memory cgroup {memory_v1} is not writable by "
                           "this user (cgroup v1 is not delegated to users)")
        pids = _own_dir("pids", own, mounts)
        return Places(1, memory_v1, pids if pids and _writable(pids) else None,
                       f"a child of {memory_v1}")
    unified = _own_dir("", own, mounts)
    if unified is None:
        return Places(0, None, None, "no cgroup hierarchy with a memory controller is mounted")
    try:
        delegated = _read(os.path.join(unified, "cgroup.subtree_control")).split()
    except OSError:
        delegated = []
    if "memory" not in delegated or not _writable(unified):
        return Places(2, None, None, f"{unified} does not delegate the memory controller to "
                       "children this user may create (run under a delegated cgroup, e.g. "
                       "`systemd-run --user --scope -p Delegate=yes`)")
    return Places(2, unified, unified if "pids" in delegated else None, f"a child of {unified}")


def mechanism() -> Mechanism:
    """What a run on this machine gets (``shellgate doctor`` shows it)."""
    places = _places()
    version = f"cgroup v{places.version}"
    return Mechanism(
        memory=version if places.memory else "RLIMIT_DATA",
        processes=version if places.pids else "watchdog",
        why=places.why,
    )


class RunCgroup:
    """The groups of one run. Made by :meth:`create`, removed by :meth:`close`."""

    def __init__(self, version: int, memory: str | None, pids: str | None) -> None:
        self.version = version
        self.memory = memory
        self.pids = pids
        #: the sandbox is born in the groups (:meth:`spawning`); then bwrap's
        #: own outer process is in them too, one more than the command's
        self.born_inside = version == 1
        #: why the starting thread could not leave the groups again
        self.stuck: OSError | None = None
        self._cap: int | None = None

    @classmethod
    def create(cls, memory: int | None, processes: int | None, *,
               places: Places | None = None) -> RunCgroup | None:
        """Groups with these limits, or None where the machine has none
        (the caller falls back to rlimits). Raises OSError when a group
        that should be possible cannot be made. ``places``: where (default:
        this process's own cgroups)."""
        places = places or _places(_thread_cgroup())
        want_memory = places.memory if memory is not None else None
        want_pids = places.pids if processes is not None else None
        if want_memory is None and want_pids is None:
            return None
        name = f"{_PREFIX}{os.getpid()}-{next(_SEQ)}"
        group = cls(places.version, None, None)
        try:
            if want_memory is not None and memory is not None:
                group.memory = _make(want_memory, name)
                group._limit_memory(memory)
            if want_pids is not None and processes is not None:
                if want_pids == want_memory and group.memory is not None:
                    group.pids = group.memory  # v2: one directory holds both
                else:
                    group.pids = _make(want_pids, name)
                group._cap = processes
                group._write_cap()
        except OSError:
            group.close()
            raise
        return group

    def _limit_memory(self, limit: int) -> None:
        assert self.memory is not None
        if self.version == 1:
            _write(self.memory, "memory.limit_in_bytes", str(limit))
            if os.path.exists(os.path.join(self.memory, "memory.memsw.limit_in_bytes")):
                _write(self.memory, "memory.memsw.limit_in_bytes", str(limit))
            return
        _write(self.memory, "memory.max", str(limit))
        for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
            if os.path.exists(os.path.join(self.memory, name)):
                _write(self.memory, name, value)

    def _dirs(self) -> list[str]:
        return list(dict.fromkeys(d for d in (self.memory, self.pids) if d))

    def _write_cap(self) -> None:
        if self.pids is not None and self._cap is not None:
            _write(self.pids, "pids.max", str(self._cap + self.born_inside))

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """Around the fork of the sandbox's first process: on cgroup v1 the
        calling thread steps into the groups (``tasks``, "0": itself alone)
        and back out to the groups they were made in, its own (see
        :func:`_thread_cgroup`). The child is born inside.

        The way back is opened before the first step: where a user was
        handed the run's parent directory but not its ``tasks`` file (from
        a review: ``chown nobody`` of the directory alone), the step in
        worked, the step out was refused, and the supervisor stayed in the
        run's memory group for good; now such a group takes the slow way
        (:meth:`attach` moves the child). When a step in fails, every step
        is undone and the slow way is taken too; when the way back fails
        even so, :attr:`stuck` says why and the start gate refuses to start
        the command (a supervisor inside the run's memory group would die
        with it, before the post-run checks)."""
        exits: list[int] = []
        stepped = False
        try:
            if self.born_inside:
                try:
                    for directory in self._dirs():
                        exits.append(os.open(os.path.join(os.path.dirname(directory), "tasks"),
                                             os.O_WRONLY | os.O_CLOEXEC))
                    # set before the first write: an interrupt after it
                    # still steps back (a step back where none was taken
                    # moves the thread to where it is: nothing)
                    stepped = True
                    for directory in self._dirs():
                        _write(directory, "tasks", "0")
                except OSError:
                    if stepped:
                        self._step_back(exits)
                    stepped = False
                    self.born_inside = False
                    self._write_cap()
            yield
        finally:
            if stepped:
                self._step_back(exits)
            for fd in exits:
                os.close(fd)

    def _step_back(self, exits: list[int]) -> None:
        for fd in exits:
            try:
                os.write(fd, b"0")
            except OSError as exc:
                self.stuck = exc

    def attach(self, pid: int) -> None:
        """Move ``pid`` (the sandbox's first process) into the groups, unless
        it was born there."""
        if self.stuck is not None:
            raise OSError(self.stuck.errno, "cannot leave the run's cgroup after starting "
                          f"the sandbox: {self.stuck.strerror}")
        if self.born_inside:
            return
        for directory in self._dirs():
            _write(directory, "cgroup.procs", str(pid))

    def processes(self) -> int | None:
        """The run's processes (threads) now, bwrap's outer one not counted."""
        if self.pids is None:
            return None
        try:
            return int(_read(os.path.join(self.pids, "pids.current"))) - self.born_inside
        except (OSError, ValueError):
            return None

    def forks_refused(self) -> int:
        """How many forks the process cap refused so far."""
        if self.pids is None:
            return 0
        return _counter(os.path.join(self.pids, "pids.events"), "max")

    def oom_kills(self) -> int:
        """How many processes the memory limit killed so far."""
        if self.memory is None:
            return 0
        if self.version == 1:
            return _counter(os.path.join(self.memory, "memory.oom_control"), "oom_kill")
        return _counter(os.path.join(self.memory, "memory.events"), "oom_kill")

    def close(self) -> str | None:
        """Remove the groups (their processes are gone by now); a problem
        line when one stays."""
        problem = None
        for directory in dict.fromkeys(d for d in (self.pids, self.memory) if d):
            deadline = time.monotonic() + 1.0
            while True:
                try:
                    os.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:  # EBUSY: a process is still exiting
                    if time.monotonic() > deadline:
                        problem = f"cannot remove the run's cgroup {directory}: {exc.strerror}"
                        break
                    time.sleep(0.01)
        self.memory = self.pids = None
        return problem


def _make(parent: str, name: str) -> str:
    _sweep(parent)
    path = os.path.join(parent, name)
    os.mkdir(path)
    return path


def _sweep(parent: str) -> None:
    """Remove the empty groups of runs whose shellgate is gone (killed
    before it could clean up)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if not entry.name.startswith(_PREFIX):
                continue
            pid = entry.name[len(_PREFIX):].partition("-")[0]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)


def _write(directory: str, name: str, value: str) -> None:
    fd = os.open(os.path.join(directory, name), os.O_WRONLY)
    try:
        os.write(fd, value.encode("ascii"))
    finally:
        os.close(fd)


def _counter(path: str, key: str) -> int:
    """``key N`` from a flat-keyed cgroup file, 0 when absent."""
    try:
        for line in _read(path).splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return 0
