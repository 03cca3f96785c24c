"""Around a run: defuse nested repositories planted behind gitlinks.

A command can create ``sub/.git`` with its own ``core.fsmonitor`` and
register ``sub`` as a gitlink in the (writable) index; the user's next
``git status`` on the host recurses into it — and into the gitlinks of
*its* index, and so on — and runs the planted program. Mounts cannot tell
such a repository from a legitimate submodule, so it is caught around the
run, over the whole tree of repositories git would recurse into:

* before: for each repository at the top of a writable root, and below it
  each repository behind a gitlink (up to :data:`MAX_DEPTH` levels,
  :data:`MAX_REPOS` in all), the index files are stamped (``index``,
  ``index.*``, ``sharedindex.*``: inode, size, mtime, ctime) and the
  gitlinks git sees there are taken from a per-user cache keyed by the
  stamp or, when the index changed outside shellgate since, from git
  itself (:mod:`sandbox.gitlinks`);
* after: the same tree again. Where a stamp changed, git lists the gitlinks
  anew. A gitlink that is new, or whose repository changed during the run
  (its ``.git``, or in its git directory the config, config.worktree,
  commondir, a hook, ``info``, a submodule's or linked worktree's git
  directory got a ctime at or after the start: a ctime cannot be set
  back), or that cannot be verified (a gitdir outside the workspace; beyond
  the depth or count limit, one whose index changed too), has that
  repository's ``.git`` renamed with the
  ``.quarantined-by-shellgate`` suffix (never over an earlier quarantine):
  git then sees a plain directory, with no config, hooks or gitlinks below
  — reversible, and reported. Every gitlink is checked after every run,
  changed index or not: a run can plant the repository behind a gitlink
  registered in an earlier run, or change a submodule's config in
  ``.git/modules`` without touching any index.

Reproducer (held by this module)::

    shellgate run -- sh -c 'mkdir sub && cd sub && git init -q &&
      git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x &&
      git config core.fsmonitor "touch /tmp/PWNED" && cd .. &&
      git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub'
    git status   # on the host: no /tmp/PWNED

The index is hostile input, and this step must never be turned against the
host: it acts only through directory descriptors below the workspace
(:mod:`sandbox.gitpaths`; a gitlink named ``/abs`` or ``../x`` is refused
and reported, one through a symlink is left, as git will not enter it
either); when an index is not a regular file (a symlink, a FIFO) or git
gives no list for it (a timeout, a refusal — the sandboxed git has no
capabilities, the user's may), that index is renamed aside — fail closed —
so the user's git sees no gitlinks there until the user puts it back;
nothing here raises.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path

from regexes import regex
from values import field, valueclass

from .cleanup import prune_caches
from .gitlinks import enumerate_gitlinks
from .gitpaths import (
    SUFFIX,
    Stamp,
    defuse,
    index_stamp,
    irregular_index,
    is_real_dir,
    move_index_aside,
    nested_changed,
    nested_gitdir,
    safe_link_name,
)
from .hashing import hex_digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .runner import Backend

__all__ = ["SUFFIX", "GitGuard", "GuardReport", "safe_link_name"]

#: Linux stamps a file's ctime from CLOCK_REALTIME_COARSE (the fine clock
#: only when the multigrain timestamps of 6.13+ ask for it, never earlier than
#: the coarse one), which lags time.time_ns() by up to a tick; Python 3.11
#: does not name it (5 in <linux/time.h>)
_CLOCK_REALTIME_COARSE = 5
#: elsewhere: time.time_ns() less this much
_CLOCK_SLACK_NS = 50_000_000


def _run_start_ns() -> int:
    """The time from which a change counts as made during the run. On Linux
    the coarse clock the file times come from: nothing changed after this
    carries an earlier ctime, and what changed before it is not taken for
    the run's. Reproducer of the slack it replaces: with a 50 ms slack,
    `mkdir -p pkg/.claude && touch pkg/.claude/settings.json && shellgate
    run -- true` (a cold start under 50 ms) renamed the user's own
    settings aside as made during the run."""
    if sys.platform == "linux":
        try:
            return time.clock_gettime_ns(_CLOCK_REALTIME_COARSE)
        except OSError:
            pass
    return time.time_ns() - _CLOCK_SLACK_NS
#: how deep below the top repository nested ones are followed, and how many
MAX_DEPTH = 4
MAX_REPOS = 256


@valueclass
class Repo:
    """One repository of the tree: its work tree, its git directory, the
    stamp of its index and the gitlinks git saw in it."""

    worktree: str
    gitdir: str
    stamp: Stamp
    links: frozenset[str]


@valueclass
class GuardReport:
    """What the post-run step did: the paths it renamed, and the problems
    it met, one line each."""

    defused: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@valueclass(frozen=False, slots=False)
class GitGuard:
    """The tree of repositories in the writable roots, before the run."""

    home: str
    backend: Backend | None
    cache: Path | None
    started_ns: int = 0
    #: (writable root, work tree) of every repository with its own `.git`
    tops: list[tuple[str, str]] = field(default_factory=list)
    before_map: dict[str, Repo] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    defused: list[str] = field(default_factory=list)
    #: unchanged repositories beyond the limits, not followed further
    beyond: list[str] = field(default_factory=list)
    _updates: dict[str, tuple[Stamp, frozenset[str]]] = field(default_factory=dict)

    @property
    def seen_worktrees(self) -> set[str]:
        return set(self.before_map)

    def before(self, roots: tuple[str, ...], worktrees: tuple[str, ...] = ()) -> None:
        """Stamp the repositories at ``worktrees`` (each inside one of
        ``roots``; a root with a `.git` of its own counts too)."""
        self.started_ns = _run_start_ns()
        for worktree in dict.fromkeys([*roots, *worktrees]):
            root = next((r for r in roots if worktree == r
                         or worktree.startswith(r.rstrip("/") + "/")), None)
            if root is not None and is_real_dir(os.path.join(worktree, ".git")):
                self.tops.append((root, worktree))
        for root, worktree in self.tops:
            if worktree not in self.before_map:
                self._visit(root, worktree, os.path.join(worktree, ".git"), 0)

    def after(self) -> GuardReport:
        for root, worktree in self.tops:
            if not is_real_dir(os.path.join(worktree, ".git")):
                continue  # defused as a gitlink of another repository
            try:
                self._check(root, worktree, os.path.join(worktree, ".git"), 0)
            except Exception as exc:  # hostile input must not crash the post-run step
                self.problems.append(f"{worktree}/.git: gitlink check failed: {exc}")
        if self._updates:
            _save_cache(self.cache, self._updates)
        if self.beyond:
            self.problems.append(
                f"{len(self.beyond)} nested repositories (such as {self.beyond[0]}) lie beyond "
                f"the {MAX_REPOS} repositories or {MAX_DEPTH} levels checked around a run; they "
                "are unchanged, but repositories behind their own gitlinks were not checked")
        return GuardReport(tuple(self.defused), tuple(self.problems))

    # -- the walks --------------------------------------------------------------------

    def _visit(self, top: str, worktree: str, gitdir: str, depth: int) -> None:
        """Record ``worktree`` and, below it, the repositories behind its
        gitlinks as they are before the run."""
        if len(self.before_map) >= MAX_REPOS:
            return
        stamp = index_stamp(gitdir)
        entry = _load_entry(self.cache, worktree)
        if entry is not None and entry[0] == stamp:
            links = entry[1]
        else:
            listed = self._list(top, worktree, gitdir, timeout=10.0)
            links = listed if listed is not None else frozenset()
            stamp = index_stamp(gitdir)
            self._updates[worktree] = (stamp, links)
        self.before_map[worktree] = Repo(worktree, gitdir, stamp, links)
        if depth >= MAX_DEPTH:
            return
        for link in sorted(links):
            if safe_link_name(link):
                nested = os.path.join(worktree, link)
                below = nested_gitdir(top, nested)
                if below is not None:
                    self._visit(top, nested, below, depth + 1)

    def _check(self, top: str, worktree: str, gitdir: str, depth: int) -> None:
        """Defuse what the run planted in ``worktree``'s gitlinks; recurse
        into the repositories it left alone."""
        prior = self.before_map.get(worktree)
        stamp = index_stamp(gitdir)
        if prior is None or stamp != prior.stamp:
            listed = self._list(top, worktree, gitdir, timeout=30.0)
            if listed is None:
                return  # moved aside: no gitlink is left for git to follow
            links = listed
            self._updates[worktree] = (index_stamp(gitdir), links)
        else:
            links = prior.links
        before = prior.links if prior is not None else frozenset()
        for link in sorted(links):
            if not safe_link_name(link):
                self.problems.append(f"{gitdir}/index: refused gitlink name {link!r}")
                continue
            nested = os.path.join(worktree, link)
            below = nested_gitdir(top, nested)
            if link not in before or nested_changed(top, nested, self.started_ns):
                # new or changed: nothing vouches for it
                self.defused += defuse(top, nested, self.problems)
            elif below is None:
                continue
            elif nested not in self.before_map or depth + 1 > MAX_DEPTH:
                # Beyond what was looked at before the run (deeper than
                # MAX_DEPTH, or past MAX_REPOS): a repository the run did not
                # touch, its index included, stays; what lies behind its own
                # gitlinks is not followed, and that is said.
                if nested_changed(top, nested, self.started_ns, index=True):
                    self.defused += defuse(top, nested, self.problems)
                else:
                    self.beyond.append(nested)
            else:
                self._check(top, nested, below, depth + 1)

    def _list(self, top: str, worktree: str, gitdir: str, timeout: float) -> frozenset[str] | None:
        """git's view of the gitlinks; None after moving an index aside that
        git could not be trusted to read as the user's git will (fail
        closed): one that is no regular file (a symlink — the sandboxed git
        may not see what it points to — a FIFO, a device), or any answer of
        git but a list (a timeout, an index it refuses: the sandboxed git
        has no capabilities, the user's may read more)."""
        if not os.path.lexists(os.path.join(gitdir, "index")):
            return frozenset()  # no index: git sees no gitlink
        if irregular_index(gitdir):
            self._aside(top, gitdir, "the index (or a split index part) is not a regular file")
            return None
        found = enumerate_gitlinks(worktree, top=top, home=self.home, backend=self.backend,
                                   timeout=timeout)
        if found.links is None or found.problem:
            self._aside(top, gitdir, found.problem or "git gave no answer")
            return None
        return found.links

    def _aside(self, top: str, gitdir: str, why: str) -> None:
        moved = move_index_aside(top, gitdir)
        self.problems.append(
            f"{gitdir}/index: {why}; "
            + (f"moved aside to {moved} (after checking the repository, move it back)"
               if moved else "and it could not be moved aside")
        )


# -- the per-user cache: the gitlinks git saw, keyed by the index stamp ---------
#
# One small file per work tree (named by a hash of its path) in the private
# runtime directory: a run reads only the entries of its own repositories.


_ENTRY_NAME = regex(r"[0-9a-f]{24}\.json")


def _entry_path(cache: Path, worktree: str) -> Path:
    return cache / (hex_digest(worktree.encode())[:24] + ".json")


def _load_entry(cache: Path | None, worktree: str) -> tuple[Stamp, frozenset[str]] | None:
    if cache is None:
        return None
    try:
        entry = json.loads(_entry_path(cache, worktree).read_text("utf-8"))
        if entry["worktree"] != worktree:
            return None
        return (tuple(tuple(s) for s in entry["stamp"]),
                frozenset(str(x) for x in entry["links"]))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _save_cache(cache: Path | None, updates: dict[str, tuple[Stamp, frozenset[str]]]) -> None:
    if cache is None:
        return
    with contextlib.suppress(OSError):
        cache.mkdir(mode=0o700, exist_ok=True)
    for worktree, (stamp, links) in updates.items():
        target = _entry_path(cache, worktree)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        data = {"worktree": worktree, "stamp": list(stamp), "links": sorted(links)}
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(data), "utf-8")
            os.replace(tmp, target)
    if updates:
        prune_caches(str(cache), _ENTRY_NAME)
