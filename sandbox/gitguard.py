"""Around a run: defuse nested repositories planted as gitlinks.

A command can create ``sub/.git`` with its own ``core.fsmonitor`` and
register ``sub`` as a gitlink in the (writable) index; the user's next
``git status`` on the host recurses into it and runs the planted program.
Mounts cannot tell such a repository from a legitimate submodule, so it is
caught around the run:

* before: the index's files are stamped (``.git/index``, ``index*``,
  ``sharedindex.*``: inode, size, mtime, ctime); the gitlinks git sees in
  that index come from a per-user cache keyed by the stamp, or, when the
  index changed outside shellgate since, from git itself
  (:mod:`sandbox.gitlinks`);
* after: if the stamp changed, git lists the gitlinks again. Every
  gitlink — changed index or not — that is new, or whose nested repository
  (``.git``, its ``config``, ``hooks``, ``config.worktree``, ``commondir``,
  or the gitdir a ``.git`` file or link names) changed during the run (ctime
  at or after the start: a ctime cannot be set back), or that cannot be
  verified (a gitdir outside the workspace), has that repository's config
  and hooks renamed with the ``.quarantined-by-shellgate`` suffix (never
  over an earlier quarantine) — reversible, and reported.

Reproducer (held by this module)::

    shellgate run -- sh -c 'mkdir sub && cd sub && git init -q &&
      git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x &&
      git config core.fsmonitor "touch /tmp/PWNED" && cd .. &&
      git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub'
    git status   # on the host: no /tmp/PWNED

The index is hostile input, and this step must never be turned against the
host: it acts only through directory descriptors below the workspace (a
gitlink named ``/abs`` or ``../x`` is refused and reported; one through a
symlink is left, as git will not enter it either); when the index is not a
regular file (a symlink, a FIFO) or git gives no list for it (a timeout, a
refusal — the sandboxed git has no capabilities, the user's may), the index
itself is renamed aside — fail closed — so the user's git sees no gitlinks
until the user puts it back; nothing here raises.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .gitlinks import enumerate_gitlinks

if TYPE_CHECKING:
    from .run import Backend

SUFFIX = ".quarantined-by-shellgate"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: ctime is taken from a coarse clock: a change right at the start may be
#: stamped a tick earlier than time.time_ns() said
_CLOCK_SLACK_NS = 50_000_000
#: what inside a nested repository's git directory makes it run or obey code
_GITDIR_PARTS = ("config", "hooks", "config.worktree", "commondir")

Stamp = tuple[tuple[str, int, int, int, int], ...]


@dataclass
class RepoGuard:
    """One repository at the top of a writable root."""

    root: str
    stamp: Stamp
    before: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class GuardReport:
    """What the post-run step did: the paths it renamed, and the problems
    it met, one line each."""

    defused: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass
class GitGuard:
    """The pre-run state of every repository at the top of a writable root."""

    home: str
    backend: Backend | None
    cache: Path | None
    started_ns: int = 0
    repos: list[RepoGuard] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    defused: list[str] = field(default_factory=list)

    def before(self, roots: tuple[str, ...]) -> None:
        self.started_ns = time.time_ns() - _CLOCK_SLACK_NS
        cached: dict[str, tuple[Stamp, frozenset[str]]] | None = None
        for root in roots:
            if not _is_real_dir(os.path.join(root, ".git")):
                continue
            if cached is None:
                cached = _load_cache(self.cache)
            stamp = index_stamp(root)
            entry = cached.get(root)
            if entry is not None and entry[0] == stamp:
                self.repos.append(RepoGuard(root, stamp, entry[1]))
                continue
            listed = self._list(root, timeout=10.0)
            if listed is None:
                stamp = index_stamp(root)  # the index was moved aside
                listed = frozenset()
            self.repos.append(RepoGuard(root, stamp, listed))

    def after(self) -> GuardReport:
        updates: dict[str, tuple[Stamp, frozenset[str]]] = {}
        for repo in self.repos:
            try:
                self._after_one(repo, updates)
            except Exception as exc:  # hostile input must not crash the post-run step
                self.problems.append(f"{repo.root}/.git: gitlink check failed: {exc}")
        if updates:
            _save_cache(self.cache, updates)
        return GuardReport(tuple(self.defused), tuple(self.problems))

    def _after_one(self, repo: RepoGuard, updates: dict[str, tuple[Stamp, frozenset[str]]]) -> None:
        """Every gitlink is checked, whether the index changed or not: a run
        can plant the repository behind a gitlink registered earlier (two
        runs), or change an existing submodule's config through its gitdir
        in `.git/modules`, without touching the index at all."""
        stamp = index_stamp(repo.root)
        changed = stamp != repo.stamp
        before = repo.before if repo.before is not None else frozenset()
        if changed:
            listed = self._list(repo.root, timeout=30.0)
            if listed is None:
                return  # moved aside: no gitlink is left for git to follow
            links = listed
        else:
            links = before
        for link in sorted(links):
            if not safe_link_name(link):
                self.problems.append(f"{repo.root}/.git/index: refused gitlink name {link!r}")
                continue
            if link not in before or _nested_changed(repo.root, link, self.started_ns):
                self.defused += _defuse(repo.root, link, self.problems)
        if changed:
            updates[repo.root] = (index_stamp(repo.root), links)

    def _list(self, root: str, timeout: float) -> frozenset[str] | None:
        """git's view of the gitlinks; None after moving an index aside that
        git could not be trusted to read as the user's git will (fail
        closed): one that is no regular file (a symlink — the sandboxed git
        may not see what it points to — a FIFO, a device), or any answer of
        git but a list (a timeout, an index it refuses: the sandboxed git
        has no capabilities, the user's may read more)."""
        gitdir = os.path.join(root, ".git")
        try:
            index = os.lstat(os.path.join(gitdir, "index"))
        except FileNotFoundError:
            return frozenset()  # no index: git sees no gitlink
        except OSError as exc:
            self._aside(root, f"the index cannot be examined ({exc.strerror})")
            return None
        if not stat.S_ISREG(index.st_mode) or _irregular_shared_index(gitdir):
            self._aside(root, "the index (or a split index part) is not a regular file")
            return None
        found = enumerate_gitlinks(root, home=self.home, backend=self.backend, timeout=timeout)
        if found.links is None or found.problem:
            self._aside(root, found.problem or "git gave no answer")
            return None
        return found.links

    def _aside(self, root: str, why: str) -> None:
        moved = _move_index_aside(root)
        self.problems.append(
            f"{root}/.git/index: {why}; "
            + (f"moved aside to {moved} (after checking the repository, move it back)"
               if moved else "and it could not be moved aside")
        )


def _irregular_shared_index(gitdir: str) -> bool:
    try:
        names = [n for n in os.listdir(gitdir) if n.startswith("sharedindex.")]
    except OSError:
        return True
    for name in names:
        try:
            if not stat.S_ISREG(os.lstat(os.path.join(gitdir, name)).st_mode):
                return True
        except OSError:
            return True
    return False


def index_stamp(root: str) -> Stamp:
    """Inode, size, mtime and ctime of every index file of ``root/.git``
    (``index``, ``index.*``, ``sharedindex.*``), without following links."""
    gitdir = os.path.join(root, ".git")
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


def safe_link_name(name: str) -> bool:
    """A gitlink name git itself would accept for a path inside the tree:
    relative, no empty, ``.``, ``..`` or ``.git`` component, no NUL."""
    if not name or name.startswith("/") or "\0" in name:
        return False
    parts = name.split("/")
    return all(p and p not in (".", "..") and p.lower() != ".git" for p in parts)


def _is_real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


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


def _ctime(dir_fd: int, name: str) -> int:
    try:
        return os.lstat(name, dir_fd=dir_fd).st_ctime_ns
    except OSError:
        return 0


def _gitdir_of(root: str, link: str, dir_fd: int) -> list[str] | None:
    """Where the nested ``.git`` (a ``gitdir:`` file, or a symlink) leads:
    the path's components relative to ``root``, or None when it leads
    outside ``root`` or cannot be read."""
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
    resolved = os.path.normpath(os.path.join(root, link, target))
    rel = os.path.relpath(resolved, root)
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        return None
    return rel.split("/")


def _nested_changed(root: str, link: str, since_ns: int) -> bool:
    """Did the run create or change the nested repository at ``link``?
    Whatever cannot be verified counts as changed (defusing is reversible):
    a gitdir outside the workspace or reached through a symlink, an
    unreadable `.git` file."""
    fd = _open_below(root, link.split("/"))
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
            parts = _gitdir_of(root, link, fd)
            gitdir = _open_below(root, parts) if parts is not None else None
        if gitdir is None:
            return True
        try:
            return any(_ctime(gitdir, part) >= since_ns for part in _GITDIR_PARTS)
        finally:
            os.close(gitdir)
    except OSError:
        return True
    finally:
        os.close(fd)


def _defuse(root: str, link: str, problems: list[str]) -> list[str]:
    """Rename the nested repository's config and hooks (or its ``.git``
    file or link), all inside ``root``, all through descriptors."""
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
        if not stat.S_ISDIR(st.st_mode):
            # a .git file or link: renaming it (inside the workspace) stops git
            if _rename(fd, ".git", where, problems) is not None:
                out.append(os.path.join(where, ".git"))
            return out
        gitdir = os.open(".git", _DIR_FLAGS, dir_fd=fd)
        try:
            for name in _GITDIR_PARTS:
                with contextlib.suppress(FileNotFoundError):
                    os.lstat(name, dir_fd=gitdir)
                    if _rename(gitdir, name, os.path.join(where, ".git"), problems) is not None:
                        out.append(os.path.join(where, ".git", name))
        finally:
            os.close(gitdir)
    finally:
        os.close(fd)
    return out


def _rename(dir_fd: int, name: str, where: str, problems: list[str]) -> str | None:
    """Rename ``name`` to a free ``name.quarantined-by-shellgate[.N]`` (an
    earlier quarantine is never overwritten, nor does an existing one make
    this one fail); the new name, or None."""
    for n in range(100):
        target = name + SUFFIX + (f".{n}" if n else "")
        try:
            os.lstat(target, dir_fd=dir_fd)
            continue  # taken
        except FileNotFoundError:
            pass
        except OSError:
            continue
        try:
            os.rename(name, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                problems.append(f"cannot quarantine {os.path.join(where, name)}: {exc.strerror}")
            return None
        return target
    problems.append(f"cannot quarantine {os.path.join(where, name)}: too many quarantined copies")
    return None


def _move_index_aside(root: str) -> str | None:
    fd = _open_below(root, [".git"])
    if fd is None:
        return None
    try:
        moved = _rename(fd, "index", os.path.join(root, ".git"), [])
        return os.path.join(root, ".git", moved) if moved is not None else None
    finally:
        os.close(fd)


# -- the per-user cache: the gitlinks git saw, keyed by the index stamp ---------


def _load_cache(cache: Path | None) -> dict[str, tuple[Stamp, frozenset[str]]]:
    if cache is None:
        return {}
    try:
        data = json.loads(cache.read_text("utf-8"))
        return {
            str(root): (tuple(tuple(s) for s in entry["stamp"]),
                        frozenset(str(x) for x in entry["links"]))
            for root, entry in data.items()
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def _save_cache(cache: Path | None, updates: dict[str, tuple[Stamp, frozenset[str]]]) -> None:
    if cache is None:
        return
    data = {root: {"stamp": list(stamp), "links": sorted(links)}
            for root, (stamp, links) in {**_load_cache(cache), **updates}.items()}
    if len(data) > 500:  # keep the most recent ones
        data = dict(list(data.items())[-500:])
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps(data), "utf-8")
        os.replace(tmp, cache)
