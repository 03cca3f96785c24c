"""Escape tests: seccomp, no_new_privs, mounts and namespaces, kernel
interfaces in /proc and /sys, set-id files.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import stat
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest
from escape_kit import (
    PY,
    RUN_TIMEOUT,
    consume_control,
    output,
    require,
    sh,
    unique_seconds,
)

pytestmark = [pytest.mark.sandbox]


# -- 10. seccomp and no_new_privs -------------------------------------------------


def _status_fields(text: str) -> dict[str, str]:
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


@pytest.mark.parametrize("profile", ["workspace-write", "read-only", "networked"])
def test_the_command_runs_under_seccomp_with_no_new_privs(workspace: Path, profile: str) -> None:
    """Attack surface check: without a seccomp filter every blocked syscall
    (mount, unshare, ptrace …) is open, and without no_new_privs a setuid
    binary regains privileges. Checked inside AND from the host on the
    running process, which must also live in its own namespaces."""
    seconds = unique_seconds(20)
    result: dict[str, subprocess.CompletedProcess[bytes]] = {}
    script = f"grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; exec sleep {seconds}"
    thread = threading.Thread(target=lambda: result.setdefault(
        "proc", sh(workspace, script, options=("--profile", profile))))
    thread.start()
    try:
        pid = None
        deadline = time.monotonic() + 60  # the start, on a loaded machine
        while pid is None and time.monotonic() < deadline and thread.is_alive():
            for proc in psutil.process_iter(["pid", "cmdline"]):
                if proc.info["cmdline"] == ["sleep", seconds]:
                    pid = proc.info["pid"]
            time.sleep(0.02)
        require(pid is not None, "the sandboxed sleep was found on the host", result.get("proc"))
        assert pid is not None
        host_view = _status_fields(Path(f"/proc/{pid}/status").read_text())
        namespaces = {ns: (os.readlink(f"/proc/{pid}/ns/{ns}"), os.readlink(f"/proc/self/ns/{ns}"))
                      for ns in ("user", "mnt", "pid", "net", "ipc", "uts")}
    finally:
        for proc in psutil.process_iter(["pid", "cmdline"]):
            if proc.info["cmdline"] == ["sleep", seconds]:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
        thread.join(RUN_TIMEOUT)
    assert host_view["Seccomp"] == "2"
    assert host_view["NoNewPrivs"] == "1"
    assert host_view["CapEff"] == "0000000000000000"
    assert {ns for ns, (theirs, ours) in namespaces.items() if theirs == ours} == set()
    inside = _status_fields(result["proc"].stdout.decode())
    assert inside["Seccomp"] == "2"
    assert inside["NoNewPrivs"] == "1"


# -- 11. mount and namespaces ------------------------------------------------------

_CLONE_NR = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
_UNSHARE_PY = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def unshare(flags):\n"
    "    fn = getattr(os, 'unshare', None)\n"
    "    if fn is None:\n"
    "        return libc.unshare(flags) == 0\n"
    "    try:\n"
    "        fn(flags)\n"
    "    except OSError:\n"
    "        return False\n"
    "    return True\n"
)
PRIVILEGE_ATTACKS = {
    "mount a tmpfs": "mkdir -p mnt && mount -t tmpfs none mnt && touch escaped",
    "mount a tmpfs on /mnt": "mount -t tmpfs none /mnt && touch escaped",
    "bind-mount /etc": "mkdir -p mnt && mount --bind /etc mnt && touch escaped",
    "remount / read-write": "mount -o remount,rw / && touch escaped",
    "unmount /proc": "umount -l /proc && touch escaped",
    "unshare -r (nested user namespace)": "unshare -r true && touch escaped",
    "unshare -Urm then mount": "unshare -Urm sh -c 'mount -t tmpfs none /mnt' && touch escaped",
    "python unshare(CLONE_NEWUSER)":
        f"{PY} -c \"{_UNSHARE_PY}\nif unshare(0x10000000): open('escaped', 'w')\"",
    "python unshare(CLONE_NEWNS)":
        f"{PY} -c \"{_UNSHARE_PY}\nif unshare(0x00020000): open('escaped', 'w')\"",
    "raw clone(CLONE_NEWUSER)": (
        f"{PY} -c \"import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"pid = libc.syscall({_CLONE_NR}, 0x10000000 | 17, 0, 0, 0, 0)\n"
        "if pid == 0:\n    open('escaped', 'w').close()\n    os._exit(0)\n"
        "if pid > 0:\n    os.waitpid(pid, 0)\""
    ),
    "chroot": "chroot / true && touch escaped",
}


@pytest.mark.parametrize("attack", list(PRIVILEGE_ATTACKS))
def test_a_command_cannot_mount_or_create_namespaces(workspace: Path, attack: str) -> None:
    """Attack: regain capabilities in a nested user namespace, or remount
    and unmount the masks. Each attack touches `escaped` in the workspace
    only if its privileged step succeeded."""
    if attack.startswith("raw clone") and _CLONE_NR is None:
        pytest.skip(f"no clone syscall number for {platform.machine()}")
    proc = sh(workspace, f"{PRIVILEGE_ATTACKS[attack]}; echo ran > control.txt")
    consume_control(workspace, proc)
    assert not (workspace / "escaped").exists(), output(proc)


# -- 18. kernel interfaces in /proc and /sys ----------------------------------------

#: Walks /proc (but the processes' own directories) and /sys inside the
#: sandbox and opens every file whose mode has a write bit with O_WRONLY —
#: never writes a byte, so a regression cannot rewrite the CI host's
#: sysctls. Prints the paths that opened, and a count of those tried.
_WALK = r"""
import errno, json, os, stat, sys, time
opened, tried, deadline = [], 0, time.monotonic() + 40
def walk(top, skip):
    global tried
    stack = [top]
    while stack and time.monotonic() < deadline:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if d == top and e.name in skip or (d == "/proc" and e.name.isdigit()):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(e.path)
            elif stat.S_ISREG(st.st_mode) and st.st_mode & 0o222:
                tried += 1
                try:
                    fd = os.open(e.path, os.O_WRONLY | os.O_NONBLOCK)
                except OSError as exc:
                    if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                        opened.append(f"{e.path}: unexpected {exc}")
                    continue
                os.close(fd)
                opened.append(e.path)
