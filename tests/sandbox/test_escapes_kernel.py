"""Escape tests: seccomp, no_new_privs, mounts and namespaces, kernel
interfaces in /proc and /sys, set-id files.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import contextlib
import os
import platform
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
        deadline = time.monotonic() + 15
        while pid is None and time.monotonic() < deadline and thread.is_alive():
            for proc in psutil.process_iter(["pid", "cmdline"]):
                if proc.info["cmdline"] == ["sleep", seconds]:
                    pid = proc.info["pid"]
            time.sleep(0.02)
        require(pid is not None, "the sandboxed sleep was found on the host")
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
