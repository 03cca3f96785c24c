"""Escape tests: another user's home directory, seen by a run as root.

Root's plan sees into every home (its capabilities); the sandbox does not
(every capability dropped, and bubblewrap's own do not cover other users'
inodes). From a review: with any other user's `~/.ssh` or `~/.aws` under a
0700 home, every run as root failed with "bubblewrap failed: Can't mkdir
/home/alice/.ssh: Permission denied", and a change there during a run
killed it. Now a hidden path the sandbox cannot reach is left unmounted —
and each test below proves from the host, with a control, that its secret
still cannot be read: not through the mode bits, not through a group, not
through an ACL that grants more than the bits say.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from escape_kit import assert_secret_absent, consume_control, output, sh

pytestmark = [pytest.mark.sandbox]

OTHER = 65534  # nobody: a user that is not this process's

_ACL_USER_OBJ, _ACL_GROUP_OBJ, _ACL_GROUP, _ACL_MASK, _ACL_OTHER = 0x01, 0x04, 0x08, 0x10, 0x20


def _acl_granting_group(gid: int) -> bytes:
    """A POSIX access ACL (the kernel's xattr form): owner rwx, owning group
    nothing, group ``gid`` r-x, others nothing."""
    def entry(tag: int, perm: int, qualifier: int = 0xFFFFFFFF) -> bytes:
        return struct.pack("<HHI", tag, perm, qualifier)

    return (struct.pack("<I", 2) + entry(_ACL_USER_OBJ, 7) + entry(_ACL_GROUP_OBJ, 0)
            + entry(_ACL_GROUP, 5, gid) + entry(_ACL_MASK, 5) + entry(_ACL_OTHER, 0))


@pytest.fixture
def other_home(token: str) -> Iterator[tuple[Path, str]]:
    """Another user's home under /home (where every account's home is
    looked for), holding an AWS credentials file and an SSH key."""
    if os.geteuid() != 0:
        pytest.skip("making another user's home needs root (the root leg runs this)")
    home = Path(tempfile.mkdtemp(prefix="shellgate-other-", dir="/home"))
    secret = f"{token}-other-user-secret"
    for rel in (".aws/credentials", ".ssh/id_ed25519"):
        (home / rel).parent.mkdir(parents=True)
        (home / rel).write_text(secret + "\n")
    for path in (home, *home.rglob("*")):
        os.chown(path, OTHER, OTHER)
    try:
        yield home, secret
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _reads_nothing(workspace: Path, home: Path, secret: str) -> None:
    """The command tries both secrets, and starts: it ran (the control),
    and neither secret reached its output or the workspace."""
    proc = sh(workspace, f"cat {home}/.aws/credentials {home}/.ssh/id_ed25519 2>&1; "
                         "echo ran > control.txt")
    consume_control(workspace, proc)
    assert proc.returncode == 0, output(proc)
    assert_secret_absent(workspace, proc, secret)


@pytest.mark.parametrize("mode", [0o700, 0o750, 0o701, 0o711, 0o755], ids=oct)
def test_a_run_as_root_starts_beside_another_users_home_and_reads_none_of_it(
        workspace: Path, other_home: tuple[Path, str], mode: int) -> None:
    home, secret = other_home
    home.chmod(mode)
    _reads_nothing(workspace, home, secret)


def test_a_home_open_to_a_group_of_roots_is_still_hidden(
        workspace: Path, other_home: tuple[Path, str]) -> None:
    # the owning group is one the sandbox's user is in: searchable through
    # the group bits, so the hide must be mounted
    home, secret = other_home
    os.chown(home, OTHER, os.getegid())
    home.chmod(0o750)
    _reads_nothing(workspace, home, secret)


def test_a_home_open_through_an_acl_is_still_hidden(
        workspace: Path, other_home: tuple[Path, str]) -> None:
    # mode 0700 says "no way in"; the ACL lets root's group search it: a
    # check by the mode bits alone would have left the secret readable
    home, secret = other_home
    home.chmod(0o700)
    try:
        os.setxattr(home, "system.posix_acl_access", _acl_granting_group(os.getegid()))
    except OSError as exc:
        pytest.fail(f"the filesystem under /home takes no POSIX ACL here: {exc}")
    assert (home / ".aws" / "credentials").read_text()  # control: readable on the host
    _reads_nothing(workspace, home, secret)


def test_another_users_change_in_their_private_home_does_not_stop_a_run(
        workspace: Path, other_home: tuple[Path, str]) -> None:
    # the mount watch lifts a run whose hidden paths change; one out of the
    # sandbox's reach is not mounted over, so its change lifts nothing
    home, _ = other_home
    home.chmod(0o700)

    def churn() -> None:
        time.sleep(0.4)
        shutil.rmtree(home / ".aws")
        (home / ".aws").mkdir()

    changer = threading.Thread(target=churn)
    changer.start()
    try:
        proc = sh(workspace, "sleep 1.5; echo ran > control.txt")
    finally:
        changer.join()
    consume_control(workspace, proc)
    assert proc.returncode == 0, output(proc)


def test_out_of_reach_names_only_what_the_sandbox_cannot_search(tmp_path: Path) -> None:
    from sandbox.linux.reach import out_of_reach

    if os.geteuid() != 0:
        pytest.skip("another owner's directories need root to make")
    table = {  # directory mode and owner -> out of reach for this process?
        "private-other": (0o700, OTHER, OTHER, True),
        "searchable-other": (0o701, OTHER, OTHER, False),
        "group-mine": (0o710, OTHER, os.getegid(), False),
        "group-mine-closed": (0o700, OTHER, os.getegid(), True),
        "own-closed": (0o000, os.geteuid(), os.getegid(), False),  # its owner may chmod it
    }
    for name, (mode, uid, gid, _) in table.items():
        (tmp_path / name / "inner").mkdir(parents=True)
        os.chown(tmp_path / name, uid, gid)
        (tmp_path / name).chmod(mode)
    paths = {name: str(tmp_path / name / "inner" / "secret") for name in table}
    found = out_of_reach(paths.values())
    assert {name for name, path in paths.items() if path in found} == {
        name for name, (*_, expected) in table.items() if expected}
