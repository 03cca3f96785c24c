"""The gitlink guard: parsing real git indexes and defusing a nested
repository registered during a run (real git, no sandbox needed)."""

from __future__ import annotations

import os
import struct
import subprocess
import time
from pathlib import Path

import pytest

from sandbox.gitguard import SUFFIX, gitlinks, quarantine_planted, safe_link_name, stamp_indexes


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


# -- hostile indexes: the guard never acts outside the workspace, never hangs ---------


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Another repository, outside the workspace."""
    root = tmp_path / "victim"
    root.mkdir()
    git(root, "init", "-q")
    return root


def _write_index(repo: Path, names: list[str]) -> None:
    entries = b""
    for name in names:
        raw = name.encode()
        entry = (struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o160000, 0, 0, 0) + b"\x22" * 20
                 + struct.pack(">H", len(raw)) + raw)
        entries += entry + b"\0" * (8 - len(entry) % 8)
    body = b"DIRC" + struct.pack(">II", 2, len(names)) + entries
    (repo / ".git" / "index").write_bytes(body + b"\0" * 20)


@pytest.mark.parametrize("kind", ["absolute", "dot-dot", "symlink", "through a symlink",
                                  "dot-git component"])
def test_a_gitlink_leading_outside_the_workspace_is_never_followed(
    repo: Path, victim: Path, kind: str
) -> None:
    (repo / "link").symlink_to(victim)
    (repo / "up").symlink_to(victim.parent)
    name = {
        "absolute": str(victim),
        "dot-dot": os.path.relpath(victim, repo),
        "symlink": "link",
        "through a symlink": f"up/{victim.name}",
        "dot-git component": ".git/modules/x",
    }[kind]
    stamps = stamp_indexes((str(repo),))
    _write_index(repo, [name])
    report = quarantine_planted(stamps)
    assert report.defused == ()
    assert (victim / ".git" / "config").exists() and (victim / ".git" / "hooks").exists()


def test_a_name_the_guard_refuses_is_reported(repo: Path, victim: Path) -> None:
    stamps = stamp_indexes((str(repo),))
    _write_index(repo, [str(victim)])
    assert any("refused gitlink name" in p for p in quarantine_planted(stamps).problems)


@pytest.mark.parametrize("name", ["/abs", "../up", "a/../b", "a//b", "./a", "a/.git/b", "", "a\0b"])
def test_names_git_itself_would_refuse_are_unsafe(name: str) -> None:
    assert not safe_link_name(name)


@pytest.mark.parametrize("name", ["sub", "a/b/c", "lib/mod-1.2", "a/.github/x"])
def test_ordinary_submodule_paths_are_safe(name: str) -> None:
    assert safe_link_name(name)


@pytest.mark.parametrize("trap", ["fifo", "symlink to /dev/zero", "directory"])
def test_an_index_that_is_not_a_regular_file_is_read_without_blocking(
    repo: Path, trap: str
) -> None:
    index = repo / ".git" / "index"
    index.unlink()
    if trap == "fifo":
        os.mkfifo(index)
    elif trap == "directory":
        index.mkdir()
    else:
        index.symlink_to("/dev/zero")
    started = time.monotonic()
    stamps = stamp_indexes((str(repo),))
    assert stamps[0].content == b""
    if trap == "fifo":  # changed after the run: the post-run step looks again
        os.utime(index)
    quarantine_planted(stamps)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("data", [
    b"DIRC\0\0\0\x02\xff\xff\xff\xff" + b"x" * 100,   # a huge count
    b"DIRC\0\0\0\x04\0\0\0\x01" + b"\0" * 62 + b"\xff",  # v4 prefix past the start
    b"DIRC\0\0\0\x02\0\0\0\x01" + b"\0" * 50,             # truncated entry
    b"DIRC\0\0\0\x02\0\0\0\x01" + b"\0" * 60 + b"\x00\x05abcde",  # no NUL after the name
])
def test_a_crafted_index_is_a_problem_line_not_a_crash(repo: Path, data: bytes) -> None:
    stamps = stamp_indexes((str(repo),))
    (repo / ".git" / "index").write_bytes(data)
    report = quarantine_planted(stamps)
    assert report.defused == ()
    assert len(report.problems) == 1 and ".git/index" in report.problems[0]
