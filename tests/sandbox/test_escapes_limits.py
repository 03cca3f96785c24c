"""Limits that protect the host: memory, the private filesystems, processes,
cleanup. Judged from the host, as root and (through the unprivileged leg)
as a user; every size here is small, so no test writes gigabytes.

Attacks (from a review): `fallocate -l 20G /tmp/big` landed on the host's
disk; `bytearray(4 GiB)` succeeded; /dev/shm and /run were tmpfs of half of
RAM each; a mode-000 directory in the private /tmp survived cleanup as a
user; a fork bomb was killed 5.7 s after its timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
from escape_kit import (
    PY,
    SHELLGATE,
    consume_control,
    output,
    processes_mentioning,
    require,
    sg,
    sh,
)

from sandbox.cgroups import mechanism
from sandbox.cleanup import remove_tree

pytestmark = pytest.mark.sandbox

CGROUP = mechanism().memory != "RLIMIT_DATA"


def _alloc(mib: int) -> str:
    touch = "b[::4096] = b\"x\" * len(b[::4096])"
    return f"{PY} -c 'b = bytearray({mib} << 20); {touch}; print(\"allocated\")'"


# -- memory -------------------------------------------------------------------------------------


def test_an_allocation_past_the_memory_limit_does_not_succeed(workspace: Path) -> None:
    proc = sh(workspace, "echo ran > control.txt; " + _alloc(256), options=("--memory", "128M"))
    consume_control(workspace, proc)
    text = output(proc)
    assert "allocated" not in proc.stdout.decode(), text
    if CGROUP:
        assert proc.returncode == 137, text
        assert "memory limit of 128 MiB reached" in text
    else:  # RLIMIT_DATA: the allocation fails in the process, which is not killed
        assert "MemoryError" in text


def test_a_build_sized_allocation_below_the_limit_passes(workspace: Path) -> None:
    proc = sh(workspace, _alloc(64), options=("--memory", "256M"))
    assert proc.returncode == 0, output(proc)
    assert b"allocated" in proc.stdout


@pytest.mark.skipif(not CGROUP, reason="tmpfs pages count against the memory limit only in a "
                    "cgroup; without one the tmpfs size caps are the bound (tested below)")
def test_tmpfs_pages_count_against_the_memory_limit(workspace: Path) -> None:
    proc = sh(workspace, "echo ran > control.txt; "
              "dd if=/dev/zero of=/dev/shm/fill bs=1M count=200 2>/dev/null; sleep 5",
              options=("--memory", "96M", "--shm-size", "256M"))
    consume_control(workspace, proc)
    assert proc.returncode == 137, output(proc)
    assert "memory limit" in output(proc)


def test_a_v8_style_address_space_reservation_is_not_refused(workspace: Path) -> None:
    """RLIMIT_AS would refuse it (V8, the JVM and sanitizers reserve far
    more address space than they use, as PROT_NONE mappings); the memory
    limit counts what is used."""
    script = ("import mmap; m = mmap.mmap(-1, 8 << 30, flags=mmap.MAP_PRIVATE | "
              "mmap.MAP_ANONYMOUS | getattr(mmap, 'MAP_NORESERVE', 0), prot=0); "
              "print('reserved')")
    proc = sg(workspace, PY, "-c", script, options=("--memory", "128M"))
    assert proc.returncode == 0, output(proc)
    assert b"reserved" in proc.stdout


# -- private filesystems ------------------------------------------------------------------------


@pytest.mark.parametrize(("where", "flag"), [("/tmp", "--tmp-size"), ("/dev/shm", "--shm-size"),
                                             ("/run", "--run-size")])
def test_writing_past_a_tmpfs_cap_fails_with_enospc_and_the_host_is_unchanged(
    workspace: Path, where: str, flag: str
) -> None:
    free_before = shutil.disk_usage("/var/tmp").free
    proc = sh(workspace, f"echo ran > control.txt; dd if=/dev/zero of={where}/big bs=1M count=24; "
                         f"echo small > {where}/small && cat {where}/small",
              options=(flag, "8M"))
    consume_control(workspace, proc)
    text = output(proc)
    assert "No space left on device" in text, text
    assert shutil.disk_usage("/var/tmp").free > free_before - (16 << 20)


def test_dev_itself_is_read_only_and_its_devices_work(workspace: Path) -> None:
    proc = sh(workspace, "echo ran > control.txt; echo x > /dev/null && echo null-ok; "
                         "head -c 4 /dev/urandom | wc -c; echo x > /dev/planted")
    consume_control(workspace, proc)
    text = output(proc)
    assert "null-ok" in text and "Read-only file system" in text


def test_a_directory_hiding_a_secret_cannot_be_filled(workspace: Path, tmp_path: Path) -> None:
    """It is an empty read-only directory, not a tmpfs to fill with files."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[default]\n")
    env = {**os.environ, "HOME": str(home)}
    proc = sh(workspace, "echo ran > control.txt; dd if=/dev/zero of=$HOME/.aws/fill bs=1M "
                         "count=16; touch $HOME/.aws/a $HOME/.aws/b", env=env)
    consume_control(workspace, proc)
    assert "Read-only file system" in output(proc)
    assert not (home / ".aws" / "fill").exists()


