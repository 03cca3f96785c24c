"""Escape tests: another user's home directory, seen by a run as root.

Root's plan sees into every home (its capabilities); the sandbox does not
(every capability dropped, and bubblewrap's own do not cover other users'
inodes). From a review: with any other user's `~/.ssh` or `~/.aws` under a
0700 home, every run as root failed with "bubblewrap failed: Can't mkdir
/home/alice/.ssh: Permission denied", and a change there during a run
killed it. Now such a home is hidden whole (sandbox/linux/reach.py), and
each test below proves from the host, with a control, that its secret
still cannot be read: not through the mode bits, not through a group, not
through an ACL that grants more than the bits say, not after its owner
opens it during the run.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from escape_kit import assert_secret_absent, consume_control, output, sh

pytestmark = [pytest.mark.sandbox]

#: a user that is not this process's, nor the unprivileged leg's (nobody),
#: which runs beside this one: a home the leg could see into would be
#: hidden by its runs too, and this test's cleanup would trip their watch
OTHER = 54321

_ACL_USER_OBJ, _ACL_USER, _ACL_GROUP_OBJ, _ACL_GROUP, _ACL_MASK, _ACL_OTHER = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20)


def _acl(*named: tuple[int, int, int]) -> bytes:
    """A POSIX access ACL in the kernel's xattr form: owner rwx, owning
    group and others nothing, and the ``named`` (tag, perm, id) entries, a
    mask granting what they grant."""
    def entry(tag: int, perm: int, qualifier: int = 0xFFFFFFFF) -> bytes:
        return struct.pack("<HHI", tag, perm, qualifier)

    users = [entry(*e) for e in named if e[0] == _ACL_USER]
    groups = [entry(*e) for e in named if e[0] == _ACL_GROUP]
    mask = 0
    for _, perm, _ in named:
        mask |= perm
    return (struct.pack("<I", 2) + entry(_ACL_USER_OBJ, 7) + b"".join(users)
            + entry(_ACL_GROUP_OBJ, 0) + b"".join(groups) + entry(_ACL_MASK, mask)
            + entry(_ACL_OTHER, 0))


@pytest.fixture
def other_home(token: str) -> Iterator[Callable[[], tuple[Path, str]]]:
    """Makes another user's home holding an AWS credentials file and an SSH
    key, mode 0700, in a directory of root's own under /var/tmp, and the run
    finds it as its HOME (as `sudo -E` leaves it; a home under /home is
    hidden by the same code). Not under /home: the unprivileged leg, running
    beside this one, hides every /home/* it cannot list (fail closed), and
    this test's cleanup there would trip its runs' watch. Not under /tmp:
    the sandbox's /tmp is its own, where bubblewrap makes any mount point."""
    if os.geteuid() != 0:
        pytest.skip("making another user's home needs root (the root leg runs this)")
    parent = Path(tempfile.mkdtemp(prefix="shellgate-test-homes-", dir="/var/tmp"))

    def make() -> tuple[Path, str]:
        home = Path(tempfile.mkdtemp(prefix="other-", dir=parent))
        secret = f"{token}-other-user-secret"
        for rel in (".aws/credentials", ".ssh/id_ed25519"):
            (home / rel).parent.mkdir(parents=True)
            (home / rel).write_text(secret + "\n")
        for path in (home, *home.rglob("*")):
            os.chown(path, OTHER, OTHER)
        home.chmod(0o700)
        return home, secret

    try:
        yield make
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _env(home: Path) -> dict[str, str]:
    """The run's environment, with ``home`` as its HOME."""
    return {**os.environ, "HOME": str(home)}


def _reads_nothing(workspace: Path, home: Path, secret: str) -> None:
    """The command tries both secrets, and starts: it ran (the control),
    and neither secret reached its output or the workspace."""
    proc = sh(workspace, f"cat {home}/.aws/credentials {home}/.ssh/id_ed25519 2>&1; "
                         "echo ran > control.txt", env=_env(home))
    consume_control(workspace, proc)
    assert proc.returncode == 0, output(proc)
    assert_secret_absent(workspace, proc, secret)


@pytest.mark.parametrize("mode", [0o700, 0o750, 0o701, 0o711, 0o755], ids=oct)
def test_a_run_as_root_starts_beside_another_users_home_and_reads_none_of_it(
        workspace: Path, other_home: Callable[[], tuple[Path, str]], mode: int) -> None:
    home, secret = other_home()
    home.chmod(mode)
    _reads_nothing(workspace, home, secret)


def test_a_home_open_to_a_group_of_roots_is_still_hidden(
        workspace: Path, other_home: Callable[[], tuple[Path, str]]) -> None:
    # the owning group is one the sandbox's user is in: searchable through
    # the group bits, so the hide must be mounted
    home, secret = other_home()
    os.chown(home, OTHER, os.getegid())
    home.chmod(0o750)
    _reads_nothing(workspace, home, secret)


def test_a_home_open_through_an_acl_is_still_hidden(
        workspace: Path, other_home: Callable[[], tuple[Path, str]]) -> None:
    # mode 0700 says "no way in"; the ACL lets root's group search it: a
    # check by the mode bits alone would have left the secret readable
    home, secret = other_home()
    try:
        os.setxattr(home, "system.posix_acl_access", _acl((_ACL_GROUP, 5, os.getegid())))
    except OSError as exc:
        pytest.fail(f"the filesystem of the test directory takes no POSIX ACL: {exc}")
    assert (home / ".aws" / "credentials").read_text()  # control: readable on the host
    _reads_nothing(workspace, home, secret)


def test_another_users_change_in_their_private_home_does_not_stop_a_run(
        workspace: Path, other_home: Callable[[], tuple[Path, str]]) -> None:
    # the mount watch lifts a run whose hidden paths change; one out of the
    # sandbox's reach is not mounted over, so its change lifts nothing
    home, _ = other_home()

    def churn() -> None:
        time.sleep(0.4)
        shutil.rmtree(home / ".aws")
        (home / ".aws").mkdir()

    changer = threading.Thread(target=churn)
    changer.start()
    try:
        proc = sh(workspace, "sleep 1.5; echo ran > control.txt", env=_env(home))
    finally:
        changer.join()
    consume_control(workspace, proc)
    assert proc.returncode == 0, output(proc)


def test_a_home_opened_by_its_owner_during_the_run_stays_hidden(
        workspace: Path, other_home: Callable[[], tuple[Path, str]]) -> None:
    # from the review of a first version, which left such paths unmounted:
    # the owner's `chmod 755 ~` during the run let the command read them
    home, secret = other_home()

    def opened() -> None:
        time.sleep(0.5)
        home.chmod(0o755)

    opener = threading.Thread(target=opened)
    opener.start()
    try:
        proc = sh(workspace, f"sleep 1.5; cat {home}/.aws/credentials {home}/.ssh/id_ed25519; "
                             "echo ran > control.txt", env=_env(home))
    finally:
        opener.join()
    consume_control(workspace, proc)
    assert_secret_absent(workspace, proc, secret)


def test_a_home_with_an_acl_that_grants_root_nothing_does_not_stop_a_run(
        workspace: Path, other_home: Callable[[], tuple[Path, str]]) -> None:
    # from the same review: any ACL once counted as "open", and a home with
    # `u:www-data:--x` failed every run as root again
    home, secret = other_home()
    os.setxattr(home, "system.posix_acl_access", _acl((_ACL_USER, 1, 33)))  # u:33:--x
    _reads_nothing(workspace, home, secret)


def test_covering_hides_the_closed_directory_unless_the_run_needs_inside_it(
        tmp_path: Path) -> None:
    from sandbox import load_profile
    from sandbox.linux.reach import covering
    from sandbox.plan import build_plan

    if os.geteuid() != 0:
        pytest.skip("another owner's directories need root to make")
    closed = tmp_path / "closed"
    (closed / "deep" / ".ssh").mkdir(parents=True)
    (closed / "work").mkdir()
    os.chown(closed, OTHER, OTHER)
    closed.chmod(0o700)
    open_dir = tmp_path / "open"
    (open_dir / ".ssh").mkdir(parents=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    plan = build_plan(load_profile("workspace-write"), str(ws), home=str(tmp_path),
                      private_tmp="/tmp", hide=(str(closed / "deep" / ".ssh"),
                                                str(open_dir / ".ssh")))
    mounted = covering(plan)
    assert str(closed) in mounted.hidden_dirs
    assert str(closed / "deep" / ".ssh") not in mounted.hidden_dirs
    assert str(open_dir / ".ssh") in mounted.hidden_dirs  # searchable: its own mount
    # a run working inside the closed directory keeps the path's own mount
    inside = build_plan(load_profile("workspace-write"), str(closed / "work"),
                        home=str(tmp_path), private_tmp="/tmp",
                        hide=(str(closed / "deep" / ".ssh"),))
    assert covering(inside).hidden_dirs == inside.hidden_dirs
