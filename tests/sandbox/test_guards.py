"""The post-run guards run on every backend: here through ``none``, which
has no mounts at all, so only the guards stand between a planted
`.git/commondir` or gitlink and the user's next `git status`."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from sandbox import load_profile, run
from sandbox.gitguard import SUFFIX


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   capture_output=True, check=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


def _none(repo: Path, script: str) -> object:
    return run(["sh", "-c", script], load_profile(), cwd=str(repo), backend="none")


def test_the_none_backend_removes_a_planted_commondir(repo: Path) -> None:
    result = _none(repo, "mkdir evil && echo ../evil > .git/commondir")
    assert not (repo / ".git" / "commondir").exists()
    assert str(repo / ".git" / "commondir") in result.tampered  # type: ignore[attr-defined]


def test_the_none_backend_defuses_a_planted_gitlink(repo: Path) -> None:
    script = ("git init -q sub && git -C sub -c user.name=x -c user.email=x@x commit -q "
              "--allow-empty -m x && git update-index --add --cacheinfo "
              "160000,$(git -C sub rev-parse HEAD),sub")
    result = _none(repo, script)
    assert (repo / "sub" / f".git{SUFFIX}").exists()
    assert str(repo / "sub" / ".git") in result.tampered  # type: ignore[attr-defined]


def test_the_none_backend_reports_a_missing_command_as_a_shell_would(repo: Path) -> None:
    result = run(["no-such-command-xyz"], load_profile(), cwd=str(repo), backend="none")
    assert (result.exit_code, result.exec_error) == (127, "No such file or directory")


def test_agent_settings_made_just_before_a_run_are_left_alone(tmp_path: Path) -> None:
    """The user's own `.claude` made a moment before the run (a cold start
    is quicker than the old 50 ms clock slack) is not taken for the run's."""
    settings = tmp_path / "pkg" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{}")
    time.sleep(0.025)  # more than a coarse clock tick (10 ms at HZ=100)
    result = run(["true"], load_profile(), cwd=str(tmp_path), backend="none")
    assert settings.read_text() == "{}"
    assert str(settings.parent) not in result.tampered


def test_agent_settings_made_during_a_run_are_renamed_aside(tmp_path: Path) -> None:
    result = run(["sh", "-c", "mkdir -p pkg/.claude && echo {} > pkg/.claude/settings.json"],
                 load_profile(), cwd=str(tmp_path), backend="none")
    assert not (tmp_path / "pkg" / ".claude").exists()
    assert str(tmp_path / "pkg" / ".claude") in result.tampered


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a repository to another uid")
def test_another_users_repository_is_never_moved_only_named(repo: Path) -> None:
    """From a review: a run in a shared directory renamed dozens of other
    users' `.git` directories, which it could not read, as planted. The
    sandboxed command cannot give a file away, so another uid's file is not
    its work: it is named, never moved."""
    from sandbox.gitpaths import defuse

    other = repo / "other"
    other.mkdir()
    git(other, "init", "-q")
    subprocess.run(["chown", "-R", "65534:65534", str(other / ".git")], check=True)
    (other / ".git").chmod(0o700)
    problems: list[str] = []
    assert defuse(str(repo), str(other), problems) == []
    assert (other / ".git").is_dir()
    assert any("uid 65534" in p and "not moved" in p for p in problems), problems
    mine = repo / "mine"
    mine.mkdir()
    git(mine, "init", "-q")
    assert defuse(str(repo), str(mine), problems) == [str(mine / ".git")]  # the control