def test_a_private_tmpfs_cannot_hold_unbounded_files(workspace: Path) -> None:
    """Each file costs kernel memory whatever its size. With a memory
    cgroup they count against it; without one, a tmpfs holding more files
    than its size cap holds pages stops the run."""
    script = (f"echo ran > control.txt; {PY} -c 'import os\nfor i in range(200000): "
              "os.close(os.open(f\"/tmp/f{i}\", os.O_CREAT | os.O_WRONLY))'; echo survived")
    if CGROUP:
        proc = sh(workspace, script, options=("--memory", "64M", "--timeout", "60"))
        consume_control(workspace, proc)
        assert proc.returncode == 137, output(proc)[-500:]
    else:
        proc = sh(workspace, script, options=("--tmp-size", "16M", "--timeout", "60"))
        consume_control(workspace, proc)
        assert "more than 4096 files in /tmp" in output(proc), output(proc)[-500:]
        assert b"survived" not in proc.stdout


def test_netlink_and_other_socket_families_are_refused(workspace: Path) -> None:
    """Netlink receive queues are charged to no cgroup (a review held 784 MiB
    of host kernel memory under --memory 64M); only unix (when allowed) and
    IP (when networked) sockets exist in the sandbox."""
    script = ("import socket\nfor fam in (16, 17, 38, 40, 44):\n    try:\n"
              "        socket.socket(fam, socket.SOCK_RAW if fam != 38 else "
              "socket.SOCK_SEQPACKET)\n        print(fam, 'open')\n"
              "    except OSError as e:\n        print(fam, e.errno)\n"
              "open('control.txt', 'w').write('ran')")
    proc = sg(workspace, PY, "-c", script)
    consume_control(workspace, proc)
    assert "open" not in proc.stdout.decode(), proc.stdout
    assert proc.stdout.decode().split() == ["16", "1", "17", "1", "38", "1", "40", "1",
                                            "44", "1"]


