"""Hidden paths below a directory the sandbox may not enter: the directory
is hidden instead.

The plan hides the sensitive list in every account's home directory. Built
by root, it sees into other users' private homes (``/home/alice``, mode
0700) through root's capabilities; bubblewrap has none there (in its own
user namespace its capabilities do not cover inodes of users it does not
map), so it could not make the mount point: from a review, with any other
user's ``~/.ssh`` or ``~/.aws`` under a 0700 home, every `shellgate run` as
root ended "bubblewrap failed: Can't mkdir /home/alice/.ssh: Permission
denied" (exit 125), and a change in such a directory during a run tripped
the mount watch and killed the run.

So for a hidden path below a directory whose mode bits let the sandbox's
credentials (this process's user and groups; the command runs with every
capability dropped) not search it, that directory is hidden whole: its
mount point lies in a directory bubblewrap can search. This hides more
than the plan asks, never less, whatever the directory's real rules are.
From the review of a first version, which left such paths unmounted as "out
of reach": on a filesystem that does not decide by the mode bits (FUSE
without default_permissions, NFS with no_root_squash, CIFS with noperm) or
under an ACL the command could read them anyway, and a `chmod o+x` of the
directory by its owner during the run opened them. A mount in the
sandbox's namespace holds through all of that.

A directory that holds something the run must see (the working directory,
a writable root, a path the plan mounts) is not hidden: the path keeps its
own mount, and bubblewrap's failure to make it fails the run closed, as
before. The plan itself is unchanged: what it says a command may read
(``FsPlan.may_read``, which the gateway's file tools follow) is the plan's.
"""

from __future__ import annotations

import os
import stat

from values import replace

from ..plan import _inside  # the plan's own containment test

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..plan import FsPlan


class _Credentials:
    """The sandbox's user and groups (bubblewrap keeps this process's), and
    whether each directory's mode bits let them search it, memoized for
    one plan."""

    def __init__(self) -> None:
        self.uid = os.geteuid()
        self.gids = {os.getegid(), *os.getgroups()}
        self.closed: dict[str, bool] = {}

    def closed_to_them(self, directory: str) -> bool:
        known = self.closed.get(directory)
        if known is None:
            known = self.closed[directory] = self._closed(directory)
        return known

    def _closed(self, directory: str) -> bool:
        try:
            st = os.stat(directory)
        except OSError:
            return False  # not for this rule to decide: the plan's own mounts stand
        if not stat.S_ISDIR(st.st_mode) or st.st_uid == self.uid:
            return False  # its owner may chmod it: never counted closed
        bit = stat.S_IXGRP if st.st_gid in self.gids else stat.S_IXOTH
        return not st.st_mode & bit


def _ancestors(path: str) -> list[str]:
    """The directories above ``path`` (absolute, normalized), outermost first."""
    out: list[str] = []
    parent = os.path.dirname(path)
    while parent not in out:
        out.append(parent)
        parent = os.path.dirname(parent)
    return out[::-1]


def covering(plan: FsPlan) -> FsPlan:
    """``plan`` as bubblewrap mounts it: each hidden path below a directory
    closed to the sandbox's credentials replaced by the outermost such
    directory (hidden whole), unless that directory holds a path the run
    must see."""
    creds = _Credentials()
    keep = [plan.cwd, *([plan.workspace] if plan.workspace else []), *plan.writable,
            *plan.pinned, *plan.protected,
            *plan.empty_dirs, *([plan.private_tmp] if plan.private_tmp else [])]
    dirs: list[str] = []
    files: list[str] = []
    pairs = [*((p, dirs) for p in plan.hidden_dirs), *((p, files) for p in plan.hidden_files)]
    for hidden, into in pairs:
        closed = next((d for d in _ancestors(hidden) if creds.closed_to_them(d)), None)
        if closed is None or any(_inside(k, closed) for k in keep):
            into.append(hidden)
        else:
            dirs.append(closed)
    if dirs == list(plan.hidden_dirs) and files == list(plan.hidden_files):
        return plan
    dirs = list(dict.fromkeys(dirs))
    dirs = [d for d in dirs if not any(d != o and _inside(d, o) for o in dirs)]
    files = [f for f in dict.fromkeys(files) if not any(_inside(f, d) for d in dirs)]
    return replace(plan, hidden_dirs=tuple(dirs), hidden_files=tuple(files))

