"""The gitlink guard: parsing real git indexes and defusing a nested
repository registered during a run (real git, no sandbox needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sandbox.gitguard import SUFFIX, gitlinks, quarantine_planted, stamp_indexes


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True, text=True, check=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for name in ("a.txt", "dir/b.txt", "dir/deeper/c.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    git(root, "add", ".")
    return root


def plant(root: Path, name: str) -> Path:
    nested = root / name
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    git(nested, "commit", "-q", "--allow-empty", "-m", "x")
    head = git(nested, "rev-parse", "HEAD")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{head},{name}")
    return nested


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_gitlinks_are_read_from_every_index_version(repo: Path, version: str) -> None:
    plant(repo, "sub")
    plant(repo, "dir/deeper/mod")
    git(repo, "update-index", "--index-version", version)
    assert sorted(gitlinks((repo / ".git" / "index").read_bytes())) == ["dir/deeper/mod", "sub"]


@pytest.mark.parametrize("data", [b"", b"DIRC", b"NOTDIRC" + b"\0" * 20,
                                  b"DIRC\0\0\0\x09\0\0\0\x01"])
def test_something_that_is_not_an_index_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        gitlinks(data)


def test_a_gitlink_added_during_the_run_has_its_repository_defused(repo: Path) -> None:
    stamps = stamp_indexes((str(repo),))
    nested = plant(repo, "sub")
    defused = quarantine_planted(stamps).defused
    assert set(defused) == {str(nested / ".git" / "config"), str(nested / ".git" / "hooks")}
    assert (nested / ".git" / f"config{SUFFIX}").exists()
    assert not (nested / ".git" / "config").exists()


def test_gitlinks_that_were_there_before_the_run_are_left_alone(repo: Path) -> None:
    old = plant(repo, "old")
    stamps = stamp_indexes((str(repo),))
    git(repo, "add", "a.txt")  # the index changes, the old gitlink stays
    (repo / "new.txt").write_text("x")
    git(repo, "add", "new.txt")
    assert quarantine_planted(stamps).defused == ()
    assert (old / ".git" / "config").exists()


def test_rewriting_the_index_without_new_gitlinks_defuses_nothing(repo: Path) -> None:
    plant(repo, "sub")
    stamps = stamp_indexes((str(repo),))
    (repo / ".git" / "index").write_bytes((repo / ".git" / "index").read_bytes())
    # rewritten with identical bytes: the stamp differs, the gitlink set does not
    assert quarantine_planted(stamps).defused == ()
