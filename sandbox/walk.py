"""A bounded, cached walk of directory trees, looking for names.

Used to find other projects' ``.env`` files under the home directories
(:mod:`sandbox.dotenv_scan`) and git repositories in the writable roots
(:mod:`sandbox.repos`). The walk is cached between runs (in the private
runtime directory, and in memory) and kept true by directory ctimes: adding,
removing or renaming a file changes its directory's ctime (and, unlike the
mtime, nothing can set it back — `touch -d`, `cp -a`, `rsync -a` and `tar x`
set an mtime back after adding a file: from a review, a `.env` added that
way stayed readable), so each run re-lists only the directories that
changed. A directory whose ctime is too close to the moment it was listed
is listed again next time (a change in the same clock tick would not move
it: git's "racily clean" problem).

Bounded and failing closed: re-checking what is known and walking what is
new get a time budget each; what the walk has not reached when its budget
runs out is returned as ``unscanned``, what was not re-checked as
``unchecked``, for the caller to treat as unknown; the next run carries on,
breadth first, where this one stopped.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import re
import stat
import time
from collections import deque
from collections.abc import Callable

from values import field, valueclass

from .cleanup import prune_caches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

_RACY_NS = 2_000_000_000
_VERSION = 7


@valueclass(frozen=False, slots=False)
class _State:
    roots: list[str]
    #: directory -> its ctime when listed (0: list again next time)
    dirs: dict[str, int] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    #: directory -> the matching names found in it
    found: dict[str, set[str]] = field(default_factory=dict)
    #: (directory, depth) still to walk, shallowest first: when the budget
    #: runs out, what is left (and hidden) is the depths of the largest
    #: trees, not a sibling that happened to come last
    pending: deque[tuple[str, int]] = field(default_factory=deque)
    unlistable: set[str] = field(default_factory=set)
    #: something worth saving changed (not only a racy directory re-listed)
    dirty: bool = False
    #: directories being listed again, with what was found in them before
    relisted: dict[str, set[str]] = field(default_factory=dict)
    #: directories listed by this walk (new, or their ctime moved)
    changed: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        import json  # noqa: PLC0415 - only a walk with a cache needs it

        return json.dumps({
            "version": _VERSION, "roots": self.roots,
            "dirs": [[d, m, self.depth.get(d, 0)] for d, m in self.dirs.items()],
            "found": {d: sorted(names) for d, names in self.found.items() if names},
            "pending": list(self.pending), "unlistable": sorted(self.unlistable),
        })

    @classmethod
    def from_json(cls, text: str, roots: list[str]) -> _State | None:
        import json  # noqa: PLC0415

        try:
            data = json.loads(text)
            if data.get("version") != _VERSION or data.get("roots") != roots:
                return None
            state = cls(roots)
            for d, m, depth in data["dirs"]:
                state.dirs[str(d)] = int(m)
                state.depth[str(d)] = int(depth)
            state.found = {str(d): {str(n) for n in names} for d, names in data["found"].items()}
            state.pending = deque((str(d), int(depth)) for d, depth in data["pending"])
            state.unlistable = {str(d) for d in data["unlistable"]}
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return state


_MEMORY: dict[tuple[str, tuple[str, ...]], _State] = {}
#: one walk at a time in a process: a walk mutates its state in place, and
#: two at once (parallel Reads each planning the sandbox's filesystem) broke
#: with "dictionary changed size during iteration" — and a state mended by
#: one walk while another iterated it could leave a `.env` out of what is
#: hidden (from a review: six threads calling fs_plan(fresh=True))
# _thread's lock, not threading's: the same RLock, without threading's
# import (~1 ms of every cold `shellgate check` in a repository)
_LOCK = _thread.RLock()


#: what follows a file link's name among a walk's found names
FILE_LINK = "\0"


@valueclass
class WalkSpec:
    """What one walk looks for. A directory named in ``match_dirs`` is
    recorded and not entered; one in ``skip_dirs`` (or at a path of
    ``skip_paths`` below a root) is not entered — or, with ``peek_skipped``,
    listed without entering its subdirectories; a file is recorded when
    ``match_file`` says so."""

    name: str
    match_file: Callable[[str], bool]
    match_dirs: frozenset[str] = frozenset()
    skip_dirs: frozenset[str] = frozenset()
    skip_paths: frozenset[str] = frozenset()
    max_depth: int = 8
    peek_skipped: bool = False
    #: record a symbolic link that is not to a file (a directory, nothing
    #: yet, a loop) as its name with a trailing ``/`` (a name cannot hold one)
    match_dir_links: bool = False
    #: record a symbolic link to a file as its name followed by
    #: :data:`FILE_LINK` (a name cannot hold a NUL either)
    match_file_links: bool = False
    #: a directory that cannot be looked at for another reason than its
    #: permissions (a path too long, an I/O error) is unlistable, not
    #: skipped (for the analyzer's search: what it holds is unknown)
    report_unreadable: bool = False
    #: a directory recorded (and not entered) when this says so of its name
    match_dir_name: Callable[[str], bool] | None = None
    #: directories recorded by name and entered all the same
    note_dirs: frozenset[str] = frozenset()
    budget_s: float = 0.3
    revalidate_budget_s: float = 1.0


@valueclass
class WalkResult:
    """``found``: matching paths; ``unscanned``: directories the budget did
    not reach; ``unchecked``: known directories it did not re-check (what
    was found in them before is in ``found``, a change since is not);
    ``unlistable``: directories this user may enter but not list (mode
    0311). What is in the last three cannot be known: the caller treats
    them as it must (fail closed). ``changed``: directories this walk
    listed — new ones, and known ones listed again because their ctime
    moved (something in them was added, removed or renamed) or was too
    recent to trust."""

    found: tuple[str, ...]
    unscanned: tuple[str, ...]
    unlistable: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


def walk(
    spec: WalkSpec,
    roots: list[str],
    cache: Path | None,
    *,
    keep: tuple[str, ...] = (),
    budget: float | None = None,
    revalidate_budget: float | None = None,
) -> WalkResult:
    """Walk ``roots`` (existing directories only) for ``spec``. Directories
    that contain a path of ``keep`` (they cannot be hidden) are listed even
    past the budget. The budgets (of the spec unless given) are separate: a
    slow re-check does not eat the walk's."""
    with _LOCK:
        return _walk_locked(spec, roots, cache, keep=keep, budget=budget,
                            revalidate_budget=revalidate_budget)


