"""Run a compiled seccomp program (classic BPF) on a syscall, in Python.

The filter is built by libseccomp from :func:`~sandbox.linux.seccomp.filter_rules`;
this evaluator answers what the kernel would answer for one syscall, so a
rule that was lost on the way (libseccomp refusing it, a binding dropping
it) shows up as a syscall that comes back ``allow``. ``shellgate doctor``
and the tests check every rule this way; nothing here is on the run path.

Only the instructions a seccomp program can hold are implemented (loads of
``struct seccomp_data``, ALU, jumps, returns, scratch memory); anything else
is an error, never a guess.
"""

from __future__ import annotations

import struct

from values import valueclass

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_DATA = struct.Struct("<iIQ6Q")

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "i386": 0x40000003}

RET_KILL_PROCESS = 0x80000000
RET_KILL_THREAD = 0x00000000
RET_TRAP = 0x00030000
RET_ERRNO = 0x00050000
RET_TRACE = 0x7FF00000
RET_LOG = 0x7FFC0000
RET_ALLOW = 0x7FFF0000
_ACTION_MASK = 0xFFFF0000

_M32 = 0xFFFFFFFF


class BpfError(ValueError):
    """The program is malformed or uses an instruction seccomp cannot."""


@valueclass
class Verdict:
    """What the filter returns: ``action`` is ``allow``, ``errno``, ``kill``,
    ``trap``, ``trace`` or ``log``; ``errno`` is set for ``errno``."""

    action: str
    errno: int | None = None

    def __str__(self) -> str:
        return f"errno {self.errno}" if self.action == "errno" else self.action


def decode(program: bytes) -> list[tuple[int, int, int, int]]:
    """``(code, jt, jf, k)`` for each 8-byte instruction."""
    if len(program) % 8:
        raise BpfError("program length is not a multiple of 8")
    return [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]


def _verdict(value: int) -> Verdict:
    action = value & _ACTION_MASK
    if action == RET_ALLOW:
        return Verdict("allow")
    if action == RET_ERRNO:
        return Verdict("errno", value & 0xFFFF)
    if action in (RET_KILL_PROCESS, RET_KILL_THREAD):
        return Verdict("kill")
    names = {RET_TRAP: "trap", RET_TRACE: "trace", RET_LOG: "log"}
    return Verdict(names.get(action, f"unknown {value:#x}"))


def _alu(op: int, a: int, operand: int) -> int:
    if op == 0x00:
        return (a + operand) & _M32
    if op == 0x10:
        return (a - operand) & _M32
    if op == 0x20:
        return (a * operand) & _M32
    if op == 0x30:
        if operand == 0:
            raise BpfError("division by zero")
        return a // operand
    if op == 0x40:
        return a | operand
    if op == 0x50:
        return a & operand
    if op == 0x60:
        return (a << operand) & _M32
    if op == 0x70:
        return a >> operand
    if op == 0x80:
        return (-a) & _M32
    if op == 0x90:
        if operand == 0:
            raise BpfError("modulo by zero")
        return a % operand
    if op == 0xA0:
        return a ^ operand
    raise BpfError(f"unknown ALU op {op:#x}")


def _jump(op: int, a: int, operand: int) -> bool:
    if op == 0x10:
        return a == operand
    if op == 0x20:
        return a > operand
    if op == 0x30:
        return a >= operand
    if op == 0x40:
        return bool(a & operand)
    raise BpfError(f"unknown jump op {op:#x}")


def evaluate(
    program: bytes, nr: int, args: tuple[int, ...] = (), *, arch: str = "x86_64", ip: int = 0
) -> Verdict:
    """What ``program`` returns for syscall ``nr`` with ``args`` (64-bit
    values; missing ones are 0) on ``arch``."""
    full = (tuple(args) + (0,) * 6)[:6]
    data = _DATA.pack(nr, AUDIT_ARCH[arch], ip, *(v & 0xFFFFFFFFFFFFFFFF for v in full))
    insns = decode(program)
    a = x = 0
    mem = [0] * 16
    pc = 0
    for _ in range(len(insns) + 1):  # classic BPF only jumps forward
        if pc >= len(insns):
            raise BpfError("fell off the end of the program")
        code, jt, jf, k = insns[pc]
        cls = code & 0x07
        pc += 1
        if cls == 0x00:  # LD
            mode, size = code & 0xE0, code & 0x18
            if mode == 0x20 and size == 0x00:  # ABS, word
                if k % 4 or k + 4 > len(data):
                    raise BpfError(f"bad load offset {k}")
                a = struct.unpack_from("<I", data, k)[0]
            elif mode == 0x00:  # IMM
                a = k
            elif mode == 0x60:  # MEM
                a = mem[k]
            elif mode == 0x80:  # LEN
                a = len(data)
            else:
                raise BpfError(f"unsupported load {code:#x}")
        elif cls == 0x01:  # LDX
            mode = code & 0xE0
            if mode == 0x00:
                x = k
            elif mode == 0x60:
                x = mem[k]
            elif mode == 0x80:
                x = len(data)
            else:
                raise BpfError(f"unsupported ldx {code:#x}")
        elif cls == 0x02:  # ST
            mem[k] = a
        elif cls == 0x03:  # STX
            mem[k] = x
        elif cls == 0x04:  # ALU
            a = _alu(code & 0xF0, a, x if code & 0x08 else k)
        elif cls == 0x05:  # JMP
            op = code & 0xF0
            if op == 0x00:  # JA
                pc += k
            else:
                pc += jt if _jump(op, a, x if code & 0x08 else k) else jf
        elif cls == 0x06:  # RET
            return _verdict(a if code & 0x18 == 0x10 else k)
        elif cls == 0x07:  # MISC
            if code & 0xF8 == 0x00:
                x = a
            else:
                a = x
    raise BpfError("program did not return")
