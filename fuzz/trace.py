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
from pathlib import Path

from regexes import regex
from values import valueclass

_LINE = regex(r"^(?P<pid>\d+)\s+(?P<call>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+|\?)")
_STRING = regex(r'"((?:[^"\\]|\\.)*)"')
#: strace -y names the file a call opened: `= 3</path>`
_OPENED = regex(r"\)\s+=\s+\d+<([^>]*)>\s*$")
#: strace -y names the working directory of an *at call: AT_FDCWD</path>
_AT_CWD = regex(r"^AT_FDCWD<([^>]*)>")


@valueclass
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


_FD_PATH = regex(r"^(\d+)<([^>]*)>")
_DIRFD_CALLS = frozenset({"openat", "openat2", "unlinkat", "mkdirat", "renameat", "renameat2",
                          "linkat", "fchmodat", "execveat"})


_HOST_PID = regex(r"/\* (\d+) in strace's PID NS \*/")
_UNFINISHED = regex(r"^(?P<pid>\d+)\s+(?P<head>.*?)\s*<unfinished \.\.\.>$")
_RESUMED = regex(r"^(?P<pid>\d+)\s+<\.\.\. (?P<call>\w+) resumed>\s*(?P<rest>.*)$")


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
            elif m.group("call") == "execve":
                # a thread's exec: strace prints it resumed under the
                # leader's pid, its start under the thread's (from a review)
                yield f'{m.group("pid")} execve("?", ["?"]{m.group("rest")}'
        else:
            yield line


@valueclass
class _Call:
    pid: str
    call: str
    args: str
    ret: str
    line: str


def _calls(text: str) -> list[_Call]:
    """The traced calls made after the command's shell started (bubblewrap's
    own set-up comes first)."""
    out = [_Call(m.group("pid"), m.group("call"), m.group("args"), m.group("ret"), line)
           for line in _joined(text.splitlines()) if (m := _LINE.match(line)) is not None]
    first = next((i for i, c in enumerate(out) if c.call == "execve"
                  and _STRING.findall(c.args)[:1] in (["/bin/bash"], ["/usr/bin/bash"])), None)
    return [] if first is None else out[first:]


def _child(call: _Call) -> str:
    # the child's pid as strace names processes (--decode-pids=pidns: the
    # sandbox's own pid namespace numbers them from 1)
    host = _HOST_PID.search(call.line)
    return host.group(1) if host else call.ret


def _owners(calls: list[_Call], mark: str | None) -> list[tuple[int | None, bool]]:
    """Per call: the batch item that owns its process, and whether it is the
    harness's exec that starts the item. Two passes: a vfork's child acts
    before strace prints its parent's clone result (from a review: the
    child's first exec went unowned, so unjudged). A mark counts only on a
    process no item owns yet (the harness's), so a command cannot move its
    doings to another item by exec'ing with a mark as its last argument."""
    parent: dict[str, str] = {}
    for c in calls:
        if c.call in ("clone", "clone3", "fork", "vfork") and c.ret not in ("-1", "?"):
            parent[_child(c)] = c.pid
    marked = re.compile(r'"' + re.escape(mark) + r'(\d+)"\]') if mark else None
    starts: dict[str, tuple[int, int]] = {}  # pid -> (item, index of its marked exec)

    def owner(pid: str, at: int) -> int | None:
        seen = set()
        while pid not in seen:
            seen.add(pid)
            if pid in starts:
                item, since = starts[pid]
                return item if at >= since else None
            if pid not in parent:
                return None
            pid = parent[pid]
        return None

    if marked is not None:
        for i, c in enumerate(calls):
            m = marked.search(c.args) if c.call == "execve" else None
            if m is not None and owner(c.pid, i) is None:
                starts[c.pid] = (int(m.group(1)), i)
    return [(owner(c.pid, i), c.pid in starts and starts[c.pid][1] == i)
            for i, c in enumerate(calls)]


def events(text: str, cwd: str, mark: str | None = None) -> list[Event]:
    """The traced calls made after the command's shell started, with every
    path made absolute — from the directory strace names (``AT_FDCWD<…>``,
    a descriptor's ``<…>``), else the process's working directory followed
    through chdir and fork — each with the batch item that owns it."""
    calls = _calls(text)
    owned = _owners(calls, mark)
    out: list[Event] = []
    cwds: dict[str, str] = {}
    for c, (item, harness) in zip(calls, owned, strict=True):
        strings = _STRING.findall(c.args)
        raw = strings[0] if strings else ""
        here = cwds.setdefault(c.pid, cwd)
        ok = c.ret not in ("-1", "?")
        if c.call in ("clone", "clone3", "fork", "vfork"):
            if ok:
                cwds.setdefault(_child(c), here)  # a child's own chdir may come first
            continue
        if c.call == "chdir":
            if ok:
                cwds[c.pid] = os.path.normpath(os.path.join(here, raw))
            continue
        if c.call == "fchdir":
            fd = _FD_PATH.match(c.args)
            if ok and fd:
                cwds[c.pid] = fd.group(2)
            continue
        base = here
        if (at := _AT_CWD.match(c.args)) is not None:
            base = at.group(1)
        elif c.call in _DIRFD_CALLS and not c.args.startswith("AT_FDCWD"):
            fd = _FD_PATH.match(c.args)
            base = fd.group(2) if fd else "?"
        path = os.path.normpath(os.path.join(base, raw)) if raw else ""
        if ok and (opened := _OPENED.search(c.line)) is not None and opened.group(1)[:1] == "/":
            # the file the kernel opened, as strace -y names the new
            # descriptor: /proc/self/cwd/.., links and odd directory names
            # resolved (from a review: `base64 /proc/self/cwd/../home/…`);
            # not a pipe's or a socket's name (`pipe:[123]`)
            path = opened.group(1)
        out.append(Event(c.call, c.args, path, ok, item, harness))
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


