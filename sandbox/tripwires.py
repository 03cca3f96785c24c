"""Tripwires, reports and symlink pins: checked after the run, undone.

For paths that a mount cannot guard (``.git/commondir``: any file there
breaks git) or that are cheaper to check than to mount (tool configs read
on the next `npm test`), the state before the run is recorded and compared
after it:

* created during the run: renamed aside with the suffix
  ``.quarantined-by-shellgate`` (nothing is deleted) and reported;
* a file changed or removed: put back from the copy taken before, what the
  command left kept beside it under the suffix, and reported;
* a protected symlink swapped for another link: the original link is put
  back (the swapped one kept under the suffix);
* a ``report`` path changed: reported, nothing undone.

Every step goes through directory descriptors below its writable root
(:mod:`sandbox.gitpaths`), never through a link; nothing raises.
"""

from __future__ import annotations

import contextlib
import os
import stat

from values import field, valueclass

from .gitconfig import read_regular
from .gitpaths import open_below, rename_aside
from .hashing import hex_digest
from .statkeys import MAX_DEPTH, MAX_ENTRIES, tree_keys, unreadable_key
from .venvwatch import PTH, VenvSnapshot, venv_reports, venv_snapshot

#: files larger than this are not copied before the run (a change is then
#: quarantined but the original cannot be put back: said so)
_MAX_COPY = 1 << 20


@valueclass
class Snapshot:
    """What was at a path before the run: kind ``absent``, ``file`` (with
    its bytes and mode, ``data`` None when too large), ``dir``, ``link``
    (with its target) or ``other``."""

    kind: str
    data: bytes | None = None
    mode: int = 0
    target: str = ""
    digest: str = ""
    #: a directory holding more than the entries or levels compared
    bounded: bool = False
    #: for a ``SITE/*.pth`` report: the virtualenv around it
    venv: VenvSnapshot | None = None


def snapshot(path: str, previous: Snapshot | None = None) -> Snapshot:
    if path.endswith(PTH):
        return Snapshot("venv", venv=venv_snapshot(path[: -len(PTH)],
                                                   previous.venv if previous else None))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Snapshot("absent")
    except OSError:
        return Snapshot("other")
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            return Snapshot("other")
        # and what it leads to: from a review, dotfiles-style links
        # (`~/.gradle/init.gradle -> ../dotfiles/init.gradle`) had their
        # target rewritten with no report, the link text unchanged
        return Snapshot("link", target=target, digest=_led_to(path))
    if stat.S_ISDIR(st.st_mode):
        digest, bounded = _dir_digest(path)
        return Snapshot("dir", digest=digest, bounded=bounded)
    if not stat.S_ISREG(st.st_mode):
        return Snapshot("other")
    data = _read(path) if st.st_size <= _MAX_COPY else None
    digest = (hex_digest(data) if data is not None
              else f"{st.st_ino}:{st.st_size}:{st.st_ctime_ns}")
    return Snapshot("file", data, stat.S_IMODE(st.st_mode), digest=digest)


def _led_to(path: str) -> str:
    """The state of what a link leads to: a small file's digest, a
    directory's tree, else its identity."""
    try:
        st = os.stat(path)
    except OSError:
        return "nothing"
    if stat.S_ISDIR(st.st_mode):
        return _dir_digest(path)[0]
    if stat.S_ISREG(st.st_mode) and st.st_size <= _MAX_COPY:
        data = read_regular(path, _MAX_COPY + 1)
        return hex_digest(data) if isinstance(data, bytes) else "unreadable"
    return f"{st.st_ino}:{st.st_size}:{st.st_ctime_ns}"


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, _MAX_COPY + 1)[:_MAX_COPY]
    except OSError:
        return None
    finally:
        os.close(fd)


def _dir_digest(path: str) -> tuple[str, bool]:
    """Every entry below a directory keyed by (name, inode, size, mtime,
    ctime), within a bound (and whether it was hit). Attack (issue 37):
    names and sizes one level deep missed a paused rebase's todo list
    rewritten at the same size (its `exec` line ran on the host's `git
    rebase --continue`) and a `~/.gradle/init.d` script rewritten so with
    its mtime put back; the ctime cannot be put back (sandbox.statkeys)."""
    try:
        keys, bounded = tree_keys(path)
    except OSError:
        return f"?{unreadable_key(path)}", False
    return hex_digest(repr(sorted(keys.items())).encode()), bounded


@valueclass(frozen=False, slots=False)
class Outcome:
    undone: list[str] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: every tripwire found different from before the run
    changed: list[str] = field(default_factory=list)


