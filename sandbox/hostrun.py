"""Files the host runs or obeys by itself: the table, and the concrete paths
it names for one run.

The table is data (``profiles/host-run-files.toml``): each entry a path
pattern, a scope (inside every git directory, at the top of every
repository and writable root, or in the home directory), a protection
(``block``: a read-only mount while the command runs; ``tripwire``: undone
and reported after it; ``report``: reported) and the reason. This module
turns it into paths: for every repository found in the writable roots
(:mod:`sandbox.repos`), each of its git directories, the targets its
configuration names (``core.hooksPath``, includes), its work tree; every
writable root; the home directory when a writable root holds it.
"""

from __future__ import annotations

import contextlib
import functools
import os

import profiles as profile_data
from values import field, valueclass

from .errors import PolicyError
from .gitconfig import config_targets, repository_gitdirs
from .repos import Repo
from .venvwatch import PTH

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time (a tenth of a cold start)
    from typing import Literal

    Protection = Literal["block", "tripwire", "report"]
    Scope = Literal["gitdir", "repo", "home"]

#: git directories of one repository protected by mounts; the rest by tripwires
_MOUNTED_GITDIRS = 32


@valueclass
class HostFile:
    path: str
    kind: Literal["file", "dir"]
    scope: Scope
    protection: Protection
    family: str
    why: str
    #: a missing path must stay missing (see sandbox.plan)
    sentinel: bool = False
    #: a writable root granted below it widens that path only
    grant_below: bool = False


@functools.cache
def host_files() -> tuple[HostFile, ...]:
    """The table, validated (a malformed entry is an error in shipped data)."""
    out = []
    for entry in profile_data.read_toml("host-run-files.toml")["files"]:
        if entry["kind"] not in ("file", "dir") or entry["scope"] not in ("gitdir", "repo", "home"):
            raise ValueError(f"host-run-files.toml: bad entry {entry!r}")
        if entry["protection"] not in ("block", "tripwire", "report"):
            raise ValueError(f"host-run-files.toml: bad protection in {entry!r}")
        out.append(HostFile(entry["path"], entry["kind"], entry["scope"], entry["protection"],
                            entry["family"], entry["why"], bool(entry.get("sentinel", False)),
                            bool(entry.get("grant_below", False))))
    return tuple(out)


@valueclass(frozen=False, slots=False)
class HostRunTargets:
    """Concrete paths for one run. ``block``: (path, kind, kept missing
    when missing); ``tripwire``: paths checked after the run; ``report``: paths
    whose changes are reported; ``read_only``: whole directories made
    read-only (``filesystem.git = "read-only"``: every git directory);
    ``sentinels``: tripwires inside git directories, whose creation stops
    the run at once (a live host git would obey them before the post-run
    check); ``gitdirs``: every git directory of the repositories."""

    block: list[tuple[str, str, bool]] = field(default_factory=list)
    tripwire: list[str] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)
    sentinels: list[str] = field(default_factory=list)
    gitdirs: list[str] = field(default_factory=list)

    def add(self, base: str, entry: HostFile, *, gitdir: bool = False) -> None:
        path = base.rstrip("/") + "/" + entry.path  # both normalized: no os.path.join
        if entry.protection == "report":
            self.report.append(path)
        elif entry.protection == "tripwire" and not (gitdir and os.path.lexists(path)):
            self.tripwire.append(path)
            if gitdir:
                self.sentinels.append(path)
        else:
            # an existing tripwire name inside a git directory (a linked
            # worktree's commondir) is simply read-only: git never writes it
            self.block.append((path, entry.kind, entry.sentinel))
            if gitdir and not entry.sentinel:
                # Missing, it becomes a tripwire (see sandbox.plan); inside a
                # git directory, also a sentinel: a host `git status` during
                # the run would obey a planted `config.worktree` (with
                # extensions.worktreeConfig on) before the post-run check.
                self.sentinels.append(path)


