"""Keys of files and directory trees that a command cannot put back.

Attack (issue 37): a file rewritten in place at the same size, its mtime
then set back (`touch -d`, `os.utime`), keeps its name, size and mtime: a
key of those saw nothing, and the host later ran the file (a paused
rebase's todo list on `git rebase --continue`, a `~/.gradle/init.d` script
on the next build, a virtualenv's start-up code). The inode change time
cannot be set from user space: every write, truncate, chmod, rename or
`utime` sets it to the current time, and putting it back would take the
clock itself (CAP_SYS_TIME, which no sandboxed command holds). So a key of
(inode, size, mtime, ctime) changes whenever a file does, with no need to
read it.

What it cannot see: the kernel stamps times from a coarse clock (a tick, a
few milliseconds). A file changed before the snapshot and again within the
same tick keeps its ctime; the snapshot is taken before the command starts,
so only a writer already running then (none: each run's processes end with
it) could use that. Files small enough to read are hashed by the callers
where they decide what runs (see :mod:`sandbox.tripwires`).
"""

from __future__ import annotations

import os
import stat

#: what a key is: a tuple of stat fields (no string is formatted per entry:
#: a tree of a thousand entries is keyed twice a run)
Key = tuple[int, ...]

#: entries of one tree keyed before and after a run: past it, the rest are
#: not compared (and the caller says so)
MAX_ENTRIES = 10_000
#: levels below the tree's top that are walked
MAX_DEPTH = 8


def stat_key(st: os.stat_result) -> Key:
    """The key of one entry: its type and mode, inode, size, mtime and
    ctime. A directory's own size and times are left out: they change when
    an entry is made and removed again (the empty files bubblewrap mounts
    over come and go in existing directories), and its entries are keyed
    themselves."""
    if stat.S_ISDIR(st.st_mode):
        return (st.st_mode, st.st_ino)
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def unreadable_key(path: str) -> Key:
    """The key of a directory that cannot be listed: its mode, inode and
    change time. Attack (a review): `chmod 300 .git/rebase-merge`, then in
    a later run `chmod 700`, append an `exec` line to the todo list and
    `chmod 300` again — listed as a constant, the directory never looked
    changed; each chmod moves its ctime, which nothing can set back."""
    try:
        st = os.lstat(path)
    except OSError:
        return ()
    return (st.st_mode, st.st_ino, st.st_ctime_ns)


def tree_keys(path: str, limit: int = MAX_ENTRIES) -> tuple[dict[str, Key], bool]:
    """Every entry below ``path`` (links not followed), by path relative to
    it, in name order, up to ``limit`` entries and :data:`MAX_DEPTH`
    levels; and whether a bound was hit. Raises OSError when ``path``
    cannot be listed."""
    keys: dict[str, Key] = {}
    bounded = False
    pending: list[tuple[str, str, int]] = [(path, "", 0)]
    while pending:
        directory, prefix, depth = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=_name)
        except OSError:
            if not prefix:
                raise
            keys[prefix + "?"] = unreadable_key(directory)
            continue
        below = []
        for entry in entries:
            if len(keys) >= limit:
                return keys, True
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # removed while listed
            rel = prefix + entry.name
            keys[rel] = stat_key(st)
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 > MAX_DEPTH:
                    bounded = True
                else:
                    below.append((entry.path, rel + "/", depth + 1))
        pending += reversed(below)
    return keys, bounded


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name
