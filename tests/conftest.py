"""Settings every test starts from."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

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
