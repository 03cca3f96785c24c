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

The index is the command's to write, so this module treats it as hostile
input, and the guard must never be turned against the host:

* a gitlink named ``/abs``, ``../x`` or through a symlinked directory
  (``ln -s ~/other-repo link`` + a gitlink ``link``) once made this step
  rename another repository's config outside the workspace: names are
  checked, and every component is opened with ``O_NOFOLLOW`` below the
  workspace's own directory descriptor, so no rename can leave it;
* ``.git/index`` replaced by a FIFO (or a symlink to ``/dev/tty``) hung every
  later run before it started: only a regular file is read, opened with
  ``O_NOFOLLOW | O_NONBLOCK``, up to a size bound;
* an index that does not parse is reported, never a crash.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import struct
from dataclasses import dataclass

GITLINK_MODE = 0o160000
SUFFIX = ".quarantined-by-shellgate"
#: Larger indexes are not copied before a run (and so not checked).
_MAX_INDEX_BYTES = 64 * 1024 * 1024
#: More gitlinks than this in one index are not all defused (reported).
_MAX_DEFUSE = 1000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class IndexStamp:
    """``.git/index`` before the run: its metadata and its bytes."""

    path: str
    stamp: tuple[int, int, int] | None  # (inode, size, mtime_ns) or None when absent
    content: bytes = b""


@dataclass(frozen=True, slots=True)
class GuardReport:
    """What the post-run step did: the paths it renamed, and the problems
    it met (an unreadable index, a refused name) in one line each."""

    defused: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def read_regular(path: str, limit: int = _MAX_INDEX_BYTES) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a symlink, FIFO or
    device) of at most ``limit`` bytes; None otherwise. Never blocks on a
    FIFO, never follows a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks, total = [], 0
        while total <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks) if total <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def stamp_indexes(roots: tuple[str, ...]) -> list[IndexStamp]:
    out = []
    for root in roots:
        index = os.path.join(root, ".git", "index")
        try:
            if not stat.S_ISDIR(os.lstat(os.path.join(root, ".git")).st_mode):
                continue
        except OSError:
            continue
        stamp = _stamp(index)
        content = b""
        if stamp is not None and stamp[1] <= _MAX_INDEX_BYTES:
            content = read_regular(index) or b""
        out.append(IndexStamp(index, stamp, content))
    return out


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def gitlinks(data: bytes, *, hash_size: int = 20) -> list[str]:
    """Paths of the gitlink (submodule) entries of a git index (its bytes),
    versions 2-4. Raises ValueError for data that is not a readable index."""
    try:
        return _gitlinks(data, hash_size)
    except (IndexError, struct.error, UnicodeError) as exc:
        raise ValueError(f"malformed index: {exc}") from None


def _gitlinks(data: bytes, hash_size: int) -> list[str]:
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
            if strip > len(previous):
                raise ValueError("bad prefix compression")
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


def safe_link_name(name: str) -> bool:
    """A gitlink name git itself would accept for a path inside the tree:
    relative, no empty, ``.``, ``..`` or ``.git`` component, no NUL."""
    if not name or name.startswith("/") or "\0" in name:
        return False
    parts = name.split("/")
    return all(p and p not in (".", "..") and p.lower() != ".git" for p in parts)


def quarantine_planted(stamps: list[IndexStamp]) -> GuardReport:
    """For each index that changed during the run, defuse the nested
    repositories of the gitlinks the run added. Never raises."""
    defused: list[str] = []
    problems: list[str] = []
    for item in stamps:
        try:
            _check_one(item, defused, problems)
        except Exception as exc:  # hostile input must not crash the post-run step
            problems.append(f"{item.path}: gitlink check failed: {exc}")
    return GuardReport(tuple(defused), tuple(problems))


def _check_one(item: IndexStamp, defused: list[str], problems: list[str]) -> None:
    if _stamp(item.path) == item.stamp:
        return
    root = os.path.dirname(os.path.dirname(item.path))
    size = _hash_size(root)
    data = read_regular(item.path)
    if data is None:
        if os.path.lexists(item.path):
            problems.append(f"{item.path} is not a regular file of at most "
                            f"{_MAX_INDEX_BYTES} bytes; its gitlinks were not checked")
        return
    try:
        after = set(gitlinks(data, hash_size=size))
    except ValueError as exc:
        problems.append(f"{item.path}: {exc}; git cannot read it either")
        return
    try:
        before = set(gitlinks(item.content, hash_size=size)) if item.content else set()
    except ValueError:
        before = set()
    added = sorted(after - before)
    if len(added) > _MAX_DEFUSE:
        problems.append(f"{item.path}: {len(added)} gitlinks added; the first "
                        f"{_MAX_DEFUSE} were checked")
    for link in added[:_MAX_DEFUSE]:
        if not safe_link_name(link):
            problems.append(f"{item.path}: refused gitlink name {link!r}")
            continue
        defused.extend(_defuse(root, link, problems))


def _open_below(root: str, parts: list[str]) -> int | None:
    """A directory descriptor for ``root/parts...``, every component opened
    without following a symlink; None if any is missing or not a real dir."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return None
    for part in parts:
        try:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = nxt
    return fd


def _defuse(root: str, link: str, problems: list[str]) -> list[str]:
    """Rename the nested repository's config and hooks (or its ``.git``
    file), all inside ``root``, all through descriptors."""
    where = os.path.join(root, link)
    fd = _open_below(root, link.split("/"))
    if fd is None:
        return []  # the directory is gone, or reached only through a symlink
    out: list[str] = []
    try:
        try:
            st = os.lstat(".git", dir_fd=fd)
        except FileNotFoundError:
            return []
        if stat.S_ISREG(st.st_mode):
            if _rename(fd, ".git", where, problems):
                out.append(os.path.join(where, ".git"))
            return out
        if not stat.S_ISDIR(st.st_mode):
            # a symlinked .git: renaming the link itself is safe and stops git
            if _rename(fd, ".git", where, problems):
                out.append(os.path.join(where, ".git"))
            return out
        gitdir = os.open(".git", _DIR_FLAGS, dir_fd=fd)
        try:
            for name in ("config", "hooks"):
                with contextlib.suppress(FileNotFoundError):
                    os.lstat(name, dir_fd=gitdir)
                    if _rename(gitdir, name, os.path.join(where, ".git"), problems):
                        out.append(os.path.join(where, ".git", name))
        finally:
            os.close(gitdir)
    finally:
        os.close(fd)
    return out


def _rename(dir_fd: int, name: str, where: str, problems: list[str]) -> bool:
    try:
        os.rename(name, name + SUFFIX, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            problems.append(f"cannot quarantine {os.path.join(where, name)}: {exc.strerror}")
        return False
    return True


def _hash_size(root: str) -> int:
    data = read_regular(os.path.join(root, ".git", "config"), 1 << 20)
    if data is None:
        return 20
    config = data.decode("utf-8", "replace").lower().replace("\t", " ")
    return 32 if "objectformat = sha256" in config else 20
