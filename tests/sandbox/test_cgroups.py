"""Where a run's cgroup is made, and what is written into it — over fake
cgroup trees (the decision logic), and how the sandbox is born in it over
this machine's real v1 hierarchy where it has one (the limits themselves:
tests/sandbox/test_escapes_limits.py)."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.cgroups import RunCgroup, parse_cgroup, parse_mountinfo, places_for

V1_CGROUP = "9:name=systemd:/\n8:pids:/\n4:memory:/jobs/42\n0::/\n"
V2_CGROUP = "0::/user.slice/user-1000.slice/user@1000.service/app.slice\n"


def _mountinfo(base: Path, *, v1: bool) -> str:
    if v1:
        return (f"30 25 0:26 / {base}/memory rw - cgroup cgroup rw,memory\n"
                f"31 25 0:27 / {base}/pids rw - cgroup cgroup rw,pids\n"
                f"32 25 0:28 / {base}/unified rw - cgroup2 cgroup2 rw\n")
    return f"30 25 0:26 / {base} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def test_the_own_cgroup_and_the_mounts_are_read_from_proc_text() -> None:
    assert parse_cgroup(V1_CGROUP) == {"name=systemd": "/", "pids": "/", "memory": "/jobs/42",
                                       "": "/"}
    mounts = parse_mountinfo(_mountinfo(Path("/sys/fs/cgroup"), v1=True))
    assert mounts["memory"] == ("/sys/fs/cgroup/memory", "/")
    assert mounts[""] == ("/sys/fs/cgroup/unified", "/")


def test_cgroup_v1_gives_a_child_of_the_own_memory_and_pids_groups(tmp_path: Path) -> None:
    (tmp_path / "memory" / "jobs" / "42").mkdir(parents=True)
    (tmp_path / "pids").mkdir()
    places = places_for(parse_cgroup(V1_CGROUP), parse_mountinfo(_mountinfo(tmp_path, v1=True)))
    assert places.version == 1
    assert places.memory == str(tmp_path / "memory" / "jobs" / "42")
    assert places.pids == str(tmp_path / "pids")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any directory")
def test_an_unwritable_v1_group_falls_back_and_says_why(tmp_path: Path) -> None:
    own = tmp_path / "memory" / "jobs" / "42"
    own.mkdir(parents=True)
    own.chmod(0o555)
    places = places_for(parse_cgroup(V1_CGROUP), parse_mountinfo(_mountinfo(tmp_path, v1=True)))
    assert places.memory is None and "not writable" in places.why


@pytest.mark.parametrize(
    ("delegated", "memory", "pids"),
    [("memory pids", True, True), ("memory", True, False), ("cpu", False, False)],
)
def test_cgroup_v2_needs_the_memory_controller_delegated(
    tmp_path: Path, delegated: str, memory: bool, pids: bool
) -> None:
    own = tmp_path / V2_CGROUP.strip().split("::")[1].lstrip("/")
    own.mkdir(parents=True)
    (own / "cgroup.subtree_control").write_text(delegated + "\n")
    places = places_for(parse_cgroup(V2_CGROUP), parse_mountinfo(_mountinfo(tmp_path, v1=False)))
    assert places.version == 2
    assert (places.memory is not None) is memory
    assert (places.pids is not None) is pids
    if not memory:
        assert "does not delegate the memory controller" in places.why


def test_a_v2_run_group_gets_its_limits_no_swap_and_the_whole_tree_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "svc"
    own.mkdir()
    (own / "cgroup.subtree_control").write_text("memory pids\n")
    places = places_for({"": "/svc"}, {"": (str(tmp_path), "/")})
    original_mkdir = os.mkdir

    def mkdir_with_files(path: str, mode: int = 0o777) -> None:
        original_mkdir(path, mode)  # a real cgroupfs makes the control files itself
        for name in ("memory.max", "memory.swap.max", "memory.oom.group", "pids.max",
                     "cgroup.procs"):
            Path(path, name).write_text("")

    monkeypatch.setattr(os, "mkdir", mkdir_with_files)
    group = RunCgroup.create(256 << 20, 100, places=places)
    monkeypatch.undo()
    assert group is not None and group.memory == group.pids
    made = Path(group.memory or "")
    assert (made / "memory.max").read_text() == str(256 << 20)
    assert (made / "memory.swap.max").read_text() == "0"
    assert (made / "memory.oom.group").read_text() == "1"
    assert (made / "pids.max").read_text() == "100"
    group.attach(12345)
    assert (made / "cgroup.procs").read_text() == "12345"
    (made / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n")
    assert group.oom_kills() == 2


def test_no_limit_asked_makes_no_group(tmp_path: Path) -> None:
    places = places_for({"": "/"}, {"": (str(tmp_path), "/")})
    assert RunCgroup.create(None, None, places=places) is None


def _fake_v1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunCgroup:
    """A v1 run group over plain directories: its control files are plain
    files (``tasks`` of the parents too)."""
    for controller in ("memory", "pids"):
        (tmp_path / controller).mkdir()
        (tmp_path / controller / "tasks").write_text("")
    places = places_for({"memory": "/", "pids": "/"},
                        {"memory": (str(tmp_path / "memory"), "/"),
                         "pids": (str(tmp_path / "pids"), "/")})
    original_mkdir = os.mkdir

    def mkdir_with_files(path: str, mode: int = 0o777) -> None:
        original_mkdir(path, mode)
        for name in ("memory.limit_in_bytes", "pids.max", "tasks", "cgroup.procs"):
            Path(path, name).write_text("")

    monkeypatch.setattr(os, "mkdir", mkdir_with_files)
    group = RunCgroup.create(256 << 20, 100, places=places)
    monkeypatch.undo()
    assert group is not None and group.memory is not None and group.pids is not None
    return group


def test_a_v1_group_counts_bwraps_own_process_when_the_sandbox_is_born_inside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = _fake_v1(tmp_path, monkeypatch)
    with group.spawning():
        pass
    assert Path(group.pids or "", "pids.max").read_text() == "101"
    assert Path(group.memory or "", "tasks").read_text() == "0"
    assert (tmp_path / "memory" / "tasks").read_text() == "0"  # and back out
    group.attach(12345)
    assert Path(group.memory or "", "cgroup.procs").read_text() == ""  # born there already
    Path(group.pids or "", "pids.current").write_text("8\n")
    assert group.processes() == 7


def test_a_v1_group_the_thread_cannot_step_into_takes_the_sandbox_the_slow_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = _fake_v1(tmp_path, monkeypatch)
    Path(group.pids or "", "tasks").unlink()
    Path(group.pids or "", "tasks").mkdir()  # the step into the pids group fails
    with group.spawning():
        pass
    assert (tmp_path / "memory" / "tasks").read_text() == "0"  # the memory step undone
    assert Path(group.pids or "", "pids.max").read_text() == "100"
    group.attach(12345)
    assert Path(group.pids or "", "cgroup.procs").read_text() == "12345"


def test_a_v1_group_whose_way_back_cannot_be_opened_takes_the_sandbox_the_slow_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a user handed the run's parent directory but not its tasks file
    group = _fake_v1(tmp_path, monkeypatch)
    (tmp_path / "pids" / "tasks").unlink()
    with group.spawning():
        pass
    assert Path(group.memory or "", "tasks").read_text() == ""  # never stepped in
    assert Path(group.pids or "", "pids.max").read_text() == "100"
    group.attach(12345)
    assert Path(group.memory or "", "cgroup.procs").read_text() == "12345"
    assert group.stuck is None


def test_a_starting_thread_that_cannot_leave_the_run_group_stops_the_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = _fake_v1(tmp_path, monkeypatch)
    (tmp_path / "memory" / "tasks").unlink()
    (tmp_path / "memory" / "tasks").symlink_to("/dev/full")  # opens; every write fails
    with group.spawning():
        pass
    with pytest.raises(OSError, match="cannot leave the run's cgroup"):
        group.attach(12345)


def _thread_cgroup() -> str:
    return Path("/proc/thread-self/cgroup").read_text()


def _in_thread(work: Callable[[], None]) -> None:
    failure: list[BaseException] = []

    def body() -> None:
        try:
            work()
        except BaseException as exc:  # re-raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


@pytest.mark.parametrize("where", ["main thread", "another thread"])
def test_a_child_started_in_a_real_v1_group_is_born_there_and_the_thread_returns(
        where: str) -> None:
    group = RunCgroup.create(256 << 20, 50)
    if group is None or group.version != 1:
        if group is not None:
            group.close()
        pytest.skip("needs a writable cgroup v1 memory hierarchy (root on a v1 or hybrid host)")
    main_before = _thread_cgroup()
    children: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        before = _thread_cgroup()
        with group.spawning():
            children.append(subprocess.Popen(["sleep", "30"]))
        assert _thread_cgroup() == before

    try:
        start() if where == "main thread" else _in_thread(start)
        assert _thread_cgroup() == main_before
        lines = Path(f"/proc/{children[0].pid}/cgroup").read_text().splitlines()
        for directory, controller in ((group.memory, "memory"), (group.pids, "pids")):
            if directory is not None:
                line = next(x for x in lines if controller in x.split(":")[1].split(","))
                assert line.endswith("/" + os.path.basename(directory)), lines
        group.attach(children[0].pid)
        if group.pids is not None:
            assert group.processes() == 0  # the stand-in for bwrap's outer process
            assert Path(group.pids, "pids.max").read_text().strip() == "51"
    finally:
        for child in children:
            child.kill()
            child.wait()
        assert group.close() is None


def _in_groups(cgroup: str, memory: str, pids: str) -> bool:
    lines = {c: line.rsplit(":", 1)[1] for line in cgroup.splitlines()
             for c in line.split(":")[1].split(",")}
    return (lines.get("memory", "").endswith("/" + os.path.basename(memory))
            and lines.get("pids", "").endswith("/" + os.path.basename(pids)))


def _child_as_nobody(deleg: dict[str, str]) -> int:
    """In a forked child moved into the delegated groups: as nobody, start a
    process in a run group made below them. 0 when it landed in the run's
    groups and this thread came back; otherwise a code naming the step."""
    os.setgroups([])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    places = places_for(parse_cgroup(_thread_cgroup()),
                        parse_mountinfo(Path("/proc/self/mountinfo").read_text()))
    if places.memory != deleg["memory"] or places.pids != deleg["pids"]:
        return 10
    group = RunCgroup.create(64 << 20, 20, places=places)
    if group is None or group.memory is None or group.pids is None:
        return 11
    try:
        code = _start_in(group, deleg)
    finally:
        problem = group.close()
    return code if problem is None else 15


def _start_in(group: RunCgroup, deleg: dict[str, str]) -> int:
    assert group.memory is not None and group.pids is not None
    try:
        with group.spawning():
            child = subprocess.Popen(["sleep", "30"])
        try:
            group.attach(child.pid)  # raises when the thread stayed inside
            if not _in_groups(_thread_cgroup(), deleg["memory"], deleg["pids"]):
                return 12
            if not _in_groups(Path(f"/proc/{child.pid}/cgroup").read_text(),
                              group.memory, group.pids):
                return 13
        finally:
            child.kill()
            child.wait()
    except OSError:
        return 14
    return 0


def test_a_user_handed_only_the_directory_of_a_v1_group_runs_with_its_limits() -> None:
    # From a review: root made the groups and chowned the directories alone
    # to the user (their tasks files stay root's). The thread stepped into
    # the run's groups, could not step back out, every run was refused and
    # the supervisor stayed in the run's memory group.
    if os.geteuid() != 0:
        pytest.skip("needs root to make and hand over the groups")
    own = RunCgroup.create(64 << 20, 20)
    if own is None or own.version != 1 or own.memory is None or own.pids is None:
        if own is not None:
            own.close()
        pytest.skip("needs a writable cgroup v1 memory and pids hierarchy")
    parents = {"memory": os.path.dirname(own.memory), "pids": os.path.dirname(own.pids)}
    own.close()
    deleg = {k: os.path.join(v, f"shellgate-test-deleg-{os.getpid()}") for k, v in parents.items()}
    for directory in deleg.values():
        os.mkdir(directory)
        os.chown(directory, 65534, 65534)  # the directory, not its files
    try:
        assert os.stat(os.path.join(deleg["memory"], "tasks")).st_uid == 0
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(write)
            os.read(read, 1)  # moved by now
            code = 99
            try:
                code = _child_as_nobody(deleg)
            finally:
                os._exit(code)
        os.close(read)
        for directory in deleg.values():
            Path(directory, "cgroup.procs").write_text(str(pid))
        os.write(write, b"1")
        os.close(write)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        for directory in deleg.values():
            for entry in os.scandir(directory):
                if entry.is_dir():
                    os.rmdir(entry.path)
            os.rmdir(directory)
