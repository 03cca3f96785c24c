"""Removing what a run left on the host, whatever the command did to it.

Attack it answers (from a review, as an unprivileged user): a command made
a mode-000 directory holding 1 GB in its private ``/tmp``; the cleanup's
``rmtree(ignore_errors=True)`` could not enter it and said nothing, and the
gigabyte stayed on the host's disk. Here, a directory that cannot be
listed or emptied is given back to its owner (``u+rwx``) and the removal is
retried; what still stays is reported, never ignored.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat

#: removal passes before giving up (each one opens every locked directory)
_PASSES = 3


def remove_tree(path: str) -> str | None:
    """Remove ``path`` (a directory tree or a file, never following a
    symlink); None when it is gone, else a one-line problem."""
    error: OSError | None = None
    for _ in range(_PASSES):
        if not os.path.lexists(path):
            return None
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                import shutil  # noqa: PLC0415 - shutil pulls in bz2 and lzma: not for a check

                shutil.rmtree(path)
            else:
                os.unlink(path)
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            error = exc
            _open_up(path)
    return f"could not remove {path}: {error.strerror if error else 'unknown error'}"


def _open_up(top: str) -> None:
    """Give the owner rwx on every directory below ``top`` (symlinks are
    not followed: a link to a host directory is removed, not its target)."""
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            st = os.lstat(directory)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        if stat.S_IMODE(st.st_mode) & 0o700 != 0o700:
            with contextlib.suppress(OSError):
                os.chmod(directory, stat.S_IMODE(st.st_mode) | 0o700)
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))


#: caches kept per kind in the runtime directory (one per workspace)
KEEP_CACHES = 256


def prune_caches(directory: str, pattern: re.Pattern[str], keep: int = KEEP_CACHES) -> None:
    """Remove the least recently written files of ``directory`` whose names
    match ``pattern`` beyond the ``keep`` newest: one cache file per
    workspace would otherwise grow without bound (a test suite made ten
    thousand). Only looked at once a quarter more than ``keep`` exist."""
    with contextlib.suppress(OSError):
        entries = [e for e in os.scandir(directory) if pattern.fullmatch(e.name)]
        if len(entries) <= keep + keep // 4:
            return
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns)
        for entry in entries[: len(entries) - keep]:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
