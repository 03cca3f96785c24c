"""The walk up from a command's working directory to its repository looks
at ``.git`` in every directory ``os.path.dirname`` leads through, from the
normalized cwd up to ``/`` (or ``//``), and at nothing else."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway import workspace

CWDS = ["/", "//", "///", "/a", "//a", "/a/b/c", "//a/b", "/a/", "//a//b/", "/a/b/../c",
        "/home/user/project", "/a/./b"]


def _dirname_chain(cwd: str) -> list[str]:
    out, path = [], os.path.normpath(cwd)
    while True:
        out.append(os.path.join(path, ".git"))
        parent = os.path.dirname(path)
        if parent == path:
            return out
        path = parent


@pytest.mark.parametrize("cwd", CWDS)
def test_the_repository_walk_looks_where_dirname_leads(
        cwd: str, monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[str] = []

    def lstat(path: str) -> os.stat_result:
        looked.append(path)
        raise FileNotFoundError(path)

    monkeypatch.setattr(os, "lstat", lstat)
    assert workspace.repo_programs(cwd) == ()
    assert looked == _dirname_chain(cwd)


@pytest.mark.parametrize("git", [
    pytest.param(lambda p: p.mkdir(), id="a directory"),
    pytest.param(lambda p: p.write_text("gitdir: elsewhere\n"), id="a gitfile"),
    pytest.param(lambda p: p.symlink_to("nowhere"), id="a dangling link"),
])
def test_a_git_entry_of_any_kind_above_the_cwd_is_looked_into(
        tmp_path: Path, git: Callable[[Path], object], monkeypatch: pytest.MonkeyPatch) -> None:
    """A `.git` that is there at all, even as a link to nothing, sends the
    walk to the repository reader (which judges what it is): a planted
    `.git` link must not pass for no repository."""
    asked: list[str] = []
    monkeypatch.setattr("sandbox.repository_programs",
                        lambda cwd: asked.append(cwd) or ("core.fsmonitor=x",))
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    git(tmp_path / ".git")
    assert workspace.repo_programs(str(cwd)) == ("core.fsmonitor=x",)
    assert asked == [str(cwd)]


def test_a_cwd_with_a_nul_has_no_repository() -> None:
    assert workspace.repo_programs("/tmp/a\0b") == ()
