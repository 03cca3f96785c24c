"""The git repositories in the writable roots, and what in them runs code.

Found at plan time by a bounded, cached walk (:mod:`sandbox.walk`) of each
writable root: every directory holding a ``.git`` (directory, file or link)
down to :data:`MAX_DEPTH` levels, dependency and cache trees skipped — so
``--cwd ~/work`` protects every repository below it, not only one at the
top. What the walk did not reach in its budget is returned too: the plan
makes it read-only for the run (fail closed), and the next run carries on.

For each repository, :mod:`sandbox.gitconfig` finds its git directories and
the paths its configuration makes git run or read, by parsing the files,
never by running git with the repository's configuration.
"""

from __future__ import annotations

import os
import stat

from values import valueclass

from .gitconfig import resolve_gitdir
from .hashing import hex_digest
from .walk import WalkSpec, recorded, walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

#: how deep below a writable root repositories are looked for
MAX_DEPTH = 4
#: trees that hold dependencies or build output, not the user's repositories
SKIP_DIRS = frozenset(
    {
        "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", ".cache", "target", ".gradle", ".next", ".nuxt",
        "site-packages", ".terraform",
    }
)
def _repo_marker(name: str) -> bool:
    """``.git`` (a work tree's), or ``HEAD`` (maybe a bare git directory's)."""
    return name in (".git", "HEAD")


#: agents' settings directories, obeyed by a session started below them
AGENT_DIRS = frozenset({".claude", ".shellgate"})
#: other version control systems' own directories and checkout files,
#: obeyed by the tool run anywhere below them: Mercurial's `.hg/hgrc`
#: hooks, darcs's prefs, Breezy's `branch.conf`, Fossil's checkout
#: database naming the repository whose hooks run, jj's and Sapling's
#: repository configuration (profiles/host-run-files.toml blocks them at
#: the tops; these are the ones below)
VCS_MARKS = frozenset({".hg", "_darcs", ".bzr", ".jj", ".sl", ".fslckout", "_FOSSIL_", ".fos"})
#: what a tool started below obeys, recorded by the search after a run
OBEYED = AGENT_DIRS | VCS_MARKS


def _deep_marker(name: str) -> bool:
    """What the search after the run records: a repository's marks, an
    agent's settings directory and another version control system's
    directory by name — as a link or a file too (a link named `.claude`
    would carry a session's settings elsewhere)."""
    return _repo_marker(name) or name in OBEYED


REPO_SPEC = WalkSpec(
    name="repos",
    match_file=_repo_marker,
    match_dirs=frozenset({".git"}),
    skip_dirs=SKIP_DIRS,
    max_depth=MAX_DEPTH,
    # `target/.git`, `.venv/.git`: a repository may carry a skipped name;
    # its `.git` is found, what is below it is not walked
    peek_skipped=True,
    budget_s=0.02,
    revalidate_budget_s=0.05,
)
#: The search after the run: every depth, dependency trees included. A
#: repository planted in an existing directory deeper than the plan's search
#: goes (`src/main/java/com/acme/.git`, `node_modules/left-pad/.git`, from a
#: review) is invisible to `git status` at the top, and obeyed by git run
#: inside it — or by an editor opening a file there. Only a changed
#: directory's ctime moves, not its parents', so every directory is
#: re-checked (one lstat each, from the cache); only the changed ones are
#: listed again.
_CACHES = frozenset({".cache", ".npm", ".pnpm-store", ".rustup", ".gradle", ".m2"})
DEEP_SPEC = WalkSpec(
    name="repos-deep-4",  # 4: the caches passed over are noted
    match_file=_deep_marker,
    match_dirs=frozenset({".git"}) | OBEYED,
    # package and build caches nobody runs git in (the home's, mostly: a
    # writable home would otherwise cost a stat of every cached file's
    # directory on every run); noted, for what is looked for in them alone
    # (sandbox.unseen.made_below)
    skip_dirs=_CACHES,
    note_dirs=_CACHES,
    max_depth=64,
    budget_s=5.0,
    revalidate_budget_s=5.0,
)


