"""Finding other projects' ``.env`` files under the home directories.

The sensitive list says ``**/.env`` and ``**/.env.*`` (outside the
workspace): dotenv files hold database URLs and API keys. A pattern with
``**`` cannot be mounted over, so the sandbox finds the concrete files:
a walk of each home directory, depth-limited, skipping trees that hold
tools and caches rather than projects (``node_modules``, ``.git``, ``.cache``,
virtualenvs …).

The walk is cached between runs (in the private runtime directory, and in
memory) and kept true by directory mtimes: adding, removing or renaming a
file changes its directory's mtime, so each run re-lists only the
directories that changed. A directory whose mtime is too close to the moment
it was listed is listed again next time (a change in the same clock tick
would not move the mtime: git's "racily clean" problem).

Bounded and failing closed: a walk gets a time budget; whatever it has not
reached when the budget runs out is *hidden* for this run (reported in
``unscanned``), and the next run carries on where this one stopped.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

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
_RACY_NS = 2_000_000_000
_VERSION = 2


def is_dotenv(name: str) -> bool:
    """``.env``, ``.env.*`` and direnv's ``.envrc``."""
    return name in (".env", ".envrc") or name.startswith(".env.")


@dataclass
class _State:
    homes: list[str]
    #: directory -> its mtime when listed (0: list again next time)
    dirs: dict[str, int] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    found: set[str] = field(default_factory=set)
    #: (directory, depth) still to walk
    pending: list[tuple[str, int]] = field(default_factory=list)
    unlistable: set[str] = field(default_factory=set)

    def to_json(self) -> str:
        return json.dumps({
            "version": _VERSION, "homes": self.homes,
            "dirs": [[d, m, self.depth.get(d, 0)] for d, m in self.dirs.items()],
            "found": sorted(self.found), "pending": self.pending,
            "unlistable": sorted(self.unlistable),
        })

    @classmethod
    def from_json(cls, text: str, homes: list[str]) -> _State | None:
        try:
            data = json.loads(text)
            if data.get("version") != _VERSION or data.get("homes") != homes:
                return None
            state = cls(homes)
            for d, m, depth in data["dirs"]:
                state.dirs[str(d)] = int(m)
                state.depth[str(d)] = int(depth)
            state.found = {str(f) for f in data["found"]}
            state.pending = [(str(d), int(depth)) for d, depth in data["pending"]]
            state.unlistable = {str(d) for d in data["unlistable"]}
        except (ValueError, KeyError, TypeError):
            return None
        return state


_MEMORY: dict[tuple[str, ...], _State] = {}


@dataclass(frozen=True, slots=True)
class DotenvScan:
    """``found``: dotenv files; ``unscanned``: directories the budget did not
    reach (hide them: the scan fails closed)."""

    found: tuple[str, ...]
    unscanned: tuple[str, ...]
    #: directories this user may enter but not list (mode 0711): what is in
    #: them cannot be known, so they are hidden whole
    unlistable: tuple[str, ...] = ()


def scan(
    homes: list[str],
    cache: Path | None,
    *,
    keep: tuple[str, ...] = (),
    budget: float = BUDGET_S,
) -> DotenvScan:
    """The dotenv files under ``homes`` (existing directories only).
    Directories that contain a path of ``keep`` (the workspace, writable
    roots: they cannot be hidden) are listed even past the budget."""
    key = tuple(homes)
    state = _MEMORY.get(key) or _load(cache, homes) or _State(homes)
    if not state.dirs and not state.pending:
        state.pending = [(h, 0) for h in homes if os.path.isdir(h)]
    deadline = time.monotonic() + budget
    changed = _revalidate(state)
    changed |= _walk(state, deadline, keep)
    _MEMORY[key] = state
    if changed and cache is not None:
        _save(cache, state)
    return DotenvScan(tuple(sorted(state.found)), tuple(d for d, _ in state.pending),
                      tuple(sorted(state.unlistable)))


