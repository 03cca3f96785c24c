"""Escape tests: agent and editor configuration planted in the workspace.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from escape_kit import (
    SHELLGATE,
    consume_control,
    host_git,
    require,
    sh,
    shellgate_run,
    snapshot,
)

pytestmark = [pytest.mark.sandbox]


# -- 5. agent and editor configuration ----------------------------------------

CONFIG_ATTACKS = {
    "rewrite .claude/settings.json":
        "echo '{\"permissions\": {\"allow\": [\"Bash\"]}}' > .claude/settings.json",
    "rename .claude away and recreate it":
        "mv .claude .claude-old && mkdir .claude && echo '{}' > .claude/settings.json",
    "create .claude/settings.local.json": "echo '{}' > .claude/settings.local.json",
    "add a hook script under .claude/hooks":
        "mkdir -p .claude/hooks; echo 'rm -rf ~' > .claude/hooks/evil.sh",
    "add a slash command": "mkdir -p .claude/commands; echo evil > .claude/commands/x.md",
    "create .shellgate/settings.json":
        "mkdir -p .shellgate && echo '{}' > .shellgate/settings.json",
    "create .mcp.json": "echo '{\"mcpServers\": {}}' > .mcp.json",
    "create .mcp.json by rename": "echo '{}' > m.json && mv m.json .mcp.json; rm -f m.json",
    "create .vscode/tasks.json": "mkdir -p .vscode && echo '{}' > .vscode/tasks.json",
    "create .gitmodules": "printf '[submodule \"x\"]\\n' > .gitmodules",
}


@pytest.mark.parametrize("attack", list(CONFIG_ATTACKS))
def test_a_command_cannot_rewrite_agent_or_editor_configuration(
    workspace: Path, attack: str
) -> None:
    """Attack: grant itself permissions, add a hook or an MCP server, or a
    task that runs when the editor opens the folder. Afterwards the host
    workspace is exactly as before: no change, and no stub left behind."""
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}\n')
    before = snapshot(workspace)
    proc = sh(workspace, f"{CONFIG_ATTACKS[attack]}; echo ran > control.txt")
    consume_control(workspace, proc)
    assert snapshot(workspace) == before


@pytest.mark.parametrize("kind", ["plain directory", "git repository"])
def test_a_run_leaves_no_stub_behind(workspace: Path, kind: str) -> None:
    """Attack surface check: the read-only stubs that block `.mcp.json`,
    `.shellgate/`, `.claude/`, `.vscode/` … are removed after the run."""
    if kind == "git repository":
        assert host_git(workspace, "init", "-q").returncode == 0
    before = snapshot(workspace)
    proc = sh(workspace, "ls -A > control.txt")
    seen = consume_control(workspace, proc)
    require(".mcp.json" in seen.split(), "the stubs were in place during the run", proc)
    assert snapshot(workspace) == before


def test_a_parallel_runs_cleanup_never_lifts_a_write_deny(tmp_path: Path) -> None:
    """Attack (from a review): two runs whose writable paths overlap. Run A
    created an empty stub for a missing protected path; run B, started
    later, bound A's stub read-only as an existing protected path. When A
    ended it removed its stub — which detached B's read-only mount — and B
    wrote the protected file. Stubs now go only when no run is active."""
    home = tmp_path / "home"
    (home / "a").mkdir(parents=True)
    (home / "b").mkdir()
    env = {**os.environ, "HOME": str(home)}
    first = subprocess.Popen(
        [SHELLGATE, "run", "--cwd", str(home / "a"), "--allow-write", str(home), "--",
         "sleep", "2"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    try:
        time.sleep(0.8)
        target = shlex.quote(str(home / ".zshrc"))
        script = (f"echo x > {target} 2>/dev/null || echo refused-before > control.txt; "
                  f"sleep 3; echo 'echo PWNED' > {target} 2>/dev/null || echo refused-after "
                  ">> control.txt")
        second = shellgate_run(home / "b", "sh", "-c", script,
                               options=("--allow-write", str(home)), env=env, input=b"")
    finally:
        first.communicate(timeout=30)
    seen = consume_control(home / "b", second).split()
    require(seen[:1] == ["refused-before"], "the protected file was refused at first", second)
    assert seen == ["refused-before", "refused-after"]
    zshrc = home / ".zshrc"
    assert not zshrc.exists() or "PWNED" not in zshrc.read_text()


def test_a_run_lock_held_for_ever_by_someone_else_does_not_stop_runs(workspace: Path) -> None:
    """Attack (from a review): any local user can open the machine-wide lock
    and hold it exclusively; every run then hung. A run waits briefly, then
    goes on without the lock (and leaves its stubs in place)."""
    import fcntl

    fd = os.open("/tmp/.shellgate-runs.lock", os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        started = time.monotonic()
        proc = sh(workspace, "echo ran > control.txt", timeout=20)
        consume_control(workspace, proc)
        assert proc.returncode == 0
        assert time.monotonic() - started < 10
    finally:
        os.close(fd)
