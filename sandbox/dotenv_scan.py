"""Finding other projects' ``.env`` files under the home directories.

The sensitive list says ``**/.env`` and ``**/.env.*`` (outside the
workspace): dotenv files hold database URLs and API keys. A pattern with
``**`` cannot be mounted over, so the sandbox finds the concrete files:
a walk of each home directory, depth-limited, skipping trees that hold
tools and caches rather than projects (``node_modules``, ``.git``, ``.cache``,
virtualenvs …).

The walk is cached between runs (in the private runtime directory, and in
memory) and kept true by directory ctimes: adding, removing or renaming a
file changes its directory's ctime (and, unlike the mtime, nothing can set
it back), so each run re-lists only the directories that changed. A
directory whose ctime is too close to the moment it was listed is listed
again next time (a change in the same clock tick would not move it: git's
"racily clean" problem).

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
from collections import deque
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
#: re-checking the known directories (one lstat each) may take this long
REVALIDATE_BUDGET_S = 1.0
_RACY_NS = 2_000_000_000
_VERSION = 3


def is_dotenv(name: str) -> bool:
    """``.env``, ``.env.*`` and direnv's ``.envrc``."""
    return name in (".env", ".envrc") or name.startswith(".env.")


@dataclass
class _State:
    homes: list[str]
    #: directory -> its ctime when listed (0: list again next time)
    dirs: dict[str, int] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    #: directory -> the dotenv names found in it (files, and `.envs` dirs)
    found: dict[str, set[str]] = field(default_factory=dict)
    #: (directory, depth) still to walk, shallowest first: when the budget
    #: runs out, what is left (and hidden) is the depths of the largest
    #: trees, not a sibling that happened to come last
    pending: deque[tuple[str, int]] = field(default_factory=deque)
    unlistable: set[str] = field(default_factory=set)

    def to_json(self) -> str:
        return json.dumps({
            "version": _VERSION, "homes": self.homes,
            "dirs": [[d, m, self.depth.get(d, 0)] for d, m in self.dirs.items()],
            "found": {d: sorted(names) for d, names in self.found.items() if names},
            "pending": list(self.pending), "unlistable": sorted(self.unlistable),
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
            state.found = {str(d): {str(n) for n in names} for d, names in data["found"].items()}
            state.pending = deque((str(d), int(depth)) for d, depth in data["pending"])
            state.unlistable = {str(d) for d in data["unlistable"]}
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return state


_MEMORY: dict[tuple[str, ...], _State] = {}


@dataclass(frozen=True, slots=True)
class DotenvScan:
    """``found``: dotenv files; ``unscanned``: directories the budget did not
    reach or re-check (hide them: the scan fails closed)."""

    found: tuple[str, ...]
    unscanned: tuple[str, ...]
    #: directories this user may enter but not list (mode 0311): what is in
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
        state.pending = deque((h, 0) for h in homes if os.path.isdir(h))
    start = time.monotonic()
    changed, unchecked = _revalidate(state, start + REVALIDATE_BUDGET_S)
    changed |= _walk(state, start + budget, keep)
    _MEMORY[key] = state
    if changed and cache is not None:
        _save(cache, state)
    found = sorted(os.path.join(d, n) for d, names in state.found.items() for n in names)
    return DotenvScan(tuple(found), tuple(d for d, _ in state.pending) + tuple(unchecked),
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


def _revalidate(state: _State, deadline: float) -> tuple[bool, list[str]]:
    """Re-list every known directory whose ctime moved (or was racy);
    forget the ones that are gone. The ctime, not the mtime: `touch -d`,
    `cp -a`, `rsync -a` and `tar x` set an mtime back after adding a file,
    and a ctime cannot be set back (from a review: a `.env` added and the
    mtime restored stayed readable). Directories not re-checked by the
    deadline are returned: hidden whole for this run."""
    stale: list[str] = []
    unchecked: list[str] = []
    for i, (path, stamp) in enumerate(state.dirs.items()):
        if i % 256 == 0 and time.monotonic() > deadline:
            unchecked = list(state.dirs)[i:]
            break
        try:
            st = os.lstat(path)
        except OSError:
            stale.append(path)
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_ctime_ns != stamp or stamp == 0:
            stale.append(path)
    for path in stale:
        state.found.pop(path, None)
        state.unlistable.discard(path)
        depth = state.depth.pop(path, 0)
        del state.dirs[path]
        if os.path.isdir(path) and not os.path.islink(path):
            state.pending.append((path, depth))
    return bool(stale), unchecked


def _walk(state: _State, deadline: float, keep: tuple[str, ...]) -> bool:
    """List pending directories until none is left or the deadline passes;
    past it, only the ancestors of ``keep`` (a short chain)."""
    walked = False
    while state.pending and time.monotonic() < deadline:
        path, depth = state.pending.popleft()
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
        before = os.lstat(path).st_ctime_ns
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
    names: set[str] = set()
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name in DOTENV_DIRS:
                    names.add(entry.name)
                elif (depth < MAX_DEPTH and entry.name not in SKIP_DIRS
                        and os.path.relpath(entry.path, home) not in SKIP_PATHS
                        and entry.path not in state.dirs):
                    state.pending.append((entry.path, depth + 1))
            elif is_dotenv(entry.name):
                names.add(entry.name)
        except OSError:
            continue
    if names:
        state.found[path] = names
    else:
        state.found.pop(path, None)


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
