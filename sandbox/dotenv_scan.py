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

#: Directory names never walked: tool caches, dependencies, build output.
SKIP_DIRS = frozenset(
    {
        "node_modules", ".git", ".hg", ".svn", "__pycache__", ".cache", ".npm", ".cargo",
        ".rustup", ".pyenv", ".nvm", ".m2", ".gradle", ".venv", "venv", "site-packages",
        ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "target", ".local",
        ".vscode-server", ".cursor-server", "snap", ".docker", ".terraform", "vendor",
        ".next", ".nuxt", "dist", "build", ".gem", ".bundle", "go",
    }
)
MAX_DEPTH = 5
#: a fresh walk may take this long before the rest is hidden instead
BUDGET_S = 0.3
_RACY_NS = 2_000_000_000
_VERSION = 2


def is_dotenv(name: str) -> bool:
    return name == ".env" or name.startswith(".env.")


@dataclass
class _State:
    homes: list[str]
    #: directory -> its mtime when listed (0: list again next time)
    dirs: dict[str, int] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    found: set[str] = field(default_factory=set)
    #: (directory, depth) still to walk
    pending: list[tuple[str, int]] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps({
            "version": _VERSION, "homes": self.homes,
            "dirs": [[d, m, self.depth.get(d, 0)] for d, m in self.dirs.items()],
            "found": sorted(self.found), "pending": self.pending,
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
    return DotenvScan(tuple(sorted(state.found)), tuple(d for d, _ in state.pending))


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
        entries = list(os.scandir(path))
    except OSError:
        return
    now = time.time_ns()
    state.dirs[path] = 0 if now - before < _RACY_NS else before
    state.depth[path] = depth
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if (depth < MAX_DEPTH and entry.name not in SKIP_DIRS
                        and entry.path not in state.dirs):
                    state.pending.append((entry.path, depth + 1))
            elif is_dotenv(entry.name):
                state.found.add(entry.path)
        except OSError:
            continue
