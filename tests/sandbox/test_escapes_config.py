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
    QUARANTINED,
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


def _without_quarantined(entries: dict[str, object]) -> dict[str, object]:
    """The snapshot minus what the product moved aside (kept for review)."""
    return {k: v for k, v in entries.items() if QUARANTINED not in k}


@pytest.mark.parametrize("attack", list(CONFIG_ATTACKS))
def test_a_command_cannot_rewrite_agent_or_editor_configuration(
    workspace: Path, attack: str
) -> None:
    """Attack: grant itself permissions, add a hook or an MCP server, or a
    task that runs when the editor opens the folder. An existing file is
    read-only; a missing one must stay missing: making it stops the run and
    it is moved aside. Afterwards the host workspace is as before, but for
    what was moved aside."""
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}\n')
    before = snapshot(workspace)
    proc = sh(workspace, f"echo ran > control.txt; {CONFIG_ATTACKS[attack]}")
    consume_control(workspace, proc)
    assert _without_quarantined(snapshot(workspace)) == before


@pytest.mark.parametrize("kind", ["plain directory", "git repository"])
def test_a_run_leaves_nothing_in_the_project_whatever_else_runs(
        workspace: Path, kind: str) -> None:
    """From a review: the empty stubs bubblewrap needed as mount points for
    missing protected paths (`.gitmodules`, `.mcp.json`, `.idea/`,
    `.claude/settings.json` …) stayed in the project while any other run was
    active on the machine; `git status` showed them and Claude Code read the
    empty settings file. Nothing is made for a missing path now: while a
    long run is active, neither the host nor a second run sees any of them,
    and both leave the project as it was."""
    if kind == "git repository":
        assert host_git(workspace, "init", "-q").returncode == 0
    before = snapshot(workspace)
    first = subprocess.Popen(
        [SHELLGATE, "run", "--cwd", str(workspace), "--", "sh", "-c",
         "echo started > started.txt; sleep 3"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (workspace / "started.txt").exists():
            require(time.monotonic() < deadline and first.poll() is None,
                    "the first run started")
            time.sleep(0.05)
        on_host = set(os.listdir(workspace))
        proc = sh(workspace, "ls -A > control.txt")
        seen = set(consume_control(workspace, proc).split())
    finally:
        first.communicate(timeout=60)
    (workspace / "started.txt").unlink()
    names = {".mcp.json", ".claude", ".shellgate", ".gitmodules", ".vscode", ".idea"}
    assert not names & on_host
    assert not names & seen
    assert snapshot(workspace) == before


def test_overlapping_runs_cannot_make_a_file_the_other_keeps_missing(tmp_path: Path) -> None:
    """Attack (from a review): two runs whose writable paths overlap. With
    stubs, run B bound run A's empty stub as an existing protected path;
    when A removed it, B's read-only mount went with it and B wrote
    `~/.zshrc`. A missing protected path is now kept missing by each run
    itself: B's write stops B (and A, which keeps it missing too), and what
    was written is moved aside."""
    home = tmp_path / "home"
    (home / "a").mkdir(parents=True)
    (home / "b").mkdir()
    env = {**os.environ, "HOME": str(home)}
    first = subprocess.Popen(
        [SHELLGATE, "run", "--cwd", str(home / "a"), "--allow-write", str(home), "--",
         "sleep", "3"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    try:
        time.sleep(0.8)
        target = shlex.quote(str(home / ".zshrc"))
        second = shellgate_run(home / "b", "sh", "-c",
                               f"echo ran > control.txt; echo 'echo PWNED' > {target}; "
                               "sleep 2; echo survived >> control.txt",
                               options=("--allow-write", str(home)), env=env, input=b"")
    finally:
        first.communicate(timeout=30)
    assert consume_control(home / "b", second).split() == ["ran"]
    assert not (home / ".zshrc").exists()
    # what the command made, kept for review (emptied or not: it was
    # stopped the moment the name appeared)
    assert len(list(home.glob(".zshrc" + QUARANTINED + "*"))) == 1



def test_a_planted_file_is_moved_aside_even_when_the_counted_names_are_taken(
        workspace: Path) -> None:
    """From a review: the command made `.mcp.json.quarantined-by-shellgate`
    and its 99 numbered siblings first; the planted `.mcp.json` then found
    no free name and stayed."""
    taken = " ".join(f".mcp.json{QUARANTINED}" + (f".{n}" if n else "") for n in range(100))
    proc = sh(workspace, f"touch {taken} && echo ran > control.txt && "
                         "echo '{\"mcpServers\": {}}' > .mcp.json")
    consume_control(workspace, proc)
    assert not (workspace / ".mcp.json").exists(), proc.stderr


def test_a_sentinel_is_moved_aside_at_once_not_when_the_sandbox_ends(workspace: Path) -> None:
    """From a review: the post-run check waits for the sandbox's last
    process, and one in uninterruptible sleep (`sync` after gigabytes of
    writes) kept a planted `.claude/settings.json` in place for seconds.
    Here the host looks while the run is still ending."""
    proc = subprocess.Popen(
        [SHELLGATE, "run", "--cwd", str(workspace), "--", "sh", "-c",
         "echo ran > control.txt; mkdir .claude && echo '{}' > .claude/settings.json; "
         "sleep 30"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (workspace / "control.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        require((workspace / "control.txt").exists(), "the command started")
        moved = False
        while time.monotonic() < deadline and not moved:
            moved = bool(list(workspace.glob(".claude" + QUARANTINED + "*")))
            time.sleep(0.01)
        assert moved and not (workspace / ".claude").exists()
    finally:
        _, err = proc.communicate(timeout=60)
    assert b"moved to" in err, err