def host_run_targets(
    roots: list[str], repos: list[Repo], home: str, *, git_read_only: bool = False,
    agent_dirs: frozenset[str] = frozenset(),
) -> HostRunTargets:
    """Every path the table names for ``roots`` and the ``repos`` in them,
    and for the agents' settings directories ``agent_dirs`` found below
    their tops by an earlier search."""
    targets = HostRunTargets()
    table = host_files()
    by_scope = {s: [e for e in table if e.scope == s] for s in ("gitdir", "repo", "home")}
    tops = list(dict.fromkeys([*roots, *(r.worktree for r in repos)]))
    for top in tops:
        for entry in by_scope["repo"]:
            targets.add(top, entry)
    _nested_agent_dirs(targets, agent_dirs, roots, set(tops))
    _fossil_repositories(targets, tops, agent_dirs, roots)
    for top in tops:
        targets.report += _startup_file_dirs(top)
    worktrees = {r.worktree for r in repos}
    for root in roots:
        if root not in worktrees:
            # Not a repository: `git init` here would make one with a planted
            # config at the top of the workspace. `.git` is kept missing (the
            # gitdir entries with a sentinel keep it at its first component).
            for entry in by_scope["gitdir"]:
                if entry.sentinel:
                    targets.add(os.path.join(root, ".git"), entry)
    for repo in repos:
        if repo.gitdir is None:
            continue
        dirs = repository_gitdirs(repo.gitdir)
        targets.gitdirs += dirs
        if git_read_only:
            targets.read_only.append(repo.gitdir)
        else:
            # Submodules' git directories beyond the first few are tripwired
            # rather than mounted: a superproject with 70 submodules would
            # otherwise cost 210 mounts on every run.
            for i, gitdir in enumerate(dirs):
                for entry in by_scope["gitdir"]:
                    if i < _MOUNTED_GITDIRS or entry.protection != "block":
                        targets.add(gitdir, entry, gitdir=True)
                    else:
                        targets.tripwire.append(gitdir.rstrip("/") + "/" + entry.path)
        # what the configuration makes git run or read, whatever protects
        # the git directory itself (`--git-read-only` included)
        for gitdir in dirs:
            for path, kind in config_targets(gitdir, repo.worktree, home):
                if os.path.lexists(path):
                    targets.block.append((path, kind, False))
                else:
                    targets.tripwire.append(path)
    real_home = os.path.realpath(home)
    # Home mode: a writable root holds the whole home (`--cwd ~`). Then the
    # directories the long tail of host-run files lives in are read-only
    # whole (`grant_below` entries); `--allow-write ~/.config` alone is
    # that directory, granted on purpose.
    home_mode = any(_under(real_home, r) for r in roots)
    for entry in by_scope["home"]:
        path = real_home + "/" + entry.path
        # Attack (from a review): `--allow-write ~/.local --allow-write
        # ~/.config` left ~/.local/bin and ~/.config/git/config open, as the
        # home's entries applied only when a root held the whole home. Each
        # entry applies wherever it lies in a writable root; a root inside
        # a blocked entry is refused (its mount would undo the block).
        if entry.grant_below and not home_mode:
            continue  # a writable path of the home's, granted on purpose: kept writable
        if any(_under(path, r) and path != r for r in roots):
            targets.add(real_home, entry)
        elif entry.protection == "block" and not entry.grant_below:
            inside = next((r for r in roots if _under(r, path)), None)
            if inside is not None:
                raise PolicyError(f"refusing to make {inside} writable: the host runs what is "
                                  f"in {path} by itself ({entry.why})")
    return targets


#: the names of a Fossil checkout's database, in the order fossil looks
FOSSIL_CHECKOUTS = (".fslckout", "_FOSSIL_", ".fos")


#: files SQLite reads beside a database before the database itself: a hot
#: rollback journal or a write-ahead log is replayed into it on the next open
SQLITE_SIDECARS = ("-journal", "-wal", "-shm")


def _fossil_repositories(targets: HostRunTargets, tops: list[str],
                         agent_dirs: frozenset[str], roots: list[str]) -> None:
    """A Fossil checkout names its repository database, whose settings
    hold the hooks `fossil commit` runs; one inside a writable root is
    read-only — as named (a link) and where it leads — and so are the
    files SQLite replays into it and into the checkout. Attacks (from
    reviews): `fossil hook add -R proj.fossil --type before-commit …` on
    the workspace's own `proj.fossil`; a hot journal `proj.fossil-journal`
    holding the pages of a copy with the hook, replayed by the host's next
    `fossil commit` ("recovered 56 pages"); `link.fossil` re-pointed at a
    planted database."""
    checkouts = [os.path.join(top, name) for top in tops for name in FOSSIL_CHECKOUTS]
    checkouts += [d for d in agent_dirs if os.path.basename(d) in FOSSIL_CHECKOUTS]
    for checkout in checkouts:
        if not os.path.isfile(checkout) or os.path.islink(checkout):
            continue
        _protect_database(targets, checkout, roots, sidecars_only=True)  # the table has it
        named = fossil_repository(checkout)
        if named is None:
            continue
        spelled = os.path.normpath(os.path.join(os.path.dirname(checkout), named))
        for database in dict.fromkeys((spelled, os.path.realpath(spelled))):
            _protect_database(targets, database, roots)


def _protect_database(targets: HostRunTargets, database: str, roots: list[str], *,
                      sidecars_only: bool = False) -> None:
    """``database`` and its SQLite sidecars read-only where they are in a
    writable root; a missing one is a tripwire (made by the command: named
    and moved aside after the run)."""
    if not any(_under(database, r) for r in roots):
        return
    sidecars = [database + suffix for suffix in SQLITE_SIDECARS]
    for path in sidecars if sidecars_only else [database, *sidecars]:
        if os.path.lexists(path):
            targets.block.append((path, "file", False))
        else:
            targets.tripwire.append(path)


#: SQLite's virtual machine steps a checkout's reading may take (counted
#: by a progress handler every 1,000), then it is abandoned
_MAX_STEPS = 1000


