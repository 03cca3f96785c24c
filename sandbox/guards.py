"""Before and after every run, whatever the backend (bwrap, seatbelt, none):
the workspace lock, the stub record, the tripwires and the gitlink guard.

* **Stubs.** bwrap creates an empty file or directory on the host as the
  mount point for each missing protected path (``.mcp.json``,
  ``.shellgate/`` …). They are written down before the run and removed once
  no run holds the workspace, even if the run that made them died.
* **Tripwires.** Paths that must not appear during a run but cannot be
  blocked by a mount without breaking git (``.git/commondir``): anything
  there afterwards is removed and reported.
* **Gitlinks.** :mod:`sandbox.gitguard` defuses a nested repository
  registered during the run.

Every step here reads what the command could write, so none may hang,
follow a link out of the workspace or raise: problems become lines in the
:class:`GuardOutcome`, and the run's result carries them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import SandboxUnavailable
from .gitguard import GitGuard
from .plan import HOME_WRITE_DENY, MANDATORY_WRITE_DENY, FsPlan

if TYPE_CHECKING:
    from .run import Backend

_STUB_NAMES = frozenset(
    rel.split("/")[i]
    for rel, _ in (*MANDATORY_WRITE_DENY, *HOME_WRITE_DENY)
    for i in range(len(rel.split("/")))
) | {"commondir"}


def runtime_dir() -> Path:
    """A private per-user directory for sandbox scratch state (0700, owned by
    us, not a symlink: another user must not be able to pre-create it).
    Checked on every call (it can be removed), created when missing."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    path = base / f"shellgate-{os.getuid()}"
    try:
        st = path.lstat()
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise SandboxUnavailable(f"{path} is not a private directory owned by this user")
    return path


@dataclass
class GuardOutcome:
    """What the post-run guards found: paths the command created at a
    tripwire (removed), paths renamed by the gitlink guard, problems."""

    tampered: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class Guards:
    """The pre-run state the post-run step compares against."""

    tripwires: list[str]
    git: GitGuard

    @classmethod
    def before(cls, plan: FsPlan, *, home: str, backend: Backend | None) -> Guards:
        git = GitGuard(home, backend, runtime_dir() / "gitlinks.json")
        try:
            git.before(plan.writable)
        except Exception as exc:  # reported after the run; never a crash
            git.problems.append(f"gitlink check before the run failed: {exc}")
        return cls([p for p in plan.tripwires if not os.path.lexists(p)], git)

    def after(self) -> GuardOutcome:
        """Never raises: a guard that fails is a problem line."""
        outcome = GuardOutcome()
        try:
            outcome.tampered += _check_tripwires(self.tripwires)
        except Exception as exc:
            outcome.problems.append(f"tripwire check failed: {exc}")
        report = self.git.after()
        outcome.tampered += report.defused
        outcome.problems += report.problems
        return outcome


@contextlib.contextmanager
def run_lock() -> Iterator[Path]:
    """Shared lock held by every run of this user for its whole duration;
    yields the file where created stubs are recorded (see
    :func:`_cleanup_stubs`). One lock for all runs, not one per workspace:
    two runs whose writable roots overlap (`--cwd a --allow-write ~` and
    `--cwd b --allow-write ~`) see each other's stubs as existing protected
    paths and bind them read-only; removing a stub that another run has
    mounted detaches that mount in the other run's namespace, and the
    write-deny with it. So stubs go only when no run at all is active. The
    runtime directory is hidden inside every sandbox, and the lock is never
    opened through a symlink."""
    lock_path = runtime_dir() / "runs.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            yield lock_path.with_suffix(".stubs")
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            _cleanup_stubs(fd, lock_path.with_suffix(".stubs"))
    finally:
        os.close(fd)


def record_stubs(plan: FsPlan, record: Path) -> None:
    """Stubs that bwrap will create on the host (mount points for missing
    protected paths) are written down before the run, so that they are
    removed even if this process dies."""
    created = [path for path, _ in plan.stubs if not os.path.lexists(path)]
    if created:
        with open(record, "a", encoding="utf-8") as handle:
            handle.write("".join(p + "\n" for p in created))


def _cleanup_stubs(fd: int, record: Path) -> None:
    """Remove recorded stubs once no run holds the workspace (exclusive lock
    without waiting; if another run is active, it cleans up when it ends).
    Only empty files and empty directories are removed."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return
    try:
        try:
            paths = record.read_text("utf-8").splitlines()
        except (FileNotFoundError, UnicodeDecodeError):
            return
        for path in dict.fromkeys(paths):
            if not _is_stub_name(path):
                continue  # only ever a mandatory-deny name; never an arbitrary path
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISDIR(st.st_mode):
                    os.rmdir(path)  # fails unless empty
                elif stat.S_ISREG(st.st_mode) and st.st_size == 0:
                    os.unlink(path)
        record.unlink(missing_ok=True)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _is_stub_name(path: str) -> bool:
    return os.path.isabs(path) and os.path.basename(path) in _STUB_NAMES


def _check_tripwires(before: list[str]) -> list[str]:
    """Remove what the command created at a tripwire path; report it."""
    tampered = []
    for path in before:
        if os.path.lexists(path):
            tampered.append(path)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
    return tampered
