"""``shellgate doctor``: can the sandbox work here, and if not, why not.

Each probe does the real thing where it can (start a real bwrap sandbox,
build a real seccomp filter) and says what to install or change when it
fails. The sandbox can work only when every required probe passes.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from values import valueclass

from .cgroups import RunCgroup, mechanism
from .linux.seccomp import SeccompSpec, export_bpf, seccomp_available
from .programs import system_program


@valueclass
class Probe:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def in_container() -> str | None:
    if os.path.exists("/.dockerenv"):
        return "docker"
    if os.path.exists("/run/.containerenv"):
        return "podman"
    cgroup = _read("/proc/1/cgroup") or ""
    for name in ("docker", "kubepods", "containerd", "lxc"):
        if name in cgroup:
            return name
    return None


def probe_bwrap() -> Probe:
    # the one a run starts (programs.system_program): never one on PATH in a
    # place a sandboxed command could have written
    path = system_program("bwrap")
    if path is None:
        return Probe(
            "bubblewrap",
            False,
            "bwrap not found on PATH in a system directory (/usr, /bin, /sbin)",
            "install it: apt-get install bubblewrap (dnf install bubblewrap)",
        )
    try:
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe("bubblewrap", False, f"{path}: {exc}", "reinstall bubblewrap")
    return Probe("bubblewrap", True, f"{path} ({version})")


def probe_userns() -> Probe:
    """Start a real sandbox with the namespaces shellgate uses."""
    path = system_program("bwrap")
    if path is None:
        return Probe("user namespaces", False, "skipped: no bwrap", "install bubblewrap first")
    argv = [
        path,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--",
        "/bin/true",
    ]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe("user namespaces", False, str(exc), "")
    if proc.returncode == 0:
        return Probe(
            "user namespaces",
            True,
            "bwrap can create user, pid, net, ipc, uts namespaces and mount /proc",
        )
    err = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    return Probe("user namespaces", False, err, _userns_fix())


def _userns_fix() -> str:
    hints = []
    if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        hints.append(
            "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): add an "
            "AppArmor profile for bwrap granting 'userns', or set "
            "kernel.apparmor_restrict_unprivileged_userns=0"
        )
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        hints.append("sysctl kernel.unprivileged_userns_clone=1")
    if _read("/proc/sys/user/max_user_namespaces") == "0":
        hints.append("sysctl user.max_user_namespaces=15000")
    container = in_container()
    if container:
        hints.append(
            f"inside a {container} container: run it with --privileged or a seccomp/"
            "AppArmor profile that allows unshare(CLONE_NEWUSER) and mount"
        )
    return "; ".join(hints) or "enable unprivileged user namespaces"


def probe_seccomp() -> Probe:
    ok, detail = seccomp_available()
    if not ok:
        return Probe(
            "seccomp", False, detail, "apt-get install libseccomp2, and pip install pyseccomp"
        )
    status = _read("/proc/self/status") or ""
    if "Seccomp:" not in status:
        return Probe(
            "seccomp",
            False,
            "kernel without CONFIG_SECCOMP_FILTER",
            "use a kernel with seccomp filtering",
        )
    try:
        size = len(export_bpf(SeccompSpec()))
        checked = verify_filters()
    except Exception as exc:  # any failure is the finding
        return Probe("seccomp", False, f"cannot build the filter as designed: {exc}",
                     "upgrade libseccomp (2.5 or newer) and pyseccomp")
    return Probe(
        "seccomp",
        True,
        f"{detail}; filter compiles to {size} bytes ({platform.machine()}); all {checked} "
        "rules verified in the compiled program",
    )


def verify_filters() -> int:
    """Run every compiled filter on each of its rules (sandbox.linux.bpf):
    the number of rules checked, or ValueError naming one that is missing."""
    from .linux.bpf import Verdict, evaluate  # noqa: PLC0415
    from .linux.seccomp import filter_rules, native_arch, syscall_number  # noqa: PLC0415

    arch, checked = native_arch(), 0
    for spec in (SeccompSpec(), SeccompSpec(allow_inet=True), SeccompSpec(True, True)):
        program = export_bpf(spec)
        for rule in filter_rules(spec):
            number = syscall_number(rule.syscall)
            if number is None:
                continue
            args = [0] * 6
            for cmp in rule.args:
                args[cmp.index] = cmp.value
            verdict = evaluate(program, number, tuple(args), arch=arch)
            if verdict != Verdict("errno", rule.errno):
                raise ValueError(f"rule {rule.describe()} is not in the program ({verdict})")
            checked += 1
    return checked


def probe_privilege() -> Probe:
    """Running as root works, but is weaker: say so, and why."""
    if os.geteuid() != 0:
        return Probe("privilege", True, f"running as uid {os.geteuid()} (not root)",
                     required=False)
    return Probe(
        "privilege",
        False,
        "running as root: the sandbox's uid 0 is the host's root, so every root-owned file "
        "that is not hidden is readable inside, and what /proc and /sys let root write "
        "depends on shellgate's read-only binds",
        "run shellgate as an ordinary user",
        required=False,
    )


def probe_limits() -> Probe:
    """Which memory and process limits a run gets here, proven by making
    (and removing) a real group."""
    found = mechanism()
    if found.memory == "RLIMIT_DATA":
        return Probe(
            "limits",
            False,
            f"memory: RLIMIT_DATA per process, not the whole tree ({found.why}); tmpfs "
            "pages are bounded by the tmpfs size caps, shared memory (memfd, System V) not "
            f"at all; processes: {found.processes}",
            "run shellgate in a cgroup that delegates the memory controller (cgroup v2: "
            "`systemd-run --user --scope -p Delegate=yes shellgate ...`), or as root",
            required=False,
        )
    try:
        group = RunCgroup.create(64 << 20, 64)
    except OSError as exc:
        return Probe("limits", False, f"memory: {found.memory} should work ({found.why}) but "
                     f"a group cannot be made: {exc}; runs fall back to RLIMIT_DATA",
                     "check the cgroup's permissions", required=False)
    problem = group.close() if group is not None else None
    return Probe(
        "limits",
        problem is None,
        f"memory: {found.memory}, {found.why} (the whole process tree, tmpfs pages "
        f"included); processes: {found.processes}" + (f"; {problem}" if problem else ""),
        required=False,
    )


def probe_ripgrep() -> Probe:
    path = shutil.which("rg")
    return Probe(
        "ripgrep",
        path is not None,
        path or "rg not found (the Grep tool needs it)",
        "" if path else "apt-get install ripgrep",
        required=False,
    )


def probe_seatbelt() -> Probe:
    path = "/usr/bin/sandbox-exec"
    ok = os.path.exists(path)
    return Probe(
        "sandbox-exec",
        ok,
        path if ok else "missing",
        "" if ok else "sandbox-exec ships with macOS; it cannot be installed separately",
    )


def run_probes() -> list[Probe]:
    if sys.platform == "darwin":
        return [probe_seatbelt(), probe_ripgrep()]
    if not sys.platform.startswith("linux"):
        return [
            Probe(
                "platform",
                False,
                f"{sys.platform} has no supported sandbox backend",
                "use Linux (bubblewrap) or macOS (sandbox-exec)",
            )
        ]
    return [probe_bwrap(), probe_userns(), probe_seccomp(), probe_limits(), probe_ripgrep(),
            probe_privilege()]


def sandbox_works(probes: list[Probe] | None = None) -> bool:
    return all(p.ok for p in (probes or run_probes()) if p.required)
