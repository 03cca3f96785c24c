"""The seccomp filter as compiled: every rule of the design is in the BPF
program libseccomp produced, checked by running the program on each
syscall (sandbox.linux.bpf), and a rule libseccomp refuses stops the build
instead of vanishing."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sandbox import SandboxUnavailable
from sandbox.linux import seccomp
from sandbox.linux.bpf import BpfError, Verdict, evaluate
from sandbox.linux.seccomp import (
    ArgCmp,
    Rule,
    SeccompSpec,
    build_filter,
    export_bpf,
    filter_rules,
    native_arch,
    syscall_number,
)

SPECS = [SeccompSpec(), SeccompSpec(allow_inet=True), SeccompSpec(allow_unix=True, allow_inet=True)]
ARCH = native_arch()


def _args_matching(rule: Rule) -> tuple[int, ...]:
    """Arguments for which every comparison of ``rule`` holds."""
    args = [0] * 6
    for cmp in rule.args:
        args[cmp.index] = cmp.value
    return tuple(args)


def _call(program: bytes, name: str, *args: int) -> Verdict:
    number = syscall_number(name)
    assert number is not None, name
    return evaluate(program, number, args, arch=ARCH)


def _with_high_bits(rule: Rule) -> tuple[int, ...]:
    """The same arguments with garbage in the upper 32 bits of every one the
    rule compares: the kernel reads an int argument's low 32 bits only."""
    args = list(_args_matching(rule))
    for cmp in rule.args:
        args[cmp.index] |= 0xDEADBEEF << 32
    return tuple(args)


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_no_rule_is_dodged_by_setting_the_upper_half_of_an_argument(spec: SeccompSpec) -> None:
    """Attack (from a review): `syscall(SYS_socket, (1 << 32) | AF_UNIX, …)`
    passed a full 64-bit equality and made a unix socket."""
    program = export_bpf(spec)
    for rule in filter_rules(spec):
        number = syscall_number(rule.syscall)
        if number is None or not rule.args:
            continue
        verdict = evaluate(program, number, _with_high_bits(rule), arch=ARCH)
        assert verdict == Verdict("errno", rule.errno), f"{rule.describe()}: {verdict}"


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_every_rule_of_the_design_is_in_the_compiled_program(spec: SeccompSpec) -> None:
    program = export_bpf(spec)
    checked = 0
    for rule in filter_rules(spec):
        number = syscall_number(rule.syscall)
        if number is None:
            continue  # not on this architecture
        verdict = evaluate(program, number, _args_matching(rule), arch=ARCH)
        assert verdict == Verdict("errno", rule.errno), f"{rule.describe()}: {verdict}"
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("read", ()),
        ("write", ()),
        ("openat", (0, 0, 0o101, 0o644)),  # O_CREAT with a plain mode
        ("openat", (0, 0, 0o1, 0o4755)),  # no O_CREAT: the mode is ignored by the kernel
        ("chmod", (0, 0o755)),
        ("fchmodat", (0, 0, 0o1777)),  # the sticky bit is not set-id
        ("clone", (0x01200011,)),  # what fork() passes
        ("personality", (0,)),
        ("personality", (0xFFFFFFFF,)),
        ("ioctl", (1, 0x5401)),  # TCGETS
        ("socket", (2,)),
        ("socket", (10,)),
        ("socketpair", (1, 1)),  # a connected stream pair (asyncio, libuv)
        ("socketpair", (1, 5 | 0x80000)),  # seqpacket, close-on-exec
    ],
)
def test_ordinary_calls_are_allowed(name: str, args: tuple[int, ...]) -> None:
    program = export_bpf(SeccompSpec(allow_inet=True))
    assert _call(program, name, *args) == Verdict("allow")


@pytest.mark.parametrize("value", [1, 8, 0x0040000, 0x0400000, 0x80000000, 0xFFFFFFFE, 0x7FFFFFFF])
def test_every_personality_but_the_query_and_linux_is_refused(value: int) -> None:
    """One family, many members: any value with some bit set and some bit
    clear (the 32 masked rules cover all of them)."""
    assert _call(export_bpf(SeccompSpec()), "personality", value) == Verdict("errno", errno.EPERM)


def test_the_networked_filter_still_refuses_unix_sockets() -> None:
    """Everything in a networked sandbox (bwrap's PID 1 included) has this
    one filter: no process there can reach a host unix socket."""
    program = export_bpf(SeccompSpec(allow_inet=True))
    assert _call(program, "socket", 1) == Verdict("errno", errno.EPERM)
    assert _call(program, "socket", 2) == Verdict("allow")


def test_another_architecture_or_abi_is_killed() -> None:
    """int 0x80 (i386 numbers) or x32 numbers cannot dodge the table."""
    program = export_bpf(SeccompSpec())
    other = "i386" if ARCH == "x86_64" else "x86_64"
    assert evaluate(program, 1, arch=other).action == "kill"
    if ARCH == "x86_64":
        assert evaluate(program, 0x40000000 | 1, arch=ARCH).action == "kill"


