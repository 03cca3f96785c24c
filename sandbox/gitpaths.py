"""Reading and renaming inside a workspace's git repositories, safely.

Everything here runs on the host after a sandboxed command has had the
workspace to itself, so every path may be a trap: a symlink leading out of
the workspace, a FIFO, a name with `..`. Directories are opened one
component at a time with ``O_NOFOLLOW`` below the workspace's own
descriptor; files are read with ``O_NONBLOCK`` and never followed; renames
happen inside a directory descriptor, never across it. Nothing raises.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence

SUFFIX = ".quarantined-by-shellgate"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: what inside a nested repository's git directory makes it run or obey code
GITDIR_PARTS = ("config", "hooks", "config.worktree", "commondir")

#: (name, inode, size, mtime, ctime) of every index file of a git directory
Stamp = tuple[tuple[str, int, int, int, int], ...]


def safe_link_name(name: str) -> bool:
    """A gitlink name git itself would accept for a path inside the tree:
    relative, no empty, ``.``, ``..`` or ``.git`` component, no NUL."""
    if not name or name.startswith("/") or "\0" in name:
        return False
    parts = name.split("/")
    return all(p and p not in (".", "..") and p.lower() != ".git" for p in parts)


def is_real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def index_stamp(gitdir: str) -> Stamp:
    """Inode, size, mtime and ctime of every index file of ``gitdir``
    (``index``, ``index.*``, ``sharedindex.*``), without following links."""
    try:
        names = [n for n in os.listdir(gitdir) if n.startswith(("index", "sharedindex."))]
    except OSError:
        return ()
    out = []
    for name in sorted(names)[:64]:
        with contextlib.suppress(OSError):
            st = os.lstat(os.path.join(gitdir, name))
            out.append((name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def irregular_index(gitdir: str) -> bool:
    """Is ``gitdir/index`` or any ``sharedindex.*`` part something other
    than a regular file (a symlink, a FIFO, a device)? A missing index is
    regular enough: git then sees no entries."""
    try:
        names = [n for n in os.listdir(gitdir) if n == "index" or n.startswith("sharedindex.")]
    except OSError:
        return True
    for name in names:
        try:
            if not stat.S_ISREG(os.lstat(os.path.join(gitdir, name)).st_mode):
                return True
        except OSError:
            return True
    return False


def open_below(root: str, parts: list[str]) -> int | None:
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


def _ctime(dir_fd: int, name: str) -> int:
    try:
        return os.lstat(name, dir_fd=dir_fd).st_ctime_ns
    except OSError:
        return 0


def _gitdir_target(top: str, nested: str, dir_fd: int) -> list[str] | None:
    """Where ``nested/.git`` (a ``gitdir:`` file, or a symlink) leads: the
    path's components relative to ``top``, or None when it leads outside
    ``top`` or cannot be read."""
    try:
        st = os.lstat(".git", dir_fd=dir_fd)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(".git", dir_fd=dir_fd)
        else:
            fd = os.open(".git", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dir_fd)
            try:
                first = os.read(fd, 4096).decode("utf-8", "replace").splitlines()[:1]
            finally:
                os.close(fd)
            if not first or not first[0].startswith("gitdir:"):
                return None
            target = first[0][len("gitdir:"):].strip()
    except OSError:
        return None
    rel = os.path.relpath(os.path.normpath(os.path.join(nested, target)), top)
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        return None
    return [] if rel == "." else rel.split("/")


def nested_gitdir(top: str, nested: str) -> str | None:
    """The git directory of the repository at ``nested`` (inside ``top``):
    its ``.git`` directory, or what its ``.git`` file names when that lies
    inside ``top`` and is reached without symlinks; None when there is no
    repository or it cannot be verified."""
    rel = os.path.relpath(nested, top)
    fd = open_below(top, [] if rel == "." else rel.split("/"))
    if fd is None:
        return None
    try:
        try:
            st = os.lstat(".git", dir_fd=fd)
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):
            return os.path.join(nested, ".git")
        parts = _gitdir_target(top, nested, fd)
        if parts is None:
            return None
        gitdir_fd = open_below(top, parts)
        if gitdir_fd is None:
            return None
        os.close(gitdir_fd)
        return os.path.join(top, *parts)
    finally:
        os.close(fd)


def nested_changed(top: str, nested: str, since_ns: int, *, index: bool = False) -> bool:
    """Did the run create or change the repository at ``nested``: its
    ``.git`` entry, or in its git directory what makes git run or obey code
    (:func:`gitdir_touched`) — and, with ``index``, its index? Whatever
    cannot be verified counts as changed (defusing is reversible): a gitdir
    outside the workspace or reached through a symlink, an unreadable
    ``.git`` file."""
    rel = os.path.relpath(nested, top)
    fd = open_below(top, [] if rel == "." else rel.split("/"))
    if fd is None:
        return False  # missing, or reached through a symlink: git will not enter it
    try:
        try:
            st = os.lstat(".git", dir_fd=fd)
        except FileNotFoundError:
            return False  # no repository there: git cannot enter it
        if st.st_ctime_ns >= since_ns:
            return True
        if stat.S_ISDIR(st.st_mode):
            gitdir: int | None = os.open(".git", _DIR_FLAGS, dir_fd=fd)
        else:
            parts = _gitdir_target(top, nested, fd)
            gitdir = open_below(top, parts) if parts is not None else None
        if gitdir is None:
            return True
        try:
            return gitdir_touched(gitdir, since_ns, index=index)
        finally:
            os.close(gitdir)
    except OSError:
        return True
    finally:
        os.close(fd)


#: what is looked at in a git directory: the GITDIR_PARTS, the directories
#: whose every entry counts (a hook rewritten in place leaves ``hooks``
#: alone), and the ones holding other git directories (submodules, linked
#: worktrees), followed down to _MAX_TOUCHED git directories
_ENTRIES_COUNT = ("hooks", "info")
_NESTED_GITDIRS = ("modules", "worktrees")
_MAX_TOUCHED = 32


def gitdir_touched(gitdir_fd: int, since_ns: int, *, index: bool = False) -> bool:
    """Did anything git runs or obeys in the git directory open at
    ``gitdir_fd`` change at or after ``since_ns``: config, config.worktree,
    commondir, hooks and every hook, info and its files, a submodule's or a
    linked worktree's git directory (their own parts, the same way), and
    with ``index`` the index files? A ctime cannot be set back, so a change
    is seen however the content was made to look."""
    budget = [_MAX_TOUCHED]
    return _touched(gitdir_fd, since_ns, index, budget)


def _touched(fd: int, since_ns: int, index: bool, budget: list[int]) -> bool:
    budget[0] -= 1
    if budget[0] < 0:
        return True  # too many to look at: cannot vouch for it
    names = [*GITDIR_PARTS, *_ENTRIES_COUNT, *_NESTED_GITDIRS]
    if index:
        names += [n for n in _listdir(fd) if n.startswith(("index", "sharedindex."))]
    if any(_ctime(fd, name) >= since_ns for name in names):
        return True
    for name in _ENTRIES_COUNT:
        sub = _open_dir(fd, name)
        if sub is not None:
            try:
                if any(_ctime(sub, entry) >= since_ns for entry in _listdir(sub)[:4096]):
                    return True
            finally:
                os.close(sub)
    for name in _NESTED_GITDIRS:
        sub = _open_dir(fd, name)
        if sub is not None:
            try:
                if _nested_touched(sub, since_ns, index, budget, nested=name == "modules"):
                    return True
            finally:
                os.close(sub)
    return False


def _nested_touched(fd: int, since_ns: int, index: bool, budget: list[int], *,
                    nested: bool) -> bool:
    """The git directories below ``fd`` (a submodule's name may hold
    slashes: `modules/a/b`), each looked at like the top one."""
    for name in _listdir(fd)[:4096]:
        sub = _open_dir(fd, name)
        if sub is None:
            continue
        try:
            if _ctime(fd, name) >= since_ns:
                return True
            if _ctime(sub, "HEAD"):
                if _touched(sub, since_ns, index, budget):
                    return True
            elif nested:
                budget[0] -= 1
                if budget[0] < 0 or _nested_touched(sub, since_ns, index, budget, nested=True):
                    return True
        finally:
            os.close(sub)
    return False


def _open_dir(dir_fd: int, name: str) -> int | None:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def _listdir(dir_fd: int) -> list[str]:
    try:
        return os.listdir(dir_fd)
    except OSError:
        return []


def defuse(top: str, nested: str, problems: list[str]) -> list[str]:
    """Rename the nested repository's ``.git`` (directory, file or link)
    aside, inside ``top``, through descriptors: git then sees a plain
    directory — no config, no hooks, and no recursion into gitlinks below."""
    rel = os.path.relpath(nested, top)
    fd = open_below(top, [] if rel == "." else rel.split("/"))
    if fd is None:
        return []  # the directory is gone, or reached only through a symlink
    try:
        if rename_aside(fd, ".git", nested, problems) is not None:
            return [os.path.join(nested, ".git")]
        return []
    finally:
        os.close(fd)


def rename_aside(dir_fd: int, name: str, where: str, problems: list[str]) -> str | None:
    """Rename ``name`` to a free ``name.quarantined-by-shellgate[.N]`` (an
    earlier quarantine is never overwritten, nor does an existing one make
    this one fail); the new name, or None.

    Never what another user owns: the sandboxed command runs as this user
    and cannot give a file away (no capability to chown in the sandbox), so
    another uid's file is not its work, and moving it blames its owner
    (from a review: a run in a shared directory renamed dozens of other
    users' `.git` directories as "planted"). It is named in ``problems``
    instead."""
    try:
        owner = os.lstat(name, dir_fd=dir_fd).st_uid
    except OSError:
        owner = os.geteuid()  # gone, or unreadable: the rename below says
    if owner != os.geteuid():
        problems.append(f"{os.path.join(where, name)} belongs to uid {owner} and changed or "
                        "could not be checked during the run; not moved (shellgate never moves "
                        "another user's files): look at it before running git or a tool there")
        return None
    for target in _aside_names(name):
        try:
            os.lstat(target, dir_fd=dir_fd)
            continue  # taken
        except FileNotFoundError:
            pass
        except OSError:
            continue
        try:
            _rename_in(dir_fd, name, target)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                problems.append(f"cannot quarantine {os.path.join(where, name)}: {exc.strerror}")
            return None
        return target
    problems.append(f"cannot quarantine {os.path.join(where, name)}: no free name beside it")
    return None


def _aside_names(name: str) -> Iterator[str]:
    """The names tried for a quarantined copy: a few counted ones, then
    unguessable ones. Attack (from a review): a command that made the 100
    counted names first left its planted `.claude` in place."""
    for n in range(10):
        yield name + SUFFIX + (f".{n}" if n else "")
    import secrets  # noqa: PLC0415 - only when the counted names are taken

    for _ in range(8):
        yield f"{name}{SUFFIX}.{secrets.token_hex(8)}"


def _rename_in(dir_fd: int, name: str, target: str) -> None:
    """Rename within a directory of this user's that the command may have
    made read-only (`chmod a-w pkg` after planting `pkg/.claude`): write
    permission is given back for the rename, then the mode put back."""
    try:
        os.rename(name, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    except PermissionError:
        st = os.fstat(dir_fd)
        if st.st_uid != os.geteuid():
            raise
    os.fchmod(dir_fd, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)
    try:
        os.rename(name, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    finally:
        os.fchmod(dir_fd, stat.S_IMODE(st.st_mode))


def move_index_aside(top: str, gitdir: str) -> str | None:
    rel = os.path.relpath(gitdir, top)
    fd = open_below(top, rel.split("/"))
    if fd is None:
        return None
    try:
        moved = rename_aside(fd, "index", gitdir, [])
        return os.path.join(gitdir, moved) if moved is not None else None
    finally:
        os.close(fd)


def move_below(roots: Sequence[str], path: str, problems: list[str] | None = None, *,
               unreachable: str = "") -> str | None:
    """Rename ``path`` aside through directory descriptors below the
    writable root holding it (never through a link); its new path, or None
    (a line in ``problems`` says why, ``unreachable`` naming the path's
    state when its directory cannot be reached)."""
    problems = [] if problems is None else problems
    root = next((r for r in roots if path.startswith(r.rstrip("/") + "/")), None)
    if root is None:
        return None
    parent, name = os.path.split(path)
    rel = os.path.relpath(parent, root)
    fd = open_below(root, [] if rel == "." else rel.split("/"))
    if fd is None:
        if unreachable:
            problems.append(f"{path} {unreachable} and cannot be renamed aside; look there "
                            "before running git")
        return None
    try:
        kept = rename_aside(fd, name, parent, problems)
    finally:
        os.close(fd)
    return os.path.join(parent, kept) if kept is not None else None
