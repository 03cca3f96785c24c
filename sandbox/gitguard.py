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
* after, if the stamp changed: git lists the gitlinks again. A gitlink that
  is new, or whose nested repository (``.git``, its ``config``, ``hooks``,
  ``config.worktree``, ``commondir``, or the gitdir a ``.git`` file names)
  changed during the run (ctime at or after the start: a ctime cannot be
  set back), has that repository's config and hooks renamed with the
  ``.quarantined-by-shellgate`` suffix — reversible, and reported.

Reproducer (held by this module)::

    shellgate run -- sh -c 'mkdir sub && cd sub && git init -q &&
      git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x &&
      git config core.fsmonitor "touch /tmp/PWNED" && cd .. &&
      git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub'
    git status   # on the host: no /tmp/PWNED

The index is hostile input, and this step must never be turned against the
host: it acts only through directory descriptors below the workspace (a
gitlink named ``/abs``, ``../x`` or through a symlink is refused); when git
cannot list the index in time (a FIFO, a link to ``/dev/zero``), the index
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
_MAX_DEFUSE = 1000

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
        stamp = index_stamp(repo.root)
        if stamp == repo.stamp:
            return
        links = self._list(repo.root, timeout=30.0)
        if links is None:
            return  # moved aside: no gitlink is left for git to follow
        before = repo.before if repo.before is not None else frozenset()
        candidates = sorted(links)
        if len(candidates) > _MAX_DEFUSE:
            self.problems.append(f"{repo.root}/.git/index: {len(candidates)} gitlinks; the "
                                 f"first {_MAX_DEFUSE} were checked")
        for link in candidates[:_MAX_DEFUSE]:
            if not safe_link_name(link):
                self.problems.append(f"{repo.root}/.git/index: refused gitlink name {link!r}")
                continue
            if link not in before or _nested_changed(repo.root, link, self.started_ns):
                self.defused += _defuse(repo.root, link, self.problems)
        updates[repo.root] = (index_stamp(repo.root), links)

    def _list(self, root: str, timeout: float) -> frozenset[str] | None:
        """git's view of the gitlinks; None after moving an index git could
        not read in time aside (fail closed). An index that is no regular
        file (a FIFO, a device, through a symlink too) would only make git
        wait: it is moved aside at once."""
        try:
            kind = os.stat(os.path.join(root, ".git", "index")).st_mode
        except OSError:
            kind = stat.S_IFREG  # absent, or a dangling link: git reads no entries
        if not stat.S_ISREG(kind):
            self._aside(root, "the index is not a regular file")
            return None
        found = enumerate_gitlinks(root, home=self.home, backend=self.backend, timeout=timeout)
        if found.links is not None:
            if found.problem:
                self.problems.append(f"{root}/.git/index: {found.problem}")
            return found.links
        self._aside(root, found.problem)
        return None

    def _aside(self, root: str, why: str) -> None:
        moved = _move_index_aside(root)
        self.problems.append(
            f"{root}/.git/index: {why}; "
            + (f"moved aside to {moved} (after checking the repository, move it back)"
               if moved else "and it could not be moved aside")
        )


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
    """For a ``.git`` file (``gitdir: PATH``): PATH's components relative to
    ``root``, or None when it leads outside it (then it is not ours to act on:
    the run could not have written there)."""
    try:
        fd = os.open(".git", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError:
        return None
    try:
        first = os.read(fd, 4096).decode("utf-8", "replace").splitlines()[:1]
    except OSError:
        return None
    finally:
        os.close(fd)
    if not first or not first[0].startswith("gitdir:"):
        return None
    target = os.path.normpath(os.path.join(root, link, first[0][len("gitdir:"):].strip()))
    rel = os.path.relpath(target, root)
    if rel.startswith("..") or os.path.isabs(rel):
        return None
    return rel.split("/")


def _nested_changed(root: str, link: str, since_ns: int) -> bool:
    """Did the run create or change the nested repository at ``link``?"""
    fd = _open_below(root, link.split("/"))
    if fd is None:
        return False
    try:
        if _ctime(fd, ".git") >= since_ns:
            return True
        if _is_dir_at(fd, ".git"):
            gitdir: int | None = os.open(".git", _DIR_FLAGS, dir_fd=fd)
        else:
            parts = _gitdir_of(root, link, fd)
            gitdir = _open_below(root, parts) if parts is not None else None
        if gitdir is None:
            return False
        try:
            return any(_ctime(gitdir, part) >= since_ns for part in _GITDIR_PARTS)
        finally:
            os.close(gitdir)
    except OSError:
        return True  # cannot tell: treat as changed (defusing is reversible)
    finally:
        os.close(fd)


def _is_dir_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


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
            if _rename(fd, ".git", where, problems):
                out.append(os.path.join(where, ".git"))
            return out
        gitdir = os.open(".git", _DIR_FLAGS, dir_fd=fd)
        try:
            for name in _GITDIR_PARTS:
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


def _move_index_aside(root: str) -> str | None:
    fd = _open_below(root, [".git"])
    if fd is None:
        return None
    try:
        if _rename(fd, "index", os.path.join(root, ".git"), []):
            return os.path.join(root, ".git", "index" + SUFFIX)
        return None
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
