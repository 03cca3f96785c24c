"""The seccomp BPF filter, built with libseccomp (``pyseccomp``, or the
distribution's ``seccomp`` module when present).

Default action: allow. Every rule below returns an errno (never kills: a
tool that probes a syscall should get an error it can report). The filter
is for the native architecture only; libseccomp's bad-architecture action
kills a process that switches ABI (``int 0x80`` 32-bit syscalls on x86_64,
x32 syscall numbers), so another syscall table is not a way around it.

The rules are data (:func:`filter_rules`): each one names the syscall, its
argument comparisons and the attack it stops. A rule that libseccomp refuses
is an error that stops the sandbox from starting (exit 125, the rule named):
a filter is used exactly as designed or not at all. A syscall this kernel's
table does not have is skipped: it cannot be called either.
:mod:`sandbox.linux.bpf` runs the compiled program, so tests and ``doctor``
check that every rule is really in it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat

from values import valueclass

from ..errors import SandboxUnavailable

# Each entry: the syscall and the attack it stops.
BLOCKED_SYSCALLS: dict[str, str] = {
    "ptrace": "reading/writing other processes' memory",
    "process_vm_readv": "reading another process's memory",
    "process_vm_writev": "writing another process's memory",
    "io_uring_setup": "io_uring bypasses seccomp for the operations it submits",
    "io_uring_enter": "io_uring bypasses seccomp for the operations it submits",
    "io_uring_register": "io_uring bypasses seccomp for the operations it submits",
    # from a review: one io_setup(65536) took the host's whole AIO budget
    # (fs.aio-max-nr), and root's own io_setup then failed
    "io_setup": "asynchronous I/O contexts draw on a budget the whole machine shares",
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
    "open_tree_attr": "the new mount API",
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
# fall back to clone(2), whose flags the rules below check. openat2 passes
# its mode in a struct too (see the set-id rules); glibc never uses it for
# open(), and callers that do fall back on ENOSYS.
_ENOSYS_SYSCALLS: dict[str, str] = {
    "clone3": "namespace flags hidden in a struct (libc falls back to clone)",
    "openat2": "a creation mode hidden in a struct (callers fall back to openat)",
}

# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NS_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)
# TIOCSTI / TIOCLINUX push keystrokes into the controlling terminal's input.
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
# personality(2): only querying (0xffffffff) and PER_LINUX (0) are allowed;
# other personalities (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE) weaken ASLR/NX.
PERSONALITY_QUERY = 0xFFFFFFFF
# Set-user-ID / set-group-ID mode bits, and the open flags that create.
S_ISUID, S_ISGID = 0o4000, 0o2000
_S_IFMT = 0o170000  # the file-type bits of a mode (stat.S_IFMT is a function)
O_CREAT, O_TMPFILE_BIT = 0o100, 0o20000000

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCK_DGRAM, SOCK_RAW, SOCK_TYPE_MASK = 2, 3, 0xF
# Syscalls numbered alike on every architecture since Linux 5.1 (424 and
# up): used when the installed libseccomp is older than the syscall, so a
# rule for a syscall the kernel has can never silently vanish.
UNIFIED_NUMBERS: dict[str, int] = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "clone3": 435, "openat2": 437, "mount_setattr": 442,
    "fchmodat2": 452, "open_tree_attr": 467,
}
# Socket families are an allow-list: unix (when the policy allows it) and
# IP (when networked); every other family the kernel knows is refused. The
# kernel refuses a family at or past AF_MAX itself (46 in Linux 6.x), so
# 0..63 covers every one. Attack (from a red-team review): a deny-list left
# AF_NETLINK open, and netlink receive queues are charged to no cgroup — 100
# pairs of netlink sockets held 784 MiB of host kernel memory under
# `--memory 64M` (one process could hold ~32 GB); vsock reaches the
# hypervisor, packet sockets the link layer.
_FAMILY_LIMIT = 64
_FAMILY_NAMES = {0: "AF_UNSPEC", 4: "AF_IPX", 5: "AF_APPLETALK", 9: "AF_X25", 15: "AF_KEY",
                 16: "AF_NETLINK", 17: "AF_PACKET", 31: "AF_BLUETOOTH", 38: "AF_ALG",
                 40: "AF_VSOCK", 44: "AF_XDP", 45: "AF_MCTP"}

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time (a tenth of a cold start)
    from typing import Any, Literal

    Op = Literal["eq", "masked_eq"]


@valueclass
class ArgCmp:
    """One comparison on a syscall argument: ``arg == value`` or
    ``arg & mask == value``.

    seccomp sees each argument as a 64-bit register, while the kernel reads
    an ``int`` argument from its low 32 bits only. Attack (from a review):
    ``syscall(SYS_socket, (1 << 32) | AF_UNIX, SOCK_STREAM, 0)`` passed an
    ``arg0 == AF_UNIX`` rule and made a unix socket. So every comparison of
    an ``int`` argument is a masked one on the low 32 bits (:func:`_eq32`).
    """

    index: int
    op: Op
    value: int
    mask: int = 0


@valueclass
class Rule:
    """Return ``errno`` for ``syscall`` when every comparison holds (the
    comparisons name distinct arguments: libseccomp's limit)."""

    syscall: str
    errno: int
    why: str
    args: tuple[ArgCmp, ...] = ()

    def describe(self) -> str:
        conds = " and ".join(
            f"arg{a.index} == {a.value:#x}"
            if a.op == "eq"
            else f"arg{a.index} & {a.mask:#x} == {a.value:#x}"
            for a in self.args
        )
        return f"{self.syscall}({conds})" if conds else self.syscall


@valueclass
class SeccompSpec:
    """Which socket families the sandboxed process may create."""

    allow_unix: bool = False
    allow_inet: bool = False


def _masked(index: int, mask: int, value: int) -> ArgCmp:
    return ArgCmp(index, "masked_eq", value, mask)


def _eq32(index: int, value: int) -> ArgCmp:
    """``arg == value`` for an ``int`` argument: its upper 32 bits ignored."""
    return _masked(index, 0xFFFFFFFF, value)


def _personality_rules() -> list[Rule]:
    """EPERM for every personality but 0 and 0xffffffff (the query).

    libseccomp refuses two comparisons on one argument in one rule, so
    "0 < x < 0xffffffff" cannot be one rule. It is a union instead: x is
    neither all zeros nor all ones exactly when, going round its 32 bits,
    some bit is set and the next one is clear; each such pair is one
    masked comparison. Reproducer of the old gap: `setarch -R true` (which
    sets ADDR_NO_RANDOMIZE) ran, because the two-comparison rule was
    silently dropped.
    """
    why = "personalities that weaken ASLR/NX (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE)"
    return [
        Rule("personality", errno.EPERM, why,
             (_masked(0, (1 << b) | (1 << ((b + 1) % 32)), 1 << b),))
        for b in range(32)
    ]


def _setid_rules() -> list[Rule]:
    """No set-user-ID or set-group-ID file can be made.

    Attack: as root the sandbox's uid 0 is the host's root, so
    `cp /bin/sh ./sh && chmod u+s ./sh` leaves a setuid-root shell in the
    workspace for any local user to run. Every way to give a file those
    bits is covered: chmod/fchmod/fchmodat/fchmodat2, and a mode passed
    when creating (open/openat/creat with O_CREAT or O_TMPFILE, mknod).
    """
    why = "creating set-user-ID/set-group-ID files (a setuid-root shell when run as root)"
    rules: list[Rule] = []
    for bit in (S_ISUID, S_ISGID):
        rules += [
            Rule("chmod", errno.EPERM, why, (_masked(1, bit, bit),)),
            Rule("fchmod", errno.EPERM, why, (_masked(1, bit, bit),)),
            Rule("fchmodat", errno.EPERM, why, (_masked(2, bit, bit),)),
            Rule("fchmodat2", errno.EPERM, why, (_masked(2, bit, bit),)),
            Rule("creat", errno.EPERM, why, (_masked(1, bit, bit),)),
            Rule("mknod", errno.EPERM, why, (_masked(1, bit, bit),)),
            Rule("mknodat", errno.EPERM, why, (_masked(2, bit, bit),)),
        ]
        for create in (O_CREAT, O_TMPFILE_BIT):
            rules += [
                Rule("open", errno.EPERM, why, (_masked(1, create, create), _masked(2, bit, bit))),
                Rule("openat", errno.EPERM, why,
                     (_masked(2, create, create), _masked(3, bit, bit))),
            ]
    return rules


def _special_file_rules() -> list[Rule]:
    """No FIFO and no device node can be made.

    Attack (from a review): `mkfifo .gitignore` (or `.gitattributes`,
    `.mailmap`, `.python-version`, `.tool-versions`, `.envrc`, an editor's
    per-directory config …) at any depth of the workspace. The host's tools
    open those names by themselves with a blocking open, and a FIFO with no
    writer holds them for ever: the user's next `git status`, or the shell
    prompt that asks a version manager which interpreter to use. The names
    are an open-ended list and the post-run search skips package caches,
    so the file type is refused instead, wherever the command asks for it
    (the filter cannot see paths). What this costs: a FIFO in the
    sandbox's own /tmp too; GNU make 4.4 then says `jobserver mkfifo: …
    Operation not permitted` and uses a pipe, as it does on any system
    without FIFOs. A device node needs CAP_MKNOD, which the sandbox never
    has; refused here as well, so no later capability slip makes one. A
    socket node made by mknod serves nobody (a listening socket is made by
    bind) and is a special file under a name of the command's choosing.
    """
    why = ("making a FIFO, device or socket node (a FIFO named like a file host tools read "
           "by themselves, `.gitignore` at any depth, hangs them)")
    return [
        Rule(name, errno.EPERM, why, (_masked(index, _S_IFMT, kind),))
        for name, index in (("mknod", 1), ("mknodat", 2))
        for kind in (stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK)
    ]


def filter_rules(spec: SeccompSpec) -> tuple[Rule, ...]:
    """Every rule of the filter for ``spec``, in the order they are added."""
    rules = [Rule(name, errno.EPERM, why) for name, why in BLOCKED_SYSCALLS.items()]
    rules += [Rule(name, errno.ENOSYS, why) for name, why in _ENOSYS_SYSCALLS.items()]
    rules += [
        Rule("clone", errno.EPERM, "creating namespaces (`unshare -r` regains capabilities)",
             (_masked(0, flag, flag),))
        for flag in CLONE_NS_FLAGS
    ]
    rules += [
        Rule("ioctl", errno.EPERM, "pushing keystrokes into the terminal",
             (_eq32(1, request),))
        for request in (TIOCSTI, TIOCLINUX)
    ]
    rules += _personality_rules()
    rules += _setid_rules()
    rules += _special_file_rules()
    allowed = {*([AF_UNIX] if spec.allow_unix else []),
               *([AF_INET, AF_INET6] if spec.allow_inet else [])}
    names = {**_FAMILY_NAMES, AF_UNIX: "AF_UNIX", AF_INET: "AF_INET", AF_INET6: "AF_INET6"}
    families = {f: names.get(f, f"address family {f}") for f in range(_FAMILY_LIMIT)
                if f not in allowed}
    rules += [
        Rule("socket", errno.EPERM, f"{name} sockets", (_eq32(0, family),))
        for family, name in families.items()
    ]
    if not spec.allow_unix:
        rules += _socketpair_rules()
    return tuple(rules)


def _socketpair_rules() -> list[Rule]:
    """No unix *datagram* socket pair.

    Attack (from a review): `socketpair(AF_UNIX, SOCK_DGRAM)` hands out an
    unbound datagram socket, and `sendto()` or `connect()` on it reaches any
    datagram socket path the sandbox can see — a host service's socket —
    although `socket(AF_UNIX)` is refused. A stream or seqpacket pair is
    already connected (`connect` fails with EISCONN, `sendto` ignores the
    address), and asyncio, libuv and multiprocessing need those, so they
    stay. SOCK_RAW is a datagram socket for AF_UNIX.
    """
    why = "an unbound unix datagram socket can send to any visible socket path"
    return [
        Rule("socketpair", errno.EPERM, why,
             (_eq32(0, AF_UNIX), _masked(1, SOCK_TYPE_MASK, kind)))
        for kind in (SOCK_DGRAM, SOCK_RAW)
    ]


@functools.cache
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
    # os.uname, not platform.machine: the same field, without importing
    # platform (which compiles ten regexes: ~2 ms of every cold run)
    machine = os.uname().machine.lower()
    if machine in ("x86_64", "amd64"):
        return "x86_64"
    if machine in ("aarch64", "arm64"):
        return "aarch64"
    raise SandboxUnavailable(f"seccomp filter not built for architecture {machine!r}")


def syscall_number(name: str) -> int | None:
    """The native number of ``name``, or None when this architecture has
    no such syscall (``open`` on aarch64). A syscall of the unified table
    has its number even when libseccomp is too old to know it."""
    sc = _module()
    number = int(sc.resolve_syscall(sc.Arch.NATIVE, name))
    if number >= 0:
        return number
    return UNIFIED_NUMBERS.get(name)


def build_filter(spec: SeccompSpec) -> Any:
    """A libseccomp filter object for ``spec`` (not yet exported). Raises
    :class:`SandboxUnavailable` naming the first rule libseccomp refuses."""
    sc = _module()
    native_arch()
    f = sc.SyscallFilter(sc.ALLOW)
    with contextlib.suppress(Exception):  # older bindings: NNP is the default anyway
        f.set_attr(sc.Attr.CTL_NNP, 1)
    with contextlib.suppress(Exception):  # a binary tree of syscall numbers (libseccomp 2.5+):
        f.set_attr(sc.Attr.CTL_OPTIMIZE, 2)  # a few compares per syscall instead of ~70
    ops = {"eq": sc.EQ, "masked_eq": sc.MASKED_EQ}
    for rule in filter_rules(spec):
        number = syscall_number(rule.syscall)
        if number is None:
            continue  # not on this architecture: it cannot be called either
        args = [
            sc.Arg(a.index, ops[a.op], a.mask, a.value)
            if a.op == "masked_eq"
            else sc.Arg(a.index, ops[a.op], a.value)
            for a in rule.args
        ]
        try:
            f.add_rule(sc.ERRNO(rule.errno), number, *args)
        except (ValueError, RuntimeError, OSError) as exc:
            raise SandboxUnavailable(
                f"the seccomp filter cannot be built as designed: libseccomp refused "
                f"the rule {rule.describe()} ({exc})"
            ) from None
    return f


@functools.lru_cache(maxsize=8)
def export_bpf(spec: SeccompSpec) -> bytes:
    """The compiled BPF program for ``spec`` (cached: it depends on nothing else)."""
    f = build_filter(spec)
    # Through a pipe, drained as it is written, not a file: a file's writes
    # stop at the process's file size limit, and libseccomp does not say
    # so. From a review: under `ulimit -f 2` the program came back cut at
    # 2,048 bytes, was cached, and every later run failed to start.
    import threading  # noqa: PLC0415 -- a cache miss only

    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    chunks: list[bytes] = []

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)

    reader = threading.Thread(target=drain, name="shellgate-bpf-export", daemon=True)
    reader.start()
    try:
        with os.fdopen(write_end, "wb", closefd=False) as handle:
            f.export_bpf(handle)
    finally:
        os.close(write_end)
        reader.join()
        os.close(read_end)
    return b"".join(chunks)


