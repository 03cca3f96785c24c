"""Finding other projects' ``.env`` files under the home directories.

The sensitive list says ``**/.env`` and ``**/.env.*`` (outside the
workspace): dotenv files hold database URLs and API keys. A pattern with
``**`` cannot be mounted over, so the sandbox finds the concrete files:
a walk of each home directory, depth-limited, skipping trees that hold
tools and caches rather than projects (``node_modules``, ``.git``, ``.cache``,
virtualenvs …).

The walk (:mod:`sandbox.walk`) is cached between runs and kept true by
directory ctimes. Bounded and failing closed: whatever it has not reached
when its budget runs out, or may enter but not list, is *hidden* for this
run, and the next run carries on where this one stopped.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from values import valueclass

from .hashing import hex_digest
from .walk import FILE_LINK, WalkResult, WalkSpec, walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: Directory names never walked: tool caches and installed dependencies,
#: which hold other people's published files, not a user's secrets. Names
#: that also hold real projects (`go`, `dist`, `vendor`, `snap`) are walked.
SKIP_DIRS = frozenset(
    {
        "node_modules", ".git", ".hg", ".svn", "__pycache__", ".cache", ".npm", ".cargo",
        ".rustup", ".pyenv", ".nvm", ".m2", ".gradle", ".venv", "site-packages", ".tox",
        ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".vscode-server",
        ".cursor-server", ".terraform", ".next", ".nuxt", ".gem",
    }
)
#: Paths below a home directory never walked (Go's module cache).
SKIP_PATHS = frozenset({"go/pkg"})
#: Directory names hidden whole (cookiecutter-django keeps `.envs/.production/`).
DOTENV_DIRS = frozenset({".envs"})
MAX_DEPTH = 8
#: a fresh walk may take this long before the rest is hidden instead
BUDGET_S = 0.3
#: re-checking the known directories (one lstat each) may take this long
REVALIDATE_BUDGET_S = 1.0


def is_dotenv(name: str) -> bool:
    """``.env``, ``.env.*``, direnv's ``.envrc`` and ``.envs`` (a file or a
    directory of them), as the sensitive list names them."""
    return name in (".env", ".envrc", ".envs") or name.startswith(".env.")


def is_dotenv_dir(name: str) -> bool:
    """Directories of other projects hidden whole: ``.env.d/``,
    ``.env.production/`` (from a review: ~/proj2/.env.d/production was
    readable — its own name is no dotenv name, its directory's is). Not a
    bare ``.env/``: that is as often a virtualenv (`python -m venv .env`);
    what lies in one still asks, by the sensitive list's ``**/.env*``."""
    return name.startswith(".env.")


DOTENV_SPEC = WalkSpec(
    name="dotenv",
    match_file=is_dotenv,
    match_dirs=DOTENV_DIRS,
    skip_dirs=SKIP_DIRS,
    skip_paths=SKIP_PATHS,
    max_depth=MAX_DEPTH,
    budget_s=BUDGET_S,
    revalidate_budget_s=REVALIDATE_BUDGET_S,
    match_dir_name=is_dotenv_dir,
)

#: the walk's result under its old name
DotenvScan = WalkResult


def scan(
    homes: list[str],
    cache: Path | None,
    *,
    keep: tuple[str, ...] = (),
    budget: float = BUDGET_S,
) -> WalkResult:
    """The dotenv files under ``homes`` (existing directories only).
    Directories that contain a path of ``keep`` (the workspace, writable
    roots: they cannot be hidden) are listed even past the budget."""
    return walk(DOTENV_SPEC, homes, cache, keep=keep, budget=budget)


# -- from what was found to what is hidden ------------------------------------------

#: more hidden paths than this in one directory: hide the directory instead
PER_DIR_LIMIT = 16
#: at most this many mounts for dotenv hiding (bubblewrap takes 9,000 args)
TOTAL_LIMIT = 256


class TooMuchToHide(Exception):
    """The dotenv paths cannot be hidden within the mount budget."""


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def hide_list(
    found: WalkResult, homes: list[str], keep: list[str]
) -> tuple[list[str], list[str]]:
    """(files, directories) to hide for ``found``. The workspace and the
    writable roots (``keep``) are never hidden, nor anything above them.
    A symlinked dotenv name is followed only to another dotenv file under a
    home (``.env.x -> /usr`` must not hide /usr from every later run).
    Many paths are folded into their directories, so an attacker's 100,000
    `.env.N` files cost one mount, not 100,000."""
    files: set[str] = set()
    dirs: set[str] = set()
    for path in found.found:
        if any(_under(path, k) for k in keep):
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            dirs.add(path)
        elif stat.S_ISREG(st.st_mode):
            files.add(path)
        elif stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(path)
            if (is_dotenv(os.path.basename(real)) and os.path.isfile(real)
                    and any(_under(real, h) for h in homes)
                    and not any(_under(real, k) for k in keep)):
                files.add(real)
    # not re-checked in time: a `.env` may have appeared there since
    for path in (*found.unscanned, *found.unchecked, *found.unlistable):
        if not any(_under(path, k) or _under(k, path) for k in keep):
            dirs.add(path)
    return _fold(files, dirs, homes, keep)


def _foldable(directory: str, homes: list[str], keep: list[str]) -> bool:
    """May ``directory`` be hidden whole? Strictly below a home, and not
    above the workspace or a writable root."""
    below_home = any(directory != h and _under(directory, h) for h in homes)
    return below_home and not any(_under(k, directory) for k in keep)


def _fold(
    files: set[str], dirs: set[str], homes: list[str], keep: list[str]
) -> tuple[list[str], list[str]]:
    """Fold paths into directories until they fit the mount budget: first
    any directory with more than PER_DIR_LIMIT hidden entries, then, while
    too many remain, the directory that holds the most of them (so 300
    planted `aN/.env` fold into their one parent, and a lone
    `~/tools/share/x/.env.example` elsewhere does not drag `~/tools` in:
    from a review)."""
    by_parent: dict[str, list[str]] = {}
    for path in files:
        by_parent.setdefault(os.path.dirname(path), []).append(path)
    for parent, items in by_parent.items():
        if len(items) > PER_DIR_LIMIT and _foldable(parent, homes, keep):
            files.difference_update(items)
            dirs.add(parent)
    while len(files) + len(dirs) > TOTAL_LIMIT:
        paths = files | dirs
        counts: dict[str, int] = {}
        for path in paths:
            parent = os.path.dirname(path)
            while parent not in ("", "/"):
                counts[parent] = counts.get(parent, 0) + 1
                parent = os.path.dirname(parent)
        best = max(
            (d for d, n in counts.items() if n > 1 and _foldable(d, homes, keep)),
            key=lambda d: (counts[d], d.count("/")),
            default=None,
        )
        if best is None:
            raise TooMuchToHide(
                f"{len(paths)} .env files and unscanned directories under the home "
                f"directories cannot be hidden within {TOTAL_LIMIT} mounts (most of them "
                f"directly in a home directory or above the workspace: remove them)")
        files = {f for f in files if not _under(f, best)}
        dirs = {d for d in dirs if not _under(d, best)} | {best}
    dirs = {d for d in dirs if not any(d != o and _under(d, o) for o in dirs)}
    files = {f for f in files if not any(_under(f, d) for d in dirs)}
    return sorted(files), sorted(dirs)


# -- the workspace's own dotenv files (a fact for the analyzer) ---------------------

#: the workspace walk: every directory a command's `grep -r` would reach —
#: no tree skipped (from a review: `grep -r KEY .` printed a .env under
#: node_modules and .cache) and no depth limit short of the path length's
#: (one 66 levels down was never found)
def _dotenv_or_git(name: str) -> bool:
    """A dotenv file or a credential store (a tree read that reaches one
    asks, as `cat` of it does), or what marks a repository: `.git` (a file
    naming the git directory) or `HEAD` (a bare repository's, or a git
    directory's)."""
    return name in (".git", "HEAD", ".git-credentials") or is_dotenv(name)


WORKSPACE_SPEC = WalkSpec(
    # named anew when what it records grows (file links): a cache of the
    # old name would answer for directories whose ctime did not move
    name="dotenv-below-5",
    match_file=_dotenv_or_git,
    match_dirs=DOTENV_DIRS,
    max_depth=4096,
    budget_s=BUDGET_S,
    revalidate_budget_s=REVALIDATE_BUDGET_S,
    match_dir_links=True,
    # a link to a file is read where it leads by `find -exec cat`, grep -R,
    # diff (from a review: `find sub -exec cat {} +`, with sub/k.txt ->
    # ~/.ssh/id_rsa, was allowed and printed the key)
    match_file_links=True,
    report_unreadable=True,
    # `.env/`, `.env.d/`: the sensitive list's `**/.env*` covers what is in them
    match_dir_name=is_dotenv,
    # a repository below the root (its `.git`, a directory or a file):
    # its configuration may put a credential in any file of the tree
    note_dirs=frozenset({".git"}),
)


@valueclass
class DotenvBelow:
    """The dotenv files below some directories: ``searched`` (existing
    directories walked), ``files`` found, ``dirs`` (``.envs/``, ``.env.d/``:
    dotenv directories, not entered — everything in them counts),
    ``unknown`` directories the walk could not finish or list — a dotenv
    file may be anywhere below them — ``links``, symbolic links that
    are not to a file (not followed: a walk that follows one goes where
    nobody searched), ``file_links``, symbolic links to a file, and
    ``repositories``, the directories holding a ``.git``."""

    searched: tuple[str, ...]
    files: tuple[str, ...]
    unknown: tuple[str, ...]
    links: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    file_links: tuple[str, ...] = ()
    repositories: tuple[str, ...] = ()


def _repositories(found: tuple[str, ...]) -> list[str]:
    """The repositories among what the walk recorded: the directory of each
    `.git` (a directory, a file, or a link — from a review: `inner/.git ->
    elsewhere` was filed as a link and its included token printed by `grep
    -r` from the outer repository), and each directory holding a `HEAD` and
    a `config` outside a git directory (a nested bare repository)."""
    out = []
    for entry in found:
        path = entry.removesuffix("/").removesuffix(FILE_LINK)
        name, parent = os.path.basename(path), os.path.dirname(path)
        bare = (name == "HEAD" and entry == path and "/.git/" not in parent + "/"
                and os.path.isfile(os.path.join(parent, "config")))
        if name == ".git" or bare:
            out.append(parent)
    return list(dict.fromkeys(out))


def dotenv_below(
    dirs: list[str], cache_dir: Path | Callable[[], Path] | None, *,
    budget: float | None = None,
) -> DotenvBelow:
    """The workspace's own dotenv files, for the analyzer: a command that
    reads the contents of a tree (`grep -r KEY .`, `find . -exec cat {} +`)
    and reaches one needs a person, as `cat .env` does. The sandbox leaves
    the workspace's dotenv files readable (the project needs them), so the
    fact matters inside it too. Cached like the home walk (``cache_dir``:
    the private runtime directory) and bounded: what the budget leaves is
    ``unknown``, and the next call carries on. ``cache_dir`` may be a
    function that gives it, called only when there is a directory to
    search."""
    roots = sorted({os.path.abspath(d) for d in dirs if os.path.isdir(d)})
    if not roots:
        return DotenvBelow((), (), ())
    cache = None
    if callable(cache_dir):
        cache_dir = cache_dir()
    if cache_dir is not None:
        key = hex_digest("\0".join(roots).encode())[:16]
        cache = cache_dir / f"{WORKSPACE_SPEC.name}-{key}.json"
    found = walk(WORKSPACE_SPEC, roots, cache, budget=budget)
    names = [p for p in found.found if not p.endswith(("/", FILE_LINK))]
    repositories = _repositories(found.found)
    names = [p for p in names if os.path.basename(p) not in (".git", "HEAD")]
    dirs = [p for p in names if os.path.isdir(p) and not os.path.islink(p)]
    links = [p.rstrip("/") for p in found.found if p.endswith("/")]
    file_links = [p[:-len(FILE_LINK)] for p in found.found if p.endswith(FILE_LINK)]
    unknown = (*found.unscanned, *found.unchecked, *found.unlistable)
    return DotenvBelow(tuple(roots), tuple(p for p in names if p not in dirs), tuple(unknown),
                       tuple(links), tuple(dirs), tuple(file_links), tuple(repositories))
