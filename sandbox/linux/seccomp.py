"""The seccomp BPF filter, built with libseccomp (``pyseccomp``, or the
distribution's ``seccomp`` module when present).

Default action: allow. Every rule below returns EPERM (never kills: a tool
that probes a syscall should get an error it can report). The filter is for
the native architecture only; libseccomp's bad-architecture action kills a
process that switches ABI (``int 0x80`` 32-bit syscalls on x86_64), so the
32-bit table is not a way around it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import platform
from dataclasses import dataclass
from typing import Any

from ..errors import SandboxUnavailable

# Each entry: the syscall and the attack it stops.
BLOCKED_SYSCALLS: dict[str, str] = {
    "ptrace": "reading/writing other processes' memory (the proxy, the launcher)",
    "process_vm_readv": "reading another process's memory",
    "process_vm_writev": "writing another process's memory",
    "io_uring_setup": "io_uring bypasses seccomp for the operations it submits",
    "io_uring_enter": "io_uring bypasses seccomp for the operations it submits",
    "io_uring_register": "io_uring bypasses seccomp for the operations it submits",
    "kexec_load": "loading a new kernel",
    "kexec_file_load": "loading a new kernel",
    "bpf": "loading eBPF programs (kernel attack surface)",
    "perf_event_open": "perf events (side channels, kernel attack surface)",
    "keyctl": "the kernel keyring holds other sessions' secrets",
    "add_key": "the kernel keyring",
    "request_key": "the kernel keyring",
    "mount": "remounting the read-only root read-write",
    "umount2": "unmounting the masks over sensitive paths",
    "pivot_root": "changing the root filesystem",
    "chroot": "changing the root filesystem",
    "unshare": "new namespaces (`unshare -r` regains capabilities)",
    "setns": "joining other namespaces",
    "userfaultfd": "a classic kernel-exploit primitive",
    "open_by_handle_at": "opening files by handle across mounts (container escape)",
    "name_to_handle_at": "file handles across mounts",
    "init_module": "loading kernel modules",
    "finit_module": "loading kernel modules",
    "delete_module": "unloading kernel modules",
    "fsopen": "the new mount API",
    "fsconfig": "the new mount API",
    "fsmount": "the new mount API",
    "fspick": "the new mount API",
    "move_mount": "the new mount API",
    "open_tree": "the new mount API",
    "mount_setattr": "the new mount API",
    "swapon": "system configuration",
    "swapoff": "system configuration",
    "reboot": "system configuration",
    "acct": "system configuration",
    "quotactl": "system configuration",
    "syslog": "reading the kernel log",
    "vhangup": "terminal hijacking",
    "iopl": "raw I/O port access",
    "ioperm": "raw I/O port access",
}

# clone3 passes its flags in a struct seccomp cannot read; ENOSYS makes libc
# fall back to clone(2), whose flags the rule below can check.
_CLONE_NS_FLAGS = 0x10000000 | 0x20000000 | 0x40000000 | 0x04000000 | 0x08000000 | 0x00020000
_CLONE_NS_FLAGS |= 0x02000000  # CLONE_NEWCGROUP
# TIOCSTI / TIOCLINUX push keystrokes into the controlling terminal's input.
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
# personality(2): only querying (0xffffffff) and PER_LINUX (0) are allowed;
# other personalities (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE) weaken ASLR/NX.
_PERSONALITY_QUERY = 0xFFFFFFFF

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
# Families nobody in a coding sandbox needs; vsock reaches the hypervisor.
_ALWAYS_BLOCKED_FAMILIES = {17: "AF_PACKET", 40: "AF_VSOCK", 31: "AF_BLUETOOTH", 15: "AF_KEY"}


@dataclass(frozen=True, slots=True)
class SeccompSpec:
    """Which socket families the sandboxed process may create."""

    allow_unix: bool = False
    allow_inet: bool = False


def _module() -> Any:
    try:
        import seccomp  # noqa: PLC0415

        return seccomp
    except ImportError:
        pass
    try:
        import pyseccomp  # noqa: PLC0415

        return pyseccomp
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so.2 missing
        raise SandboxUnavailable(f"libseccomp is not usable: {exc}") from None


def seccomp_available() -> tuple[bool, str]:
    try:
        mod = _module()
        mod.SyscallFilter(mod.ALLOW)
    except SandboxUnavailable as exc:
        return False, str(exc)
    except Exception as exc:
        return False, f"libseccomp is not usable: {exc}"
    return True, f"libseccomp via {mod.__name__}"


def native_arch() -> str:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return "x86_64"
    if machine in ("aarch64", "arm64"):
        return "aarch64"
    raise SandboxUnavailable(f"seccomp filter not built for architecture {machine!r}")


def build_filter(spec: SeccompSpec) -> Any:
    """A libseccomp filter object for ``spec`` (not yet exported)."""
    sc = _module()
    native_arch()
    eperm = sc.ERRNO(errno.EPERM)
    f = sc.SyscallFilter(sc.ALLOW)
    with contextlib.suppress(Exception):  # older bindings: NNP is the default anyway
        f.set_attr(sc.Attr.CTL_NNP, 1)
    for name in BLOCKED_SYSCALLS:
        _add(sc, f, eperm, name)
    _add(sc, f, sc.ERRNO(errno.ENOSYS), "clone3")
    _add(sc, f, eperm, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_NS_FLAGS, 0), negate=True)
    _add(sc, f, eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, _TIOCSTI))
    _add(sc, f, eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, _TIOCLINUX))
    _add(sc, f, eperm, "personality", sc.Arg(0, sc.GT, 0), sc.Arg(0, sc.NE, _PERSONALITY_QUERY))
    families = dict(_ALWAYS_BLOCKED_FAMILIES)
    if not spec.allow_unix:
        families[AF_UNIX] = "AF_UNIX"
    if not spec.allow_inet:
        families[AF_INET] = "AF_INET"
        families[AF_INET6] = "AF_INET6"
    for family in families:
        _add(sc, f, eperm, "socket", sc.Arg(0, sc.EQ, family))
    return f


def _add(sc: Any, f: Any, action: int, name: str, *args: Any, negate: bool = False) -> None:
    """Add one rule; syscalls unknown to this kernel/libseccomp are skipped
    (they cannot be called either)."""
    try:
        if negate:
            # clone with any namespace flag set: a masked compare per flag.
            for bit in range(64):
                flag = 1 << bit
                if _CLONE_NS_FLAGS & flag:
                    f.add_rule(action, name, sc.Arg(0, sc.MASKED_EQ, flag, flag))
            return
        f.add_rule(action, name, *args)
    except (ValueError, RuntimeError, OSError):
        return


@functools.lru_cache(maxsize=8)
def export_bpf(spec: SeccompSpec) -> bytes:
    """The compiled BPF program for ``spec`` (cached: it depends on nothing else)."""
    f = build_filter(spec)
    fd = os.memfd_create("shellgate-seccomp", 0)
    try:
        with os.fdopen(fd, "w+b", closefd=False) as handle:
            f.export_bpf(handle)
            handle.flush()
            os.lseek(fd, 0, os.SEEK_SET)
            return os.read(fd, 1 << 20)
    finally:
        os.close(fd)