#: what a cached program may be: BPF instructions are 8 bytes, and a filter
#: larger than the kernel's 4096 instructions cannot be loaded
_MAX_PROGRAM = 4096 * 8
#: the files whose bytes make the filter (its rules are code, here)
_SOURCES = ("seccomp.py", "bpf.py")
#: where libseccomp is, to notice its upgrade (the library's own output)
_LIBRARIES = tuple(f"{d}/libseccomp.so.2" for d in (
    "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
    "/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"))


def cache_key(spec: SeccompSpec) -> str:
    """What the program for ``spec`` depends on: the spec, the rules' code,
    the machine, and the libseccomp that compiled it."""
    from _blake2 import blake2b  # noqa: PLC0415 -- hashlib's import costs 3 ms

    here = os.path.dirname(os.path.abspath(__file__))
    h = blake2b(digest_size=16)
    h.update(repr((spec.allow_unix, spec.allow_inet, os.uname().machine)).encode())
    for name in _SOURCES:
        with open(os.path.join(here, name), "rb") as handle:
            h.update(handle.read())
    for library in _LIBRARIES:
        with contextlib.suppress(OSError):
            st = os.stat(library)
            h.update(f"{os.path.realpath(library)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def cached_bpf(spec: SeccompSpec, cache_dir: str | None) -> bytes:
    """:func:`export_bpf`, kept in ``cache_dir`` between runs: building it
    loads libseccomp and costs a run 15 ms.

    ``cache_dir`` must be the sandbox's private state directory (the
    user's own, 0700, hidden from every sandboxed command): a program read
    back from a place a command could write would be the command's filter.
    A cached file is used only when it is a regular file of this user,
    written by nobody else, of a program's size; anything else is built
    again (and a failure to save it costs nothing but the time)."""
    if cache_dir is None:
        return export_bpf(spec)
    path = os.path.join(cache_dir, f"seccomp-{cache_key(spec)}.bpf")
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            if (stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022
                    and 0 < st.st_size <= _MAX_PROGRAM and st.st_size % 8 == 0):
                data = os.read(fd, _MAX_PROGRAM + 1)
                if len(data) == st.st_size:
                    return data
        finally:
            os.close(fd)
    program = export_bpf(spec)
    with contextlib.suppress(OSError):
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        written = 0
        try:
            # all of it, or no cache: from a review, under `ulimit -f 2` a
            # short write kept a truncated filter, and every later run
            # failed to start (EINVAL) until the file was removed
            written = os.write(fd, program)
        finally:
            os.close(fd)
            if written == len(program):
                os.replace(tmp, path)
            else:
                os.unlink(tmp)  # a short write, or none (EFBIG)
    return program