def _load(cache: Path | None, homes: list[str]) -> _State | None:
    if cache is None:
        return None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return _State.from_json(cache.read_text("utf-8"), homes)
    return None


def _save(cache: Path, state: _State) -> None:
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        tmp.write_text(state.to_json(), "utf-8")
        os.replace(tmp, cache)


def _revalidate(state: _State) -> bool:
    """Re-list every known directory whose mtime moved (or was racy);
    forget the ones that are gone."""
    stale = []
    for path, mtime in state.dirs.items():
        try:
            st = os.lstat(path)
        except OSError:
            stale.append(path)
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_mtime_ns != mtime or mtime == 0:
            stale.append(path)
    for path in stale:
        state.found = {f for f in state.found if os.path.dirname(f) != path}
        state.unlistable.discard(path)
        depth = state.depth.pop(path, 0)
        del state.dirs[path]
        if os.path.isdir(path) and not os.path.islink(path):
            state.pending.append((path, depth))
    return bool(stale)


def _walk(state: _State, deadline: float, keep: tuple[str, ...]) -> bool:
    """List pending directories until none is left or the deadline passes;
    past it, only the ancestors of ``keep`` (a short chain)."""
    walked = False
    while state.pending and time.monotonic() < deadline:
        path, depth = state.pending.pop()
        walked = True
        _list(state, path, depth)
    while True:
        must = [item for item in state.pending if _contains_any(item[0], keep)]
        if not must:
            return walked
        for item in must:
            state.pending.remove(item)
            _list(state, *item)
            walked = True


def _contains_any(directory: str, paths: tuple[str, ...]) -> bool:
    prefix = directory.rstrip("/") + "/"
    return any(p == directory or p.startswith(prefix) for p in paths)


def _list(state: _State, path: str, depth: int) -> None:
    try:
        before = os.lstat(path).st_mtime_ns
    except OSError:
        return
    try:
        entries = list(os.scandir(path))
    except PermissionError:
        entries = []
        state.unlistable.add(path)  # enterable, not listable: hidden whole
    except OSError:
        return
    now = time.time_ns()
    state.dirs[path] = 0 if now - before < _RACY_NS else before
    state.depth[path] = depth
    home = next((h for h in state.homes if path == h or path.startswith(h + "/")), "")
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name in DOTENV_DIRS:
                    state.found.add(entry.path)
                elif (depth < MAX_DEPTH and entry.name not in SKIP_DIRS
                        and os.path.relpath(entry.path, home) not in SKIP_PATHS
                        and entry.path not in state.dirs):
                    state.pending.append((entry.path, depth + 1))
            elif is_dotenv(entry.name):
                state.found.add(entry.path)
        except OSError:
            continue


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
    found: DotenvScan, homes: list[str], keep: list[str]
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
    for path in (*found.unscanned, *found.unlistable):
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
    by_parent: dict[str, list[str]] = {}
    for path in files:
        by_parent.setdefault(os.path.dirname(path), []).append(path)
    for parent, items in by_parent.items():
        if len(items) > PER_DIR_LIMIT and _foldable(parent, homes, keep):
            files.difference_update(items)
            dirs.add(parent)
    while len(files) + len(dirs) > TOTAL_LIMIT:
        paths = files | dirs
        deepest = max(p.count("/") for p in paths)
        moved = False
        for path in [p for p in paths if p.count("/") == deepest]:
            parent = os.path.dirname(path)
            if _foldable(parent, homes, keep):
                files.discard(path)
                dirs.discard(path)
                dirs.add(parent)
                moved = True
        if not moved:
            raise TooMuchToHide(
                f"{len(paths)} .env files and unscanned directories under the home "
                f"directories cannot be hidden within {TOTAL_LIMIT} mounts")
    dirs = {d for d in dirs if not any(d != o and _under(d, o) for o in dirs)}
    files = {f for f in files if not any(_under(f, d) for d in dirs)}
    return sorted(files), sorted(dirs)
