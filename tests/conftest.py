"""Settings every test starts from."""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# `shellgate hook` starts a warm daemon when $XDG_RUNTIME_DIR is the user's:
# a test that runs the hook judges in its own process unless it asks for a
# daemon (tests/gateway/test_hook_daemon.py), so that no test leaves one
# behind on the machine that runs the suite.
os.environ["SHELLGATE_HOOK_DAEMON"] = "0"
os.environ["SHELLGATE_RUN_DAEMON"] = "0"
os.environ["SHELLGATE_CHECK_DAEMON"] = "0"


def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """In pytest-xdist's controller: once a worker has collected the
    unprivileged legs' tests, the legs start here, beside every worker
    (see tests/sandbox/test_unprivileged_leg.py), as root only."""
    if os.geteuid() != 0 or not any("test_unprivileged_leg.py" in i for i in ids):
        return
    sandbox_tests = str(Path(__file__).parent / "sandbox")
    if sandbox_tests not in sys.path:
        sys.path.insert(0, sandbox_tests)
    import test_unprivileged_leg

    test_unprivileged_leg.start(test_unprivileged_leg.results_dir(node.workerinput["testrunuid"]))


#: credential stores planted in the real home for the whole session (see
#: pytest_configure), removed at its end
_PLANTED: list[Path] = []


def pytest_configure(config: Any) -> None:
    """Before any test runs (in pytest-xdist's controller, before the
    workers start): the fake credential stores the escape suite reads are
    planted in the real home once. Planted and removed by each test, they
    appeared and vanished under a sandboxed run of another worker, whose
    guard then stopped that run (a protected path replaced during it)."""
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    sandbox_tests = str(Path(__file__).parent / "sandbox")
    if sandbox_tests not in sys.path:
        sys.path.insert(0, sandbox_tests)
    from escape_kit import user_home
    from test_escapes_secrets import CREDENTIAL_STORES

    home = user_home()
    # and the directories tests plant keys in (`home_secrets`): a protected
    # directory made during another worker's run stops it the same way
    for rel in (".ssh", ".aws"):
        if not (home / rel).exists() and not (home / rel).is_symlink():
            (home / rel).mkdir(mode=0o700)
            _PLANTED.append(home / rel)
    for rel in CREDENTIAL_STORES:
        path = home / rel
        if path.exists() or path.is_symlink():
            continue
        for parent in reversed(path.parents):
            if not parent.exists():
                parent.mkdir(mode=0o700)
                _PLANTED.append(parent)
        path.write_text("token-planted-by-the-test-session\n")
        _PLANTED.append(path)


def pytest_unconfigure(config: Any) -> None:
    for item in reversed(_PLANTED):
        try:
            if item.is_dir() and not item.is_symlink():
                item.rmdir()
            else:
                item.unlink(missing_ok=True)
        except OSError:
            pass
    _PLANTED.clear()


#: held shared by every sandboxed test and exclusively by one that changes
#: the real home: a sandboxed run's guard stops the run when a protected
#: path of the home (a planted `.env`, a credential store) appears or
#: vanishes during it, so across the workers such a test runs alone
HOME_LOCK = Path(os.environ.get("TMPDIR", "/tmp")) / f"shellgate-tests-home-{os.getuid()}.lock"
#: passed exclusively on the way to HOME_LOCK, held by a test waiting for
#: it exclusively: flock grants a new shared lock while an exclusive one
#: waits, so the other worker's stream of sandboxed tests kept such a test
#: waiting 20 s and more
HOME_GATE = HOME_LOCK.with_suffix(".gate")


@pytest.fixture(autouse=True)
def _home_lock(request: pytest.FixtureRequest) -> Iterator[None]:
    marks = {m.name for m in request.node.iter_markers()}
    if not marks & {"sandbox", "mutates_home"}:
        yield
        return
    gate = os.open(HOME_GATE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fd = os.open(HOME_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if "mutates_home" in marks:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the gate held: no new shared lock meanwhile
        else:
            fcntl.flock(fd, fcntl.LOCK_SH)
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        os.close(fd)
        os.close(gate)