walk("/proc", {"self", "thread-self"})
walk("/sys", set())
fd = os.open("control-write.txt", os.O_WRONLY | os.O_CREAT)
os.close(fd)
print(json.dumps({"opened": opened, "tried": tried, "complete": time.monotonic() < deadline}))
"""


def test_no_kernel_interface_in_proc_or_sys_opens_for_writing(workspace: Path) -> None:
    """Attack (root): `echo '|/tmp/x' > /proc/sys/kernel/core_pattern`, then
    crash a process — the kernel runs /tmp/x as host root, outside every
    namespace. As a user the same walk proves nothing is writable either.
    Every writable-looking file under /proc and /sys must refuse O_WRONLY."""
    proc = sh(workspace, f"{PY} -c {shlex.quote(_WALK)} > walk.json; echo ran > control.txt",
              timeout=90)
    consume_control(workspace, proc)
    require((workspace / "control-write.txt").exists(), "an O_WRONLY open works at all", proc)
    report = json.loads((workspace / "walk.json").read_text())
    require(report["complete"], "the walk finished in its time budget", proc)
    require(report["tried"] > 100, f"the walk met writable-looking files ({report['tried']})",
            proc)
    assert report["opened"] == []


@pytest.mark.parametrize(
    "path",
    ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger",
     "/proc/sys/fs/binfmt_misc/register", "/proc/sys/kernel/hostname"],
)
def test_the_classic_host_root_sysctls_refuse_a_writer(workspace: Path, path: str) -> None:
    """The named members of the family above, each with its own verdict
    (a value is never written: the open alone is the test)."""
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist on this kernel")
    code = (f"import os\ntry:\n    os.close(os.open({path!r}, os.O_WRONLY))\n    print('OPENED')\n"
            "except OSError as exc:\n    print('refused', exc.errno)")
    proc = sh(workspace, f"{PY} -c {shlex.quote(code)} > control.txt")
    verdict = consume_control(workspace, proc).strip()
    assert verdict.startswith("refused"), verdict


def test_the_host_cgroup_tree_is_not_visible(workspace: Path) -> None:
    """Attack: list every host process (`cat /sys/fs/cgroup/*/cgroup.procs`)
    — the test's own PID among them — from a sandbox with its own PID
    namespace."""
    me = str(os.getpid())
    script = """
        ls /sys/devices > /dev/null && echo sys-visible > control.txt
        find /sys/fs/cgroup -name cgroup.procs -exec cat {} + 2>/dev/null > procs.txt
        ls -A /sys/fs/cgroup > listing.txt
    """
    proc = sh(workspace, script)
    require(consume_control(workspace, proc).strip() == "sys-visible", "/sys is mounted", proc)
    assert me not in (workspace / "procs.txt").read_text().split()
    assert (workspace / "listing.txt").read_text() == ""


# -- 19. set-user-ID and set-group-ID files -----------------------------------------

SETID_ATTACKS = {
    "chmod u+s": "cp /bin/sh ./sh-u && chmod u+s ./sh-u",
    "chmod g+s": "cp /bin/sh ./sh-g && chmod g+s ./sh-g",
    "chmod 4755": "cp /bin/sh ./sh-4755 && chmod 4755 ./sh-4755",
    "install -m 6755": "install -m 6755 /bin/sh ./sh-install",
    "cp -p of a set-id binary": "for f in /usr/bin/passwd /usr/bin/su /bin/mount; do "
                                "test -u $f && cp -p $f ./copied && break; done",
    "open(O_CREAT, 04755)":
        PY + " -c 'import os; os.close(os.open(\"py-creat\", os.O_CREAT | os.O_WRONLY, 0o4755))'",
    "mknod a set-id regular file":
        PY + " -c 'import os, stat; os.mknod(\"py-mknod\", stat.S_IFREG | 0o4755)'",
    "os.chmod": PY + " -c 'import os; open(\"py-chmod\", \"w\").close(); "
                     "os.chmod(\"py-chmod\", 0o6755)'",
    "tar extracts a set-id file":
        "mkdir -p t && cp /bin/sh t/sh && tar --mode=u+s -cf t.tar t/sh && rm -rf t && "
        "tar -xpf t.tar",
}


@pytest.mark.parametrize("attack", list(SETID_ATTACKS))
def test_a_command_cannot_leave_a_set_id_file(workspace: Path, attack: str) -> None:
    """Attack: as root the sandbox's uid 0 is the host's root, so a
    setuid-root copy of a shell left in the workspace is a root shell for
    every local user who can reach it. No file may leave the run with the
    set-user-ID or set-group-ID bit."""
    proc = sh(workspace, f"{SETID_ATTACKS[attack]}; chmod 755 README.md && echo ran > control.txt")
    consume_control(workspace, proc)
    require(stat.S_IMODE((workspace / "README.md").stat().st_mode) == 0o755,
            "a plain chmod works", proc)
    setid = [str(p) for p in workspace.rglob("*")
             if not p.is_symlink() and p.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID)]
    assert setid == [], output(proc)


# -- 20. personality ----------------------------------------------------------------

_PERSONALITY = (
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "query = libc.personality(0xffffffff)\n"
    "libc.personality(0x0040000)\n"  # ADDR_NO_RANDOMIZE
    "libc.personality(0x0400000)\n"  # READ_IMPLIES_EXEC
    "print(query, open('/proc/self/personality').read().strip())"
)


def test_a_command_cannot_switch_off_aslr_or_nx(workspace: Path) -> None:
    """Attack: personality(ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC) makes the
    next exec'd program predictable and its data executable (`setarch -R`).
    The query form still works."""
    proc = sh(workspace, f"{PY} -c {shlex.quote(_PERSONALITY)} > control.txt")
    query, now = consume_control(workspace, proc).split()
    require(query == "0", "personality can be queried", proc)
    assert int(now, 16) == 0


def test_as_root_sys_shows_only_the_cpu_topology(workspace: Path) -> None:
    """Attack (from a review, as root): `cat /sys/class/zram-control/hot_add`
    creates a block device on the host; root reads every root-only sysfs
    attribute, and no list of those with side effects is complete. As root
    /sys is an allowlist: the CPU topology. As a user it is the host's /sys,
    read-only, without the cgroup tree."""
    before = sorted(os.listdir("/dev"))
    script = ("cat /sys/class/zram-control/hot_add 2>/dev/null; ls /sys > control.txt; "
              "ls /sys/devices/system/cpu | grep -c '^cpu[0-9]' >> control.txt")
    proc = sh(workspace, script)
    seen = consume_control(workspace, proc).split()
    require(seen[-1] != "0", "the CPU topology is visible inside", proc)
    if os.geteuid() == 0:
        assert seen[:-1] == ["devices"]
    else:
        assert "devices" in seen and "class" in seen
    assert sorted(os.listdir("/dev")) == before
