"""What the oracle's strace saw, as events, and what a tree held.

strace -f -y prints one line per traced call: the pid, the call, its
arguments (paths quoted, descriptors with their paths), the result. The
events are the calls made after the command's shell started (bubblewrap's
set-up comes first), every path made absolute, each tagged with the batch
item whose process tree made it (see :meth:`fuzz.oracle.Oracle.observe_batch`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_LINE = re.compile(r"^(?P<pid>\d+)\s+(?P<call>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+|\?)")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
#: the last argument of the exec that starts batch item N
MARK = "shellgate-oracle-item-"
_MARKED = re.compile(r'"' + MARK + r'(\d+)"\]')


@dataclass(frozen=True, slots=True)
class Event:
    call: str
    args: str
    #: the path the call names, made absolute (its directory descriptor's
    #: path, which strace -y prints, or the process's working directory)
    path: str
    ok: bool
    #: the batch item whose process tree made the call (None: the harness's
    #: own driver, or a single command's run)
    owner: int | None = None
    #: the exec that starts a batch item (the harness's, never judged)
    harness: bool = False


_FD_PATH = re.compile(r"^(\d+)<([^>]*)>")
_DIRFD_CALLS = frozenset({"openat", "openat2", "unlinkat", "mkdirat", "renameat", "renameat2",
                          "linkat", "fchmodat", "execveat"})


_HOST_PID = re.compile(r"/\* (\d+) in strace's PID NS \*/")
_UNFINISHED = re.compile(r"^(?P<pid>\d+)\s+(?P<head>.*?)\s*<unfinished \.\.\.>$")
_RESUMED = re.compile(r"^(?P<pid>\d+)\s+<\.\.\. (?P<call>\w+) resumed>\s*(?P<rest>.*)$")


def _joined(lines: list[str]) -> Iterator[str]:
    """Lines with each call strace split in two (``<unfinished ...>`` while
    another process ran, then ``<... call resumed>``) put back together:
    a fork's child pid is in the second half, and an execve's result."""
    pending: dict[str, str] = {}
    for line in lines:
        if (m := _UNFINISHED.match(line)) is not None:
            pending[m.group("pid")] = m.group("head")
        elif (m := _RESUMED.match(line)) is not None:
            head = pending.pop(m.group("pid"), None)
            if head is not None:
                yield f"{m.group('pid')} {head}{m.group('rest')}"
        else:
            yield line


def events(text: str, cwd: str) -> list[Event]:
    """The traced calls made after the command's shell started, with every
    path made absolute: the working directory is followed per process
    (chdir, fchdir, inherited on fork), and so is the batch item that owns
    a process (set by the exec carrying its mark, inherited on fork)."""
    out: list[Event] = []
    cwds: dict[str, str] = {}
    owners: dict[str, int] = {}
    started = False
    for line in _joined(text.splitlines()):
        m = _LINE.match(line)
        if m is None:
            continue
        pid, call, args, ret = m.group("pid"), m.group("call"), m.group("args"), m.group("ret")
        strings = _STRING.findall(args)
        raw = strings[0] if strings else ""
        if call == "execve" and raw in ("/bin/bash", "/usr/bin/bash") and not started:
            started = True
            cwds[pid] = cwd
            continue
        if not started:
            continue
        here = cwds.setdefault(pid, cwd)
        ok = ret not in ("-1", "?")
        if call in ("clone", "clone3", "fork", "vfork") and ok:
            # the child's pid as strace names processes (--decode-pids=pidns:
            # the sandbox's own pid namespace numbers them from 1)
            host = _HOST_PID.search(line)
            child = host.group(1) if host else ret
            cwds[child] = here
            if pid in owners:
                owners[child] = owners[pid]
            continue
        if call == "chdir":
            if ok:
                cwds[pid] = os.path.normpath(os.path.join(here, raw))
            continue
        if call == "fchdir":
            fd = _FD_PATH.match(args)
            if ok and fd:
                cwds[pid] = fd.group(2)
            continue
        harness = False
        if call == "execve" and (marked := _MARKED.search(args)) is not None:
            owners[pid] = int(marked.group(1))
            harness = True
        base = here
        if call in _DIRFD_CALLS and not args.startswith("AT_FDCWD"):
            fd = _FD_PATH.match(args)
            base = fd.group(2) if fd else "?"
        path = os.path.normpath(os.path.join(base, raw)) if raw else ""
        out.append(Event(call, args, path, ok, owners.get(pid), harness))
    return out


def tree(root: Path) -> dict[str, str]:
    """path -> a digest of what is there (type, mode, content or target)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.islink(path):
                out[path] = "link:" + os.readlink(path)
            elif os.path.isdir(path):
                out[path] = f"dir:{st.st_mode:o}"
            else:
                with open(path, "rb") as handle:
                    out[path] = f"file:{st.st_mode:o}:" + hashlib.sha256(handle.read()).hexdigest()
    return out


