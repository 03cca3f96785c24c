"""Where a path leads, as the kernel resolves it: one resolver for the
bash analyzer's questions, the file tools and ``shellgate hook``.

The kernel walks a path a name at a time, and ``..`` climbs out of where
the walk *is* — after a link, out of the link's target. Read lexically,
``l/../.ssh/id_rsa`` with ``l -> .`` in a project under the home stays in
the project; the kernel opens ``~/.ssh/id_rsa`` (from a review: `cat`,
`ls -la` and the Read tool printed the key). So ``..`` is applied to the
path resolved so far, never to the text.

A name that cannot be looked at — a directory on the way that is not
searchable, a loop, a name too long, any error but "not there" or "not a
directory" — is :data:`UNRESOLVED`: where the path leads is unknown, and
the caller asks. Never "no link": from a review, `chmod 000` on a parent
turned a link to ``~/.ssh/id_rsa`` below it into an allow.
"""

from __future__ import annotations

import errno
import os
import stat

from analyzers import UNRESOLVED

__all__ = ["UNRESOLVED", "Resolver", "kernel_path", "real_path"]

#: the kernel gives up after this many links on one path (ELOOP)
MAX_LINKS = 40
#: errors after which the rest of the path is kept as written: the kernel
#: stops there with the same error, so the command opens nothing below
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR})

#: where a link's target means something else in the process that reads
#: it: /proc/self is the reader, /proc/self/cwd its directory, /dev/fd/N
#: its descriptors (and /dev/stdin … are links into them)
_PER_PROCESS = ("/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def kernel_path(path: str) -> str:
    """Where the absolute ``path`` (``..`` and ``.`` as written) leads, or
    :data:`UNRESOLVED`. A path whose resolution enters :data:`_PER_PROCESS`
    stops there (``/proc/self/cwd/y``: outside every project, asked): the
    gateway's own process would answer for the command's. From a review:
    with t/x -> /proc/self/cwd/y, `cd sub && find $PWD/t -exec cat {} +`
    read sub/y (a link to ~/.ssh/id_rsa), while the gateway, in the
    project, resolved t/x to the harmless y and allowed it."""
    todo = [p for p in reversed(path.split("/")) if p not in ("", ".")]
    real = ""
    links = 0
    while todo:
        name = todo.pop()
        if name == "..":
            real = real.rsplit("/", 1)[0]  # `real` holds no link: its parent is the kernel's
            continue
        candidate = f"{real}/{name}"
        if any(candidate == p or candidate.startswith(p + "/") for p in _PER_PROCESS):
            return "/".join((candidate, *reversed(todo)))
        try:
            mode = os.lstat(candidate).st_mode
        except OSError as exc:
            if exc.errno not in _ABSENT:
                return UNRESOLVED
            real = candidate  # the kernel stops here: the rest as written
            continue
        if not stat.S_ISLNK(mode):
            real = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            return UNRESOLVED
        try:
            target = os.readlink(candidate)
        except OSError:
            return UNRESOLVED
        if target.startswith("/"):
            real = ""
        todo.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
    return real or "/"


def real_path(path: str) -> str:
    """:func:`kernel_path` of ``path`` made absolute (not normalized: a
    ``..`` after a link climbs out of its target)."""
    return kernel_path(path if path.startswith("/") else os.path.join(os.getcwd(), path))


class Resolver:
    """:func:`kernel_path` for the many paths of one command, each
    directory on their way looked at once (a command's paths share their
    leading directories: a walk per path lstats every component of every
    path, a tenth of a `check --jsonl` line). Made afresh for each command,
    as the facts are; a path that is not absolute and normalized goes to
    :func:`kernel_path` itself."""

    def __init__(self) -> None:
        #: prefixes looked at: there, and not links
        self._seen: set[str] = set()
        #: prefixes that do not exist, or whose parent is no directory:
        #: nothing below them can be looked at either (the kernel stops at
        #: them with the same error), so the rest is kept as written
        self._absent: set[str] = set()

    def __call__(self, path: str) -> str:
        """``path`` itself (the very object) when no link is on its way,
        else where it leads (:data:`UNRESOLVED` when that is unknown)."""
        if not path.startswith("/") or path.startswith("//") or path != os.path.normpath(path):
            return real_path(path)
        seen, absent = self._seen, self._absent
        end = 0
        while True:
            end = path.find("/", end + 1)
            prefix = path if end < 0 else path[:end]
            if prefix in absent:
                return path
            if prefix not in seen:
                try:
                    mode = os.lstat(prefix).st_mode
                except OSError as exc:
                    if exc.errno not in _ABSENT:
                        return UNRESOLVED
                    absent.add(prefix)
                    return path
                if stat.S_ISLNK(mode):
                    return kernel_path(path)
                seen.add(prefix)
            if end < 0:
                return path