def test_a_rule_libseccomp_refuses_stops_the_build_and_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The old `personality` rule (two comparisons on one argument) was
    dropped silently; now such a rule fails the start with its name."""
    bad = Rule("personality", errno.EPERM, "test",
               (ArgCmp(0, "masked_eq", 1, 1), ArgCmp(0, "masked_eq", 2, 2)))
    monkeypatch.setattr(seccomp, "filter_rules", lambda spec: (bad,))
    with pytest.raises(SandboxUnavailable, match=r"refused the rule personality\(arg0"):
        build_filter(SeccompSpec())


def test_a_malformed_program_is_an_error_not_a_verdict() -> None:
    with pytest.raises(BpfError):
        evaluate(b"\x00" * 7, 0)
    with pytest.raises(BpfError):
        evaluate(b"\x00\x00\x00\x00\x00\x00\x00\x00", 0)  # loads, never returns


SPECS = [seccomp.SeccompSpec(), seccomp.SeccompSpec(allow_unix=True),
         seccomp.SeccompSpec(allow_inet=True)]


@pytest.mark.parametrize("spec", SPECS)
def test_a_cached_filter_is_the_filter_libseccomp_builds(spec: seccomp.SeccompSpec,
                                                         tmp_path: Path) -> None:
    built = seccomp.export_bpf(spec)
    assert seccomp.cached_bpf(spec, str(tmp_path)) == built  # built, and saved
    saved = list(tmp_path.glob("seccomp-*.bpf"))
    assert len(saved) == 1 and saved[0].read_bytes() == built
    assert seccomp.cached_bpf(spec, str(tmp_path)) == built  # read back
    assert len({seccomp.cache_key(s) for s in SPECS}) == len(SPECS)


def _plant(tmp_path: Path, how: str) -> Path:
    spec = seccomp.SeccompSpec()
    path = tmp_path / f"seccomp-{seccomp.cache_key(spec)}.bpf"
    allow_all = bytes.fromhex("0600000000000000") * 1  # BPF_RET ALLOW-ish: 8 bytes
    if how == "group-writable":
        path.write_bytes(allow_all)
        path.chmod(0o664)
    elif how == "a link":
        (tmp_path / "elsewhere").write_bytes(allow_all)
        path.symlink_to(tmp_path / "elsewhere")
    elif how == "a fifo":
        os.mkfifo(path)
    elif how == "odd size":
        path.write_bytes(b"\0" * 13)
    elif how == "too large":
        path.write_bytes(b"\0" * (4097 * 8))
    elif how == "empty":
        path.write_bytes(b"")
    return path


@pytest.mark.parametrize("how", ["group-writable", "a link", "a fifo", "odd size",
                                 "too large", "empty"])
def test_a_cached_filter_that_is_not_plainly_ours_is_built_again(tmp_path: Path,
                                                                 how: str) -> None:
    """Attack: put a program that allows everything where the next run reads
    its filter from. Whatever is there that the sandbox did not write the way
    it writes is ignored."""
    _plant(tmp_path, how)
    assert seccomp.cached_bpf(seccomp.SeccompSpec(), str(tmp_path)) == seccomp.export_bpf(
        seccomp.SeccompSpec())


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file of another user")
def test_a_cached_filter_of_another_user_is_built_again(tmp_path: Path) -> None:
    path = _plant(tmp_path, "empty")
    path.write_bytes(b"\0" * 64)
    os.chown(path, 65534, 65534)
    assert seccomp.cached_bpf(seccomp.SeccompSpec(), str(tmp_path)) == seccomp.export_bpf(
        seccomp.SeccompSpec())
    assert seccomp.cached_bpf(seccomp.SeccompSpec(), None) == seccomp.export_bpf(
        seccomp.SeccompSpec())  # no cache: built each time


def test_a_file_size_limit_neither_cuts_the_filter_nor_leaves_a_cut_one_cached(
        tmp_path: Path) -> None:
    """From a review: under `ulimit -f 2` (a 2 KiB file size limit) the
    filter came back cut at 2,048 bytes (libseccomp wrote it to a file),
    was cached, and every later run failed to start (EINVAL) until the
    file was removed."""
    import subprocess
    import sys

    full = seccomp.export_bpf(seccomp.SeccompSpec())
    assert len(full) > 2048  # the control: the limit would cut it
    script = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
              "resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048)); "
              "from sandbox.linux import seccomp; "
              "sys.stdout.buffer.write(seccomp.cached_bpf(seccomp.SeccompSpec(), sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True,
                          capture_output=True, timeout=60)
    assert done.stdout == full  # the run under the limit got its whole filter
    # and nothing cut was kept for the next one, which gets the whole too
    assert all(p.read_bytes() == full for p in tmp_path.glob("seccomp-*.bpf"))
    assert seccomp.cached_bpf(seccomp.SeccompSpec(), str(tmp_path)) == full
