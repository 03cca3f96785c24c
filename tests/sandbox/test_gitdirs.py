"""The git directories the sandbox protects for a repository, in the
order the plan mounts them: the first few are mounted read-only, the rest
only checked after the run."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sandbox.gitconfig import repository_gitdirs


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def test_a_linked_worktrees_common_directory_comes_right_after_its_own(tmp_path: Path) -> None:
    """From a review: 32 submodule git directories below a linked
    worktree's own pushed the common directory past the mounted few, and a
    host `git status` during the run obeyed a config planted there."""
    main = tmp_path / "main"
    _git("init", "-q", str(main))
    _git("-C", str(main), "commit", "-q", "--allow-empty", "-m", "init")
    _git("-C", str(main), "worktree", "add", "-q", str(tmp_path / "linked"))
    own = main / ".git" / "worktrees" / "linked"
    for i in range(32):
        (own / "modules" / f"m{i}").mkdir(parents=True)
        (own / "modules" / f"m{i}" / "HEAD").write_text("ref: refs/heads/main\n")
    found = repository_gitdirs(str(own))
    assert found[:2] == [str(own), str(main / ".git")], found[:3]
    assert len(found) == 34


def test_a_missing_common_directory_is_still_protected(tmp_path: Path) -> None:
    """git adopts the directory a `commondir` file names the moment it is
    made: named, it is protected (as tripwires) before it exists."""
    own = tmp_path / "wt"
    own.mkdir()
    (own / "HEAD").write_text("ref: refs/heads/main\n")
    (own / "commondir").write_bytes(b"../gone \n")
    assert repository_gitdirs(str(own)) == [str(own), str(tmp_path / "gone ")]