def test_a_mode_000_tree_in_the_private_tmp_is_gone_after_the_run(workspace: Path) -> None:
    script = ("echo ran > control.txt; mkdir -p /tmp/locked/a/b && dd if=/dev/zero "
              "of=/tmp/locked/a/b/blob bs=1M count=4 2>/dev/null && chmod 000 /tmp/locked/a/b "
              "/tmp/locked/a /tmp/locked && ls -ld /tmp/locked")
    proc = sh(workspace, script)
    consume_control(workspace, proc)
    require(b"d---------" in proc.stdout, "the locked tree was made", proc)
    again = sh(workspace, "ls /tmp/locked 2>&1 || echo gone")
    assert b"gone" in again.stdout
    leftovers = [p for base in ("/tmp", "/var/tmp", os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
                 for p in Path(base).glob(f"shellgate-{os.getuid()}/run-*/tmp/locked")]
    assert leftovers == []


@pytest.mark.parametrize("layout", ["mode 000 directories", "read-only files", "deep tree"])
def test_host_side_cleanup_removes_what_the_command_left_whatever_its_modes(
    tmp_path: Path, layout: str
) -> None:
    """The host scratch directories (seatbelt's private /tmp) are removed
    even when the command locked them, as a user as well as as root."""
    top = tmp_path / "scratch"
    node = top
    for i in range(60 if layout == "deep tree" else 3):
        node = node / f"d{i}"
    node.mkdir(parents=True)
    (node / "blob").write_bytes(b"x" * 4096)
    outside = tmp_path / "keep"
    outside.mkdir()
    (top / "link").symlink_to(outside)
    if layout == "mode 000 directories":
        for d in sorted(top.rglob("d*"), key=lambda p: -len(p.parts)):
            if d.is_dir():
                d.chmod(0)
    elif layout == "read-only files":
        (node / "blob").chmod(0o400)
        for d in (node, *node.parents):
            if d == top.parent:
                break
            d.chmod(0o500)
    assert remove_tree(str(top)) is None
    assert not top.exists()
    assert outside.is_dir()  # a link is removed, never followed


# -- processes ----------------------------------------------------------------------------------


def test_a_fork_bomb_is_dead_within_a_second_of_the_process_cap(
    workspace: Path, token: str
) -> None:
    """bash retries a refused fork, so its bomb keeps pressing on the cap
    (dash's gives up once the kernel refuses forks, and dies out by itself:
    contained, with no watchdog needed)."""
    script = (f"echo ran > control.txt; date +%s.%N > started; "
              f"bomb() {{ bomb | bomb & }}; bomb; sleep 60 # {token}")
    proc = sg(workspace, "bash", "-c", script, options=("--max-processes", "64", "--timeout", "60"))
    ended = time.time()
    consume_control(workspace, proc)
    started = float((workspace / "started").read_text())
    text = output(proc)
    assert "more than 64 processes" in text, text[-500:]
    assert ended - started < 2.0, f"killed {ended - started:.1f}s after the bomb started"
    assert processes_mentioning(token) == []


def test_a_build_with_many_short_processes_below_the_cap_is_not_stopped(workspace: Path) -> None:
    proc = sh(workspace, "for i in $(seq 40); do (sleep 0.2 &) ; done; wait; "
                         "for i in $(seq 200); do /bin/true; done; echo done",
              options=("--max-processes", "64"))
    assert proc.returncode == 0, output(proc)
    assert b"done" in proc.stdout


# -- output -------------------------------------------------------------------------------------


def test_a_tar_stream_through_shellgate_is_whole(workspace: Path, tmp_path: Path) -> None:
    """The CLI streams every byte; the head-and-tail cap is the library's
    (a tool result), never the CLI's."""
    for i in range(6):
        (workspace / f"f{i}.bin").write_bytes(os.urandom(512 * 1024))
    archive = tmp_path / "x.tar"
    with archive.open("wb") as handle:
        proc = subprocess.run(
            [SHELLGATE, "run", "--cwd", str(workspace), "--", "tar", "c", "."],
            stdout=handle, stderr=subprocess.PIPE, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    with tarfile.open(archive) as tar:
        names = sorted(m.name.removeprefix("./") for m in tar.getmembers() if m.isfile())
        assert [n for n in names if n.endswith(".bin")] == [f"f{i}.bin" for i in range(6)]
        member = tar.extractfile("./f5.bin")
        assert member is not None
        assert member.read() == (workspace / "f5.bin").read_bytes()


# -- the kernel's host-wide counters ---------------------------------------------------------

_COUNTERS = """
import ctypes, os, resource, sys
libc = ctypes.CDLL(None, use_errno=True)
ctx = ctypes.c_ulong(0)
ok = libc.syscall(206, 1, ctypes.byref(ctx)) == 0  # io_setup(1, &ctx) on x86_64
print("io_setup", "ok" if ok else ctypes.get_errno())
made = 0
for _ in range(int(sys.argv[1])):  # a few past the share, never the user's whole limit
    if libc.inotify_init1(0) < 0:
        break
    made += 1
print("inotify_instances", made)
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def _counters(text: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in text.strip().splitlines())


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="io_setup's number is x86_64's")
def test_the_kernels_host_wide_counters_keep_a_share_for_the_host(workspace: Path) -> None:
    """From a review: one io_setup(65536) in the sandbox took the host's
    whole AIO budget; 1,024 processes x 4,096 descriptors exceed
    fs.file-max; 126 inotify_init calls used up the user's instances. A
    probe, never the exhaustion: io_setup(1) works on the host (the
    control) and is refused inside; inside, inotify instances stop at the
    sandbox's share of the user's limit (a few past it are tried; the
    control makes as many on the host) — the limit is set in the user
    namespace bubblewrap makes, which may hold another below it, so what
    counts is how many can be made, not the value read there; the
    descriptors per process times the process cap stay within half of
    file-max."""
    user_limit = int(Path("/proc/sys/user/max_inotify_instances").read_text())
    share = min(user_limit, max(16, user_limit // 4))
    tries = str(share + 4)
    host = subprocess.run([PY, "-c", _COUNTERS, tries], capture_output=True, text=True,
                          check=True, cwd=workspace)
    outside = _counters(host.stdout)
    require(outside["io_setup"] == "ok", "io_setup(1) works on the host")
    require(int(outside["inotify_instances"]) == share + 4,
            f"the host makes {tries} inotify instances", None)
    proc = sg(workspace, PY, "-c", _COUNTERS + 'open("control.txt", "w").write("ran")\n', tries)
    consume_control(workspace, proc)
    inside = _counters(proc.stdout.decode())
    assert inside["io_setup"] == "1", output(proc)  # EPERM
    assert int(inside["inotify_instances"]) <= share, (inside, share)
    file_max = int(Path("/proc/sys/fs/file-max").read_text())
    assert int(inside["nofile"]) * 1024 <= max(file_max // 2, 64 * 1024), inside
