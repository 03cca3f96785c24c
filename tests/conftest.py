"""Settings every test starts from."""

from __future__ import annotations

import os

# `shellgate hook` starts a warm daemon when $XDG_RUNTIME_DIR is the user's:
# a test that runs the hook judges in its own process unless it asks for a
# daemon (tests/gateway/test_hook_daemon.py), so that no test leaves one
# behind on the machine that runs the suite.
os.environ["SHELLGATE_HOOK_DAEMON"] = "0"
os.environ["SHELLGATE_RUN_DAEMON"] = "0"
os.environ["SHELLGATE_CHECK_DAEMON"] = "0"
