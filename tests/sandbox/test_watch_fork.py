"""The host-path watch (sandbox/linux/watch.py) is one inotify instance and
one thread per process. A process that forks after a run (a warm daemon)
hands its children an instance whose thread is not there: the children's
runs must watch afresh, or a protected path replaced on the host during a
run would go unnoticed. Real bubblewrap, a real fork, a real host rename."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox

_SCRIPT = r"""
import os, subprocess, sys, threading, time
from sandbox import load_profile, run, stop_idle_threads
ws = sys.argv[1]
policy = load_profile(None)
run(["true"], policy, cwd=ws)            # starts the watch's thread
if sys.argv[2] == "idle-stopped":
    assert stop_idle_threads()
pid = os.fork()
if pid == 0:
    def host_rename():
        while not os.path.exists(os.path.join(ws, "started")):
            time.sleep(0.02)
        time.sleep(0.3)
        subprocess.run(["git", "-C", ws, "config", "user.name", "on the host"], check=True)
    threading.Thread(target=host_rename, daemon=True).start()
    result = run(["sh", "-c", "touch started; sleep 20"], policy, cwd=ws)
    os._exit(0 if (result.killed_reason or "").find("replaced or removed") >= 0 else 7)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.parametrize("before_fork", ["thread-left", "idle-stopped"])
def test_a_forked_childs_run_still_stops_when_the_host_replaces_a_protected_file(
        tmp_path: Path, before_fork: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(ws), before_fork],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
