"""Which of many candidate paths exist, answered from directory listings.

The sensitive list has about 150 entries, applied to every home directory:
some 600 candidate paths per run, nearly all absent. One ``lstat`` each
costs more than the whole rest of the plan, so the candidates are grouped
by parent directory, each parent is listed once, and the listing is kept in
memory while the parent's identity and ctime stay the same (adding,
removing or renaming an entry changes it; unlike the mtime, which `touch
-d` or `cp -a` set back, nothing can set it back). A parent changed too
recently to trust its ctime (a change in the same clock tick would not move
it) is listed again next time; a parent that can be searched but not read
(mode 0711) falls back to one ``lstat`` per candidate.
"""

from __future__ import annotations

import os
import time

_RACY_NS = 2_000_000_000
_UNKNOWN: frozenset[str] = frozenset({"\0unknown"})
#: parent -> ((device, inode, ctime_ns), names); ctime 0 means "list again"
_CACHE: dict[str, tuple[tuple[int, int, int], frozenset[str]]] = {}


#: (parent, its own parent, its own name, the names wanted in it)
Candidates = tuple[tuple[str, str, str, frozenset[str]], ...]


def group(paths: list[str]) -> Candidates:
    """``paths`` (absolute, normalized) grouped as (parent, names), every
    ancestor of a parent listed before it (so that a missing ancestor ends
    the search early): done once per set of candidates, not per run."""
    by_parent: dict[str, set[str]] = {}
    for path in paths:
        parent, _, name = path.rpartition("/")
        parent = parent or "/"
        if parent in by_parent:
            by_parent[parent].add(name)
            continue
        by_parent[parent] = {name}
        while (up := os.path.dirname(parent)) != parent and up not in by_parent:
            by_parent[up] = set()
            parent = up
    ordered = sorted(by_parent, key=lambda p: (p.count("/"), p))
    return tuple(
        (parent, os.path.dirname(parent), os.path.basename(parent), frozenset(by_parent[parent]))
        for parent in ordered
    )


def existing(candidates: Candidates) -> list[str]:
    """The candidates that exist (a dangling symlink exists)."""
    out: list[str] = []
    seen: dict[str, frozenset[str] | None] = {}
    for parent, up, own_name, wanted in candidates:
        above = seen.get(up, _UNKNOWN) if up != parent else _UNKNOWN
        if above is not _UNKNOWN and above is not None and own_name not in above:
            seen[parent] = frozenset()  # `~/.config/x` costs nothing without `~/.config`
            continue
        names = seen[parent] = _names(parent)
        if not wanted:
            continue
        if names is None:
            hits = [n for n in wanted if os.path.lexists(os.path.join(parent, n))]
        else:
            hits = list(wanted & names)
        out += [os.path.join(parent, n) for n in sorted(hits)]
    return out


def _names(parent: str) -> frozenset[str] | None:
    """The entries of ``parent`` (empty if it does not exist), or None when
    it cannot be listed."""
    try:
        st = os.stat(parent)
    except OSError:
        return frozenset()
    key = (st.st_dev, st.st_ino, st.st_ctime_ns)
    cached = _CACHE.get(parent)
    if cached is not None and cached[0] == key and key[2] != 0:
        return cached[1]
    try:
        names = frozenset(os.listdir(parent))
    except OSError:
        return None
    racy = time.time_ns() - st.st_ctime_ns < _RACY_NS
    _CACHE[parent] = ((st.st_dev, st.st_ino, 0 if racy else st.st_ctime_ns), names)
    return names