@valueclass(frozen=False, slots=False)
class Tripwires:
    """The before-state of every tripwire, report and pinned link."""

    roots: tuple[str, ...]
    wires: dict[str, Snapshot] = field(default_factory=dict)
    watched: dict[str, Snapshot] = field(default_factory=dict)
    links: dict[str, Snapshot] = field(default_factory=dict)

    @classmethod
    def before(cls, roots: tuple[str, ...], wires: tuple[str, ...], reports: tuple[str, ...],
               links: tuple[str, ...]) -> Tripwires:
        return cls(
            roots,
            {p: snapshot(p) for p in wires},
            {p: snapshot(p) for p in reports},
            {p: snapshot(p) for p in links},
        )

    def after(self) -> Outcome:
        out = Outcome()
        for path, before in self.wires.items():
            now = snapshot(path)
            _say_bound(path, before, now, out)
            self._undo(path, before, now, out, what="protected path")
        for path, before in self.links.items():
            now = snapshot(path)
            if now.kind != "link" or now.target != before.target:
                self._undo(path, before, now, out, what="protected link")
        for path, before in self.watched.items():
            now = snapshot(path, before)
            if before.venv is not None and now.venv is not None:
                reports, problems = venv_reports(path[: -len(PTH)], before.venv, now.venv)
                # two site-packages of one virtualenv (python3.11 and 3.12)
                # share its bin/ and pyvenv.cfg: each line once
                out.reports += [r for r in reports if r not in out.reports]
                out.problems += [p for p in problems if p not in out.problems]
                continue
            _say_bound(path, before, now, out)
            if (now.kind, now.digest) != (before.kind, before.digest):
                verb = {"absent": "created"}.get(before.kind, "changed")
                if now.kind == "absent":
                    verb = "removed"
                out.reports.append(f"{path} was {verb} during the run: review it")
        return out

    def _undo(self, path: str, before: Snapshot, now: Snapshot, out: Outcome, what: str) -> None:
        if (now.kind, now.digest, now.target) == (before.kind, before.digest, before.target):
            return
        out.changed.append(path)
        if before.kind == "link" and (now.kind, now.target) == ("link", before.target):
            # the link is as it was; the file it leads to changed, and is
            # not ours to put back from here
            out.reports.append(f"{what} {path} leads to {before.target}, which was changed "
                               "during the run: review it")
            return
        if before.kind in ("dir", "other"):
            # a directory cannot be put back from a copy: say so, move nothing
            out.reports.append(f"{what} {path} was changed during the run: review it")
            return
        root = next((r for r in self.roots if path.startswith(r.rstrip("/") + "/")), None)
        if root is None:
            return
        parent, name = os.path.split(path)
        rel = os.path.relpath(parent, root)
        parts = [] if rel == "." else rel.split("/")
        fd = open_below(root, parts)
        if fd is None:
            # A directory on the way was replaced by a link or a file
            # (`ln -s planted .cargo`, from a review): the tripwire would see
            # through it and give up. The impostor is renamed aside, real
            # directories are made in its place, and the check goes on.
            if not _clear_path(root, parts, out, create=before.kind != "absent"):
                return
            fd = open_below(root, parts)
            if fd is None:
                if before.kind != "absent":
                    out.problems.append(f"cannot check {path}: its directory cannot be restored")
                return  # nothing there any more, as before the run
            now = snapshot(path)
            if (now.kind, now.digest, now.target) == (before.kind, before.digest, before.target):
                os.close(fd)
                return
        try:
            kept = None
            if now.kind != "absent":
                kept = rename_aside(fd, name, parent, out.problems)
                if kept is None:
                    return
            restored = _put_back(fd, name, before)
            out.undone.append(path)
            note = f"the command's version is {os.path.join(parent, kept)}" if kept else ""
            if before.kind == "absent":
                out.reports.append(f"{what} {path} was created during the run; {note}")
            elif restored:
                out.reports.append(f"{what} {path} was changed during the run and is put back "
                                   f"as it was; {note or 'it had been removed'}")
            else:
                out.problems.append(f"{what} {path} was changed during the run and could not "
                                    f"be put back; {note}")
        finally:
            os.close(fd)


def _say_bound(path: str, before: Snapshot, now: Snapshot, out: Outcome) -> None:
    if before.bounded or now.bounded:
        out.problems.append(f"{path} holds more than {MAX_ENTRIES} entries or {MAX_DEPTH} "
                            f"levels: only those within were compared after the run, changes "
                            f"past them go unseen")


def _clear_path(root: str, parts: list[str], out: Outcome, *, create: bool) -> bool:
    """Make ``root/parts...`` real directories again: the first component
    that is not one is renamed aside (reported), the rest created when
    ``create`` (a file is to be put back there)."""
    fd = open_below(root, [])
    if fd is None:
        return False
    where = root
    try:
        for part in parts:
            try:
                st = os.lstat(part, dir_fd=fd)
                if not stat.S_ISDIR(st.st_mode):
                    kept = rename_aside(fd, part, where, out.problems)
                    if kept is None:
                        return False
                    out.undone.append(os.path.join(where, part))
                    out.reports.append(f"{os.path.join(where, part)} was replaced by a link or a "
                                       f"file during the run; renamed to {kept}")
                    raise FileNotFoundError
            except FileNotFoundError:
                if not create:
                    return True
                os.mkdir(part, 0o755, dir_fd=fd)
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
            os.close(fd)
            fd = nxt
            where = os.path.join(where, part)
    except OSError as exc:
        out.problems.append(f"cannot restore {where}: {exc.strerror}")
        return False
    finally:
        os.close(fd)
    return True


def _put_back(dir_fd: int, name: str, before: Snapshot) -> bool:
    """Recreate ``name`` as it was before the run (in ``dir_fd``)."""
    if before.kind == "absent":
        return True
    with contextlib.suppress(OSError):
        if before.kind == "link":
            os.symlink(before.target, name, dir_fd=dir_fd)
            return True
        if before.kind == "file" and before.data is not None:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         before.mode, dir_fd=dir_fd)
            with os.fdopen(fd, "wb") as handle:
                handle.write(before.data)
            return True
    return False
