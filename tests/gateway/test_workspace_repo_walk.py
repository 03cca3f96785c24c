"""Which repository a command's git reads are judged by: git's own
discovery, from the normalized working directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from analyzers import Verdict
from gateway import workspace
from gateway.workspace import analyze_in_workspace


def test_the_working_directory_is_normalized_before_git_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a review: with `--cwd ws/a/../hostile`, a a link, the walk up
    from the raw path never saw ws/hostile/.git."""
    asked: list[str] = []
    monkeypatch.setattr("sandbox.repository_programs",
                        lambda cwd: asked.append(cwd) or ("core.fsmonitor=x",))
    assert workspace.repo_programs(f"{tmp_path}/a/../hostile") == ("core.fsmonitor=x",)
    assert asked == [f"{tmp_path}/hostile"]


def test_a_bare_repository_as_the_working_directory_is_judged_by_its_configuration(
        tmp_path: Path) -> None:
    """From a review: a bare repository has no `.git` to look for; its
    core.fsmonitor (with core.worktree set) ran under an allowed `git
    status`. git's own discovery finds it."""
    bare = tmp_path / "bw"
    marker = tmp_path / "RAN"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    for key, value in (("core.bare", "false"), ("core.worktree", str(tmp_path / "wt")),
                       ("core.fsmonitor", f"touch {marker}; false")):
        subprocess.run(["git", "-C", str(bare), "config", key, value], check=True)
    (tmp_path / "wt").mkdir()
    subprocess.run(["git", "status"], cwd=bare, capture_output=True, check=False, timeout=30)
    assert marker.exists(), "control: git status ran the monitor"
    assert analyze_in_workspace("git status", str(bare)).verdict is not Verdict.ALLOW


def test_a_cwd_with_a_nul_has_no_repository() -> None:
    assert workspace.repo_programs("/tmp/a\0b") == ()
