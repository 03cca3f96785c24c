"""After a run: defuse nested repositories planted as gitlinks.

A command can create ``sub/.git`` with its own ``core.fsmonitor`` and
register ``sub`` as a gitlink in the (writable) ``.git/index``; the user's
next ``git status`` on the host recurses into it and runs the planted
program. Mounts cannot tell such a repository from a legitimate submodule,
so it is caught afterwards: the index is read (not parsed) before the run;
if it changed, the gitlinks of both versions are compared, and for every
gitlink added during the run the nested repository's ``config`` and
``hooks`` (or its ``.git`` pointer file) are renamed with a
``.quarantined-by-shellgate`` suffix — reversible, and reported as
tampering. A legitimate ``git submodule add`` inside the sandbox is
quarantined the same way; the report says how to undo it.

Reproducer (held by this module)::

    shellgate run -- sh -c 'mkdir sub && cd sub && git init -q &&
      git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x &&
      git config core.fsmonitor "touch /tmp/PWNED" && cd .. &&
      git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub'
    git status   # on the host: no /tmp/PWNED
"""

from __future__ import annotations

import contextlib
import os
import struct
from dataclasses import dataclass

GITLINK_MODE = 0o160000
SUFFIX = ".quarantined-by-shellgate"
#: Larger indexes are not copied before a run (and so not checked).
_MAX_INDEX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class IndexStamp:
    """``.git/index`` before the run: its metadata and its bytes."""

    path: str
    stamp: tuple[int, int, int] | None  # (inode, size, mtime_ns) or None when absent
    content: bytes = b""


def stamp_indexes(roots: tuple[str, ...]) -> list[IndexStamp]:
    out = []
    for root in roots:
        index = os.path.join(root, ".git", "index")
        if not os.path.isdir(os.path.join(root, ".git")):
            continue
        stamp = _stamp(index)
        content = b""
        if stamp is not None and stamp[1] <= _MAX_INDEX_BYTES:
            with contextlib.suppress(OSError), open(index, "rb") as handle:
                content = handle.read(_MAX_INDEX_BYTES)
        out.append(IndexStamp(index, stamp, content))
    return out


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def gitlinks(data: bytes, *, hash_size: int = 20) -> list[str]:
    """Paths of the gitlink (submodule) entries of a git index (its bytes),
    versions 2-4. Raises ValueError for data that is not a readable index."""
    if len(data) < 12 or data[:4] != b"DIRC":
        raise ValueError("not a git index")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise ValueError(f"unsupported index version {version}")
    pos = 12
    fixed = 40 + hash_size + 2  # stat data, mode..., object name, flags
    previous = b""
    out: list[str] = []
    for _ in range(count):
        if pos + fixed > len(data):
            raise ValueError("truncated index")
        mode = struct.unpack(">I", data[pos + 24 : pos + 28])[0]
        flags = struct.unpack(">H", data[pos + fixed - 2 : pos + fixed])[0]
        start = pos
        pos += fixed
        if flags & 0x4000:  # extended flags (version 3+)
            pos += 2
        if version == 4:
            strip, pos = _varint(data, pos)
            end = data.index(b"\0", pos)
            name = previous[: len(previous) - strip] + data[pos:end]
            pos = end + 1
        else:
            end = data.index(b"\0", pos)
            name = data[pos:end]
            pos = start + ((end - start) // 8 + 1) * 8  # 1-8 NULs pad to 8 bytes
        previous = name
        if mode == GITLINK_MODE:
            out.append(name.decode("utf-8", "surrogateescape"))
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset varint (index v4 path prefix compression)."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def quarantine_planted(stamps: list[IndexStamp]) -> tuple[str, ...]:
    """For each index that changed during the run, defuse the nested
    repositories of the gitlinks the run added."""
    defused: list[str] = []
    for item in stamps:
        if _stamp(item.path) == item.stamp:
            continue
        root = os.path.dirname(os.path.dirname(item.path))
        size = _hash_size(root)
        try:
            with open(item.path, "rb") as handle:
                after = set(gitlinks(handle.read(_MAX_INDEX_BYTES), hash_size=size))
        except (OSError, ValueError):
            continue  # not an index git can read either
        try:
            before = set(gitlinks(item.content, hash_size=size)) if item.content else set()
        except ValueError:
            before = set()
        for link in sorted(after - before):
            nested = os.path.join(root, link, ".git")
            if os.path.lexists(nested):
                defused.extend(_defuse(nested))
    return tuple(defused)


def _defuse(nested: str) -> list[str]:
    targets = [nested] if not os.path.isdir(nested) else [
        os.path.join(nested, "config"), os.path.join(nested, "hooks")]
    out = []
    for path in targets:
        if os.path.lexists(path):
            with contextlib.suppress(OSError):
                os.rename(path, path + SUFFIX)
                out.append(path)
    return out


def _hash_size(root: str) -> int:
    try:
        with open(os.path.join(root, ".git", "config"), encoding="utf-8", errors="replace") as f:
            config = f.read().lower()
    except OSError:
        return 20
    return 32 if "objectformat = sha256" in config.replace("\t", " ") else 20
