"""Hidden paths a sandboxed command could not reach anyway: not mounted over,
not watched.

The plan hides the sensitive list in every account's home directory. Built
by root, it sees into other users' private homes (``/home/alice``, mode
0700) through root's capabilities; bubblewrap and the command have none
there (the command runs with every capability dropped; bubblewrap's, in its
own user namespace, do not cover inodes of users it does not map). So
bubblewrap could not make the mount point and the run failed: from a
review, with any other user's ``~/.ssh`` or ``~/.aws`` under a 0700 home,
every `shellgate run` as root ended "bubblewrap failed: Can't mkdir
/home/alice/.ssh: Permission denied" (exit 125); and a change in such a
directory during a run tripped the mount watch and killed the run.

A path is out of reach when a directory above it lets the sandbox's
credentials (this process's user and groups) not search it by its mode
bits, and that directory is neither the sandbox user's own (its owner may
chmod it) nor carries an access ACL (which may grant more than the bits
say). What bubblewrap cannot reach, the command cannot either: hiding it
adds nothing. The plan itself is unchanged — what it says a command may
read (``FsPlan.may_read``, which the gateway's file tools follow) still
names the path hidden.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

_ACL = "system.posix_acl_access"


class _Credentials:
    """The sandbox's user and groups (bubblewrap keeps this process's), and
    what each directory allows them, memoized for one plan."""

    def __init__(self) -> None:
        self.uid = os.geteuid()
        self.gids = {os.getegid(), *os.getgroups()}
        self.searchable: dict[str, bool] = {}

    def may_search(self, directory: str) -> bool:
        known = self.searchable.get(directory)
        if known is None:
            known = self.searchable[directory] = self._may_search(directory)
        return known

    def _may_search(self, directory: str) -> bool:
        try:
            st = os.stat(directory)
        except OSError:
            return True  # not for this check to decide: the plan's own rules do
        if not stat.S_ISDIR(st.st_mode) or st.st_uid == self.uid or _has_acl(directory):
            return True
        if st.st_gid in self.gids:
            return bool(st.st_mode & stat.S_IXGRP)
        return bool(st.st_mode & stat.S_IXOTH)


def _has_acl(directory: str) -> bool:
    try:
        return _ACL in os.listxattr(directory)
    except OSError:
        return False  # no extended attributes here: no ACL either


def out_of_reach(paths: Iterable[str]) -> frozenset[str]:
    """The absolute, normalized ``paths`` below a directory the sandbox's
    credentials may not search."""
    creds = _Credentials()
    out: set[str] = set()
    for path in paths:
        parent = os.path.dirname(path)
        ancestors = []
        while parent and parent not in ancestors:
            ancestors.append(parent)
            if parent == "/":
                break
            parent = os.path.dirname(parent)
        if not all(creds.may_search(a) for a in reversed(ancestors)):
            out.add(path)
    return frozenset(out)