def fossil_repository(checkout: str) -> str | None:
    """The repository database a Fossil checkout names (its `vvar` table's
    `repository`), read without locking or writing, within a bounded
    number of steps; None when the file is no database of that shape.
    A checkout can come in a cloned repository: from a review, one whose
    `vvar` was a view over an endless recursive query hung the plan."""
    import sqlite3  # noqa: PLC0415 -- only where a Fossil checkout is
    from urllib.parse import quote  # noqa: PLC0415

    steps = [0]

    def progress() -> int:
        steps[0] += 1
        return 1 if steps[0] > _MAX_STEPS else 0  # non-zero: interrupted

    try:
        connection = sqlite3.connect(f"file:{quote(checkout)}?mode=ro&immutable=1", uri=True,
                                     timeout=0.1)
    except (sqlite3.Error, ValueError):
        return None
    try:
        connection.set_progress_handler(progress, 1000)
        kind = connection.execute(
            "SELECT type FROM sqlite_master WHERE name = 'vvar'").fetchone()
        if kind != ("table",):
            return None  # a view or a trigger's doing is no checkout fossil wrote
        row = connection.execute("SELECT value FROM vvar WHERE name = 'repository'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    value = row[0] if row else None
    return value if isinstance(value, str) and value and "\0" not in value else None


#: nested agents' settings directories protected by mounts; the rest are
#: left to the search after the run
_MOUNTED_AGENT_DIRS = 64


def _nested_agent_dirs(targets: HostRunTargets, agent_dirs: frozenset[str], roots: list[str],
                       tops: set[str]) -> None:
    """A `.claude` or `.shellgate` below a top (`pkg/.claude`), there before
    the run, is read-only whole inside the sandbox: a session the user
    starts in `pkg` obeys it. So is another version control system's
    directory there (`vendor/lib/.hg`, `.bzr`, a `.fslckout`): its tool run
    in `vendor/lib` obeys it. The mount binds the directory, not its names,
    so the user can still save a rule in it on the host during the run
    (from a review: a deny rule saved in `pkg/.claude/settings.local.json`
    while a run slept was renamed aside as the command's), and a change
    found there afterwards is the host's: reported, never moved (see
    sandbox.guards)."""
    nested = sorted(d for d in agent_dirs
                    if os.path.dirname(d) not in tops and any(_under(d, r) for r in roots)
                    and not os.path.islink(d) and os.path.exists(d))
    # (Fossil's checkout database is a file: bound read-only as one)
    targets.block += [(path, "dir" if os.path.isdir(path) else "file", False)
                      for path in nested[:_MOUNTED_AGENT_DIRS]]


#: where a project keeps its virtualenv
_VENV_NAMES = (".venv", "venv", ".env", "env")


#: the names a subproject's virtualenv goes by (a monorepo's `backend/.venv`)
_SUB_VENV_NAMES = (".venv", "venv", "env")
#: directories whose every subdirectory may be a virtualenv (tox's, nox's,
#: direnv's layout_python)
_VENV_HOLDERS = (".tox", ".nox", ".direnv")
#: a top's subdirectories looked into for a virtualenv of their own
_MAX_SUBPROJECTS = 256
#: directories that are no subproject
_NOT_SUBPROJECTS = frozenset({"node_modules", "site-packages", "__pycache__", "target", "build",
                              "dist", *_VENV_NAMES})


def _startup_file_dirs(top: str) -> list[str]:
    """``SITE/*.pth`` report paths (see :mod:`sandbox.venvwatch`) for each
    virtualenv at ``top`` and in each of its subdirectories (from a review:
    a monorepo's `backend/.venv` was not watched, and a `.pth` planted
    there ran at the next `backend/.venv/bin/python`)."""
    out = _venvs_at(top, _VENV_NAMES)
    subs: list[str] = []
    with contextlib.suppress(OSError), os.scandir(top) as entries:
        subs = [e.path for e in entries if not e.name.startswith(".")
                and e.name not in _NOT_SUBPROJECTS and e.is_dir(follow_symlinks=False)]
    for sub in sorted(subs)[:_MAX_SUBPROJECTS]:
        out += _venvs_at(sub, _SUB_VENV_NAMES)
    for holder in _VENV_HOLDERS:
        with contextlib.suppress(OSError), os.scandir(os.path.join(top, holder)) as entries:
            names = tuple(sorted(e.name for e in entries if e.is_dir(follow_symlinks=False)))
            out += _venvs_at(os.path.join(top, holder), names[:_MAX_SUBPROJECTS])
    return out


def _venvs_at(top: str, names: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in names:
        lib = os.path.join(top, name, "lib")
        if not os.path.isfile(os.path.join(top, name, "pyvenv.cfg")):
            continue
        with contextlib.suppress(OSError), os.scandir(lib) as entries:
            out += [os.path.join(e.path, "site-packages") + PTH for e in entries
                    if e.name.startswith("python") and e.is_dir(follow_symlinks=False)]
    return out


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
