"""sandbox.rehearse: a warm daemon's spare walks the run path once before its
call. It must build what a run builds (proved by the seccomp filter it
compiles into a fresh state directory) and start nothing, leave nothing on
the host and hold nothing afterwards. Each case runs in a fresh interpreter,
with real bubblewrap's preparation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox

_SCRIPT = r"""
import json, os, sys, threading
import psutil
from sandbox import load_profile, rehearse, stop_idle_threads

def fds():
    return sorted(os.listdir("/proc/self/fd"))

before = fds()
rehearse(sys.argv[2:], load_profile(None), cwd=sys.argv[1])
threads_after = threading.active_count()
stopped = stop_idle_threads()
mine = f"shellgate-{os.getpid()}-"
groups = [os.path.join(d, n) for d, subdirs, _ in os.walk("/sys/fs/cgroup")
          for n in subdirs if n.startswith(mine)]
print(json.dumps({
    "groups": groups,
    "new_fds": sorted(set(fds()) - set(before)),
    "children": [p.pid for p in psutil.Process().children(recursive=True)],
    "threads_after": threads_after,
    "threads_stopped": threading.active_count(),
    "stopped": stopped,
}))
"""


def _rehearse(workspace: Path, runtime: Path, argv: list[str]) -> dict[str, object]:
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(workspace), *argv],
                          capture_output=True, env=env, cwd=workspace, timeout=60, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_rehearsal_builds_the_run_and_starts_nothing(workspace: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    marker = workspace / "ran"
    before = _tree(workspace)
    found = _rehearse(workspace, runtime, ["sh", "-c", f"touch {marker}"])
    # it prepared the launch: the compiled filter was written to the state
    # directory the run would use
    state = runtime / f"shellgate-{os.getuid()}"
    assert list(state.glob("seccomp-*.bpf"))
    # and ran nothing, started nothing, left nothing in the workspace
    assert not marker.exists()
    assert found["children"] == []
    assert _tree(workspace) == before
    # every descriptor it opened (memfds, pipes) is closed again, and the
    # host-path watch it armed can be stopped: one thread left
    assert found["new_fds"] == []
    assert found["threads_stopped"] == 1


def test_a_rehearsal_leaves_no_run_cgroup_behind(workspace: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    assert _rehearse(workspace, runtime, ["true"])["groups"] == []
