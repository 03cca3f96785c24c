"""Bare git directories: a directory holding HEAD, objects/ and refs/ is a
repository to git whatever its name, from any directory below it — so a
command can plant one without any `.git`, and an existing one (a local
remote, `upstream.git`) has hooks like any other. Each attack's control
runs the same script without the sandbox and shows the host's git obeying
what it planted."""

from __future__ import annotations

import os
import pty
import shlex
import subprocess
from pathlib import Path

import pytest
from escape_kit import consume_control, host_git, output, sh

pytestmark = pytest.mark.sandbox


def _plant_bare(marker: Path) -> str:
    """Shell making src/ a bare git directory whose config runs a pager."""
    config = shlex.quote(f"[core]\n\tpager = touch {marker}; cat\n")
    return ("mkdir -p src/objects src/refs/heads src/lib && "
            "echo 'ref: refs/heads/main' > src/HEAD && "
            f"printf %s {config} > src/config && echo ran > control.txt")


def _host_git_below(where: Path) -> None:
    """The user's git at a terminal (git pages only there), later, in a
    directory below the planted one."""
    leader, follower = pty.openpty()
    try:
        subprocess.run(["git", "-C", str(where), "-p", "branch"], stdin=follower,
                       stdout=follower, stderr=follower, timeout=20, check=False,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(where), "TERM": "dumb"})
    finally:
        os.close(follower)
        os.close(leader)


def test_a_planted_bare_git_directory_is_defused_after_the_run(
        workspace: Path, outside: Path) -> None:
    marker = outside / "pager-ran"
    proc = sh(workspace, _plant_bare(marker))
    consume_control(workspace, proc)
    _host_git_below(workspace / "src" / "lib")
    assert not marker.exists(), f"the host's git ran the planted pager\n{output(proc)}"
    assert (workspace / "src" / "HEAD.quarantined-by-shellgate").exists()
    assert "quarantined-by-shellgate" in output(proc)


def test_the_bare_git_attack_would_run_the_pager_without_the_sandbox(
        tmp_path: Path, outside: Path) -> None:
    marker = outside / "pager-ran-control"
    subprocess.run(["sh", "-c", _plant_bare(marker)], cwd=tmp_path, check=True)
    _host_git_below(tmp_path / "src" / "lib")
    assert marker.exists()


def test_an_existing_bare_repository_in_the_workspace_is_read_only(
        workspace: Path, outside: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(workspace / "up.git")], check=True)
    hook = workspace / "up.git" / "hooks" / "post-receive"
    proc = sh(workspace, f"echo ran > control.txt; echo 'touch {outside}/x' > {hook}")
    consume_control(workspace, proc)
    assert not hook.exists(), output(proc)
    assert host_git(workspace / "up.git", "rev-parse", "--git-dir").returncode == 0