@valueclass
class Repo:
    """A work tree and its git directory (None when its ``.git`` file or
    link leads somewhere that cannot be read)."""

    worktree: str
    gitdir: str | None


@valueclass
class RepoScan:
    repos: tuple[Repo, ...]
    #: directories the walk did not reach or could not list: unknown
    unscanned: tuple[str, ...]
    #: known directories not re-checked in time (a repository created in
    #: one since the last run is not in ``repos``)
    unchecked: tuple[str, ...] = ()
    #: directories listed by this walk: new, or changed since the last
    changed: tuple[str, ...] = ()
    #: bare git directories (HEAD beside objects and refs, any name): git
    #: takes one for a repository from any directory below it
    bare: tuple[str, ...] = ()
    #: what a tool started below obeys (:data:`OBEYED`: `.claude`, `.hg`,
    #: `.fslckout` …) at any depth (the deep search only)
    agent_dirs: tuple[str, ...] = ()
    #: the package caches the deep search passed over
    caches: tuple[str, ...] = ()


def find_repos(
    roots: list[str],
    cache: Path | None,
    *,
    budget: float | None = None,
    revalidate_budget: float | None = None,
    deep: bool = False,
) -> RepoScan:
    """Every repository in ``roots`` (a root itself included). A `.git`
    directory without ``HEAD`` is no repository (git would not take it for
    one): an empty directory a tool made, say."""
    result = walk(DEEP_SPEC if deep else REPO_SPEC, roots, cache, budget=budget,
                  revalidate_budget=revalidate_budget)
    worktrees = sorted({os.path.dirname(path) for path in result.found
                        if os.path.basename(path) == ".git"
                        and _is_repository(path)})
    bare = sorted({os.path.dirname(path) for path in result.found
                   if os.path.basename(path) == "HEAD"
                   and is_bare_gitdir(os.path.dirname(path))})
    repos = tuple(Repo(w, resolve_gitdir(w)) for w in worktrees)
    agents = sorted(p for p in result.found
                    if os.path.basename(p) in OBEYED) if deep else []
    caches = sorted(p for p in result.found
                    if os.path.basename(p) in _CACHES and os.path.isdir(p)) if deep else []
    return RepoScan(repos, (*result.unscanned, *result.unlistable), result.unchecked,
                    result.changed, tuple(bare), tuple(agents), tuple(caches))


def is_bare_gitdir(path: str) -> bool:
    """Does git take ``path`` for a git directory (HEAD, objects/ and refs/,
    as its ``is_git_directory`` asks), whatever its name? Not a work tree's
    own ``.git`` (found as such)."""
    if os.path.basename(path) == ".git":
        return False
    try:
        head = os.lstat(os.path.join(path, "HEAD"))
        return (not stat.S_ISDIR(head.st_mode)
                and all(os.path.isdir(os.path.join(path, d)) and
                        not os.path.islink(os.path.join(path, d)) for d in ("objects", "refs")))
    except OSError:
        return False


def _is_repository(dotgit: str) -> bool:
    try:
        if stat.S_ISDIR(os.lstat(dotgit).st_mode):
            return os.path.lexists(os.path.join(dotgit, "HEAD"))
    except OSError:
        return False
    return True  # a gitdir file or a link: resolved (or refused) by resolve_gitdir


def deep_cache(state_dir: Path, roots: list[str] | tuple[str, ...]) -> Path:
    """Where the search after a run keeps its state for ``roots``."""
    return state_dir / f"repos-deep-{hex_digest(chr(0).join(roots).encode())[:16]}.json"


def known_agent_dirs(roots: list[str], cache: Path | None) -> frozenset[str]:
    """What a tool started below obeys (:data:`OBEYED`) that the last
    search after a run found in ``roots`` (read from its cache: nothing is
    listed)."""
    return frozenset(p for p in recorded(DEEP_SPEC, roots, cache)
                     if os.path.basename(p) in OBEYED)