def _walk_locked(spec: WalkSpec, roots: list[str], cache: Path | None, *,
                 keep: tuple[str, ...], budget: float | None,
                 revalidate_budget: float | None) -> WalkResult:
    key = (spec.name, tuple(roots))
    state = _MEMORY.get(key) or _load(cache, roots) or _State(roots)
    if not state.dirs and not state.pending:
        state.pending = deque((r, 0) for r in roots if os.path.isdir(r))
    state.changed = []
    recheck = spec.revalidate_budget_s if revalidate_budget is None else revalidate_budget
    _, unchecked = _revalidate(state, time.monotonic() + recheck)
    _walk(spec, state, time.monotonic() + (spec.budget_s if budget is None else budget), keep)
    _MEMORY[key] = state
    if state.dirty and cache is not None:
        _save(cache, state)
        state.dirty = False
    found = sorted(os.path.join(d, n) for d, names in state.found.items() for n in names)
    return WalkResult(tuple(found), tuple(d for d, _ in state.pending),
                      tuple(sorted(state.unlistable)), tuple(unchecked), tuple(state.changed))


def recorded(spec: WalkSpec, roots: list[str], cache: Path | None) -> tuple[str, ...]:
    """What the last walk of ``spec`` over ``roots`` found (this process's
    memory, else the cache), without listing anything. A state loaded here
    stays in memory for the next walk."""
    key = (spec.name, tuple(roots))
    with _LOCK:
        state = _MEMORY.get(key)
        if state is None:
            state = _load(cache, roots)
            if state is None:
                return ()
            _MEMORY[key] = state
        return tuple(os.path.join(d, n) for d, names in state.found.items() for n in names)


def forget(spec_name: str) -> None:
    """Drop the in-memory state of every walk named ``spec_name``."""
    with _LOCK:
        for key in [k for k in _MEMORY if k[0] == spec_name]:
            del _MEMORY[key]


def _load(cache: Path | None, roots: list[str]) -> _State | None:
    if cache is None:
        return None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return _State.from_json(cache.read_text("utf-8"), roots)
    return None


