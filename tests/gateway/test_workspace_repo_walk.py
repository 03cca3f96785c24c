"""The walk up from a command's working directory to its repository looks
at ``.git`` in every directory ``os.path.dirname`` leads through, from the
normalized cwd up to ``/`` (or ``//``), and at nothing else."""

from __future__ import annotations

import os

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
