"""Whether a warm daemon's code is still the code installed: the package's
files as the daemon found them (:func:`fingerprint`), and an inotify watch
on them that tells a child, at the cost of one ``ioctl``, that none of them
has changed since (:class:`Sources`).

Why it matters: a daemon serves with the modules and data it loaded at its
start. After an upgrade, or an edit of a profile (the user tightened what
may be written), a call served by the old daemon would run under the old
rules. So every call checks, before it is served, that nothing changed; a
call that finds a change is served in the client's own process, and the
daemon leaves.

The full check stats every source file (about 200: 2-3 ms of every call).
The watch is set up *before* the daemon takes its fingerprint, so any
change after the fingerprint leaves an event in the queue; a child that
finds the queue empty, and the daemon not in the middle of a recheck, knows
nothing changed. Anything else — events queued (the daemon drains them only
after setting the shared "rechecking" flag, and clears the flag only when a
fresh fingerprint equals the first), a watch that could not be set up, a
linked file or directory whose target the watch would not see — sends the
child to the full check, which is the answer.

What is watched: every directory the fingerprint walks (its files' content,
times and names), the package's root and each library directory the
fingerprint names, and every directory above them (a directory moved away
and another put at its path: the path is what the fingerprint reads, the
watch would follow the moved one). A rename or removal of a watched
directory itself shows as an event too.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import sys
import termios
from importlib.machinery import PathFinder

from . import warm_client

__all__ = ["Fingerprint", "Sources", "fingerprint"]

#: per file: name, mtime, ctime, size, inode (ctime cannot be set back:
#: from a review, an edit of the same size with its mtime put back by
#: `touch -r` was served stale for as long as the daemon lived)
Fingerprint = tuple[tuple[str, int, int, int, int], ...]

#: the libraries whose upgrade makes the daemon stale (those it has loaded)
_LIBRARIES = ("tree_sitter", "tree_sitter_bash", "pydantic", "pydantic_core", "httpx",
              "psutil", "structlog")
#: the directories whose files make the daemon's version
_SOURCES = ("gateway", "analyzers", "sandbox", "profiles", "values", "regexes")
#: the files of theirs that count
_SUFFIXES = (".py", ".toml", ".json", ".sbpl")

# inotify(7)
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_MASK_ADD = 0x20000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
#: a directory of sources: anything about its files, its names, itself
_CONTENT = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
            | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF)
#: a directory above one: its names (and itself)
_NAMES = (_IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF
          | _IN_MOVE_SELF | _IN_ATTRIB)


def _walk(root: str) -> tuple[list[tuple[str, int, int, int, int]], list[str], bool]:
    """The source files (as :data:`Fingerprint` has them), the directories walked, and
    whether a link was met among them: a symbolic link (stat'ed through: its
    target's changes count, and no watch of ours sees them) or a file with
    another name elsewhere (from a review: an edit through a hard link made
    before the daemon started raised no event in any watched directory)."""
    files: list[tuple[str, int, int, int, int]] = []
    dirs: list[str] = []
    linked = False
    stack = [os.path.join(root, name) for name in _SOURCES]
    while stack:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        dirs.append(here)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(entry.path)
            elif entry.name.endswith(_SUFFIXES):
                linked = linked or entry.is_symlink()
                with contextlib.suppress(OSError):
                    st = entry.stat()  # a linked file: its target's change counts
                    files.append(_facts(entry.path, st))
                    linked = linked or st.st_nlink > 1
    return files, dirs, linked


def _facts(path: str, st: os.stat_result) -> tuple[str, int, int, int, int]:
    return (path, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _libraries() -> list[str]:
    """The directories of the libraries the service runs on (those with a
    module loaded, the package itself or only a submodule of it: the
    analyzer loads ``tree_sitter._binding`` without its package, and a
    review saw a grammar moved away go unnoticed): an upgrade replaces files
    in them, and changes their times."""
    out: list[str] = []
    for library in _LIBRARIES:
        found = sys.modules.get(library) or next(
            (m for name, m in list(sys.modules.items()) if name.startswith(library + ".")), None)
        where = os.path.dirname(getattr(found, "__file__", None) or "") if found else ""
        while where and os.path.basename(where) != library and os.path.dirname(where) != where:
            where = os.path.dirname(where)  # up from a submodule's file to the package
        if not where or os.path.basename(where) != library:
            # loaded by hand (analyzers/bash/grammar.py keeps the grammar's
            # extension out of sys.modules): where the same search finds it
            spec = PathFinder.find_spec(library)
            places = spec.submodule_search_locations if spec is not None else None
            where = next(iter(places), "") if places else ""
        if where:
            out.append(where)
    return out


def _snapshot(root: str, libraries: list[str] | None = None,
              ) -> tuple[Fingerprint, list[str], bool]:
    """The fingerprint (of ``libraries``, default :func:`_libraries`), the
    directories walked for it, and whether a link was met (see
    :func:`_walk`)."""
    files, dirs, linked = _walk(root)
    for where in _libraries() if libraries is None else libraries:
        with contextlib.suppress(OSError):
            files.append(_facts(where, os.stat(where)))
    return tuple(sorted(files)), dirs, linked


def fingerprint(root: str = warm_client.PACKAGE_ROOT) -> Fingerprint:
    """Name, times, size and inode of every source and data file of the package,
    and of the library directories: when it changes, the daemon's code is
    not the code installed."""
    return _snapshot(root)[0]


class _Inotify:
    """An inotify instance (libc through ctypes: loaded by the daemon only)."""

    def __init__(self) -> None:
        import ctypes  # noqa: PLC0415 -- the daemon's start only

        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = int(self.libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC))
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")

    def add(self, path: str, mask: int) -> bool:
        return int(self.libc.inotify_add_watch(
            self.fd, os.fsencode(path), mask | _IN_ONLYDIR | _IN_DONT_FOLLOW | _IN_MASK_ADD)) >= 0


def _above(path: str) -> list[str]:
    """Every directory above ``path``, up to the root."""
    out: list[str] = []
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return out
        out.append(parent)
        path = parent


class Sources:
    """The package's fingerprint at the daemon's start, and the watch that
    says cheaply that it still holds (see the module's docstring)."""

    def __init__(self, root: str = warm_client.PACKAGE_ROOT) -> None:
        self.root = root
        #: the library directories, found once (the service's modules are
        #: loaded by now)
        self.libraries = _libraries()
        #: the watch, and the directories it watches: a walk of its own, as
        #: the fingerprint must be taken after the watch is armed (a change
        #: in between is then an event, or in the fingerprint)
        self.watch, self.dirs = self._watch(root, self.libraries)
        #: one shared byte, set while the daemon rechecks after events (and
        #: left set when the sources changed): children then check in full
        self.flag = mmap.mmap(-1, 1)
        self.print = _snapshot(root, self.libraries)[0]

    @staticmethod
    def _watch(root: str, libraries: list[str]) -> tuple[int, list[str]]:
        """The inotify descriptor watching everything the fingerprint reads
        (-1: none could be set up, or a link makes it blind somewhere), and
        the source directories it watches."""
        _, dirs, linked = _snapshot(root, libraries)
        try:
            inotify = _Inotify()
        except OSError:
            return -1, dirs
        tops = [root, *libraries]
        # a link anywhere on the way: the path the fingerprint reads is not
        # the directory the watch would see
        linked = linked or any(os.path.realpath(p) != p for p in [*tops, *dirs])
        ok = not linked and all(inotify.add(d, _CONTENT) for d in [*dirs, *tops])
        ok = ok and all(inotify.add(d, _NAMES) for d in {a for t in tops for a in _above(t)})
        if not ok:
            os.close(inotify.fd)
            return -1, dirs
        return inotify.fd, dirs

    def _queued(self) -> int:
        buf = bytearray(4)
        fcntl.ioctl(self.watch, termios.FIONREAD, buf)
        return int.from_bytes(buf, sys.byteorder)

    def changed(self) -> bool:
        """Has any source file changed since the daemon's start? (A child's
        question, before it serves its call.) The queue is read before the
        flag: the daemon raises the flag before it reads events away, so a
        child that finds the queue empty and then the flag down saw either
        no event at all or the daemon's verdict on them (from a review: in
        the other order, a recheck between the two reads let a child serve
        a change already made, 6 times in 10,898 under load)."""
        with contextlib.suppress(OSError):
            if self.watch >= 0 and not self._queued() and not self.flag[0]:
                return False
        return _snapshot(self.root, self.libraries)[0] != self.print

    def recheck(self) -> bool:
        """The daemon's own look, between calls (True: the sources changed,
        the daemon leaves). The flag is raised (children check in full),
        the queued events are read away, and the tree is walked again; the
        flag comes down only when the fingerprint is the first and the
        watch still sees all of it: the same directories (a new one is not
        watched) and no link (one put in since: its target is not watched).
        Run whatever the queue holds, about once a second (warm_daemon): a
        change no event reports — a write through a shared mapping, a bind
        mount over a source, a copy changed through a hard link made before
        the daemon started — is found here, within that second, by the
        full fingerprint (from a review: each served stale calls for as
        long as the daemon lived)."""
        if self.watch < 0:
            return _snapshot(self.root, self.libraries)[0] != self.print
        try:
            self.flag[0] = 1
            with contextlib.suppress(BlockingIOError):
                while os.read(self.watch, 1 << 16):
                    pass
        except OSError:
            return True  # a watch that cannot be read: leave, a new daemon starts
        now, dirs, linked = _snapshot(self.root, self.libraries)
        if now != self.print or sorted(dirs) != sorted(self.dirs) or linked:
            return True
        self.flag[0] = 0
        return False