def _save(cache: Path, state: _State) -> None:
    tmp = cache.with_suffix(f".{os.getpid()}.{_thread.get_ident()}.tmp")
    with contextlib.suppress(OSError):
        tmp.write_text(state.to_json(), "utf-8")
        os.replace(tmp, cache)
    # one cache per set of roots: keep the most recent ones of this kind
    kind = re.escape(cache.name.rsplit("-", 1)[0])
    prune_caches(str(cache.parent), re.compile(rf"{kind}-[0-9a-f]{{16}}\.json"))


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
        state.relisted[path] = state.found.pop(path, set())
        state.unlistable.discard(path)
        depth = state.depth.pop(path, 0)
        del state.dirs[path]
        if os.path.isdir(path) and not os.path.islink(path):
            state.pending.append((path, depth))
    return bool(stale), unchecked


def _walk(spec: WalkSpec, state: _State, deadline: float, keep: tuple[str, ...]) -> bool:
    """List pending directories until none is left or the deadline passes;
    past it, only the ancestors of ``keep`` (a short chain)."""
    walked = False
    while state.pending and time.monotonic() < deadline:
        path, depth = state.pending.popleft()
        walked = True
        _list(spec, state, path, depth)
    while True:
        must = [item for item in state.pending if _contains_any(item[0], keep)]
        if not must:
            return walked
        for item in must:
            state.pending.remove(item)
            _list(spec, state, *item)
            walked = True


def _contains_any(directory: str, paths: tuple[str, ...]) -> bool:
    prefix = directory.rstrip("/") + "/"
    return any(p == directory or p.startswith(prefix) for p in paths)


def _unreadable(spec: WalkSpec, state: _State, path: str, exc: OSError) -> None:
    """A directory that could not be looked at: gone, or no longer one, is
    left out; for another reason it is unlistable when the spec says so.
    From a review: a directory whose absolute path is longer than PATH_MAX
    (ENAMETOOLONG) was dropped as if empty and the search counted as done;
    `find longe -exec cat {} +` (a relative path fits) read a link to
    ~/.ssh/id_rsa, and `grep -r "" longe` a .env, both allowed."""
    if spec.report_unreadable and not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        state.unlistable.add(path)


def _list(spec: WalkSpec, state: _State, path: str, depth: int) -> None:
    try:
        before = os.lstat(path).st_ctime_ns
    except OSError as exc:
        _unreadable(spec, state, path, exc)
        return
    try:
        entries = list(os.scandir(path))
    except PermissionError:
        entries = []
        state.unlistable.add(path)  # enterable, not listable: hidden whole
    except OSError as exc:
        _unreadable(spec, state, path, exc)
        return
    now = time.time_ns()
    state.changed.append(path)
    known = path in state.dirs or path in state.relisted
    old_names = state.relisted.pop(path, state.found.get(path, set()))
    state.dirs[path] = 0 if now - before < _RACY_NS else before
    state.depth[path] = depth
    pending_before = len(state.pending)
    root = next((r for r in state.roots if path == r or path.startswith(r + "/")), "")
    names: set[str] = set()
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name in spec.match_dirs or (
                        spec.match_dir_name is not None and spec.match_dir_name(entry.name)):
                    names.add(entry.name)
                    continue
                if entry.name in spec.note_dirs:
                    names.add(entry.name)
                if depth < spec.max_depth and entry.path not in state.dirs:
                    skipped = entry.name in spec.skip_dirs or bool(
                        spec.skip_paths and os.path.relpath(entry.path, root) in spec.skip_paths)
                    if not skipped:
                        state.pending.append((entry.path, depth + 1))
                    elif spec.peek_skipped:
                        # listed at the last depth: its own entries are
                        # looked at, its subdirectories not entered
                        state.pending.append((entry.path, spec.max_depth))
            elif spec.match_dir_links and entry.is_symlink() and not entry.is_file():
                # a link to nothing yet counts: its target may appear later,
                # and the link's directory's ctime will not move (a review)
                names.add(entry.name + "/")
            else:
                if spec.match_file_links and entry.is_symlink():
                    # a reader handed this name reads wherever it leads
                    names.add(entry.name + FILE_LINK)
                if spec.match_file(entry.name):
                    names.add(entry.name)
        except OSError:
            continue
    if names:
        state.found[path] = names
    else:
        state.found.pop(path, None)
    if not known or names != old_names or len(state.pending) != pending_before:
        state.dirty = True
