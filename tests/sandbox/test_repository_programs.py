"""Which repositories' configuration makes git's reads run programs — read
from the files, never by running git (the fact `shellgate check` gives the
analyzer; see tests/gateway/test_cli_check_repo.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sandbox import repository_programs


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _config(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "config", *args], check=True)


@pytest.mark.parametrize(("key", "value", "reported"), [
    ("core.fsmonitor", "touch /tmp/x", "core.fsmonitor=touch /tmp/x"),
    ("filter.lfs.clean", "evil %f", "filter.clean=evil %f"),
    ("filter.x.process", "evil", "filter.process=evil"),
    ("diff.bin.textconv", "evil", "diff.textconv=evil"),
    ("diff.external", "evil", "diff.external=evil"),
    ("core.pager", "evil", "core.pager=evil"),
    ("pager.log", "evil", "pager.log=evil"),
    ("gpg.program", "evil", "gpg.program=evil"),
    ("log.showSignature", "true", "log.showsignature=true"),
])
def test_an_entry_that_runs_a_program_on_reads_is_found(
    tmp_path: Path, key: str, value: str, reported: str
) -> None:
    repo = _repo(tmp_path)
    _config(repo, key, value)
    (repo / "deep" / "dir").mkdir(parents=True)
    assert reported in repository_programs(str(repo / "deep" / "dir"))


@pytest.mark.parametrize(("key", "value"), [("core.fsmonitor", "false"), ("core.fsmonitor", "true"),
                                            ("user.name", "x"), ("core.autocrlf", "input")])
def test_entries_that_run_nothing_are_not_found(tmp_path: Path, key: str, value: str) -> None:
    repo = _repo(tmp_path)
    _config(repo, key, value)
    assert repository_programs(str(repo)) == ()


def test_an_included_file_is_read_too(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "extra.cfg").write_text("[core]\n\tfsmonitor = evil\n")
    _config(repo, "include.path", "../extra.cfg")
    assert "core.fsmonitor=evil" in repository_programs(str(repo))


def test_outside_a_repository_there_is_nothing(tmp_path: Path) -> None:
    assert repository_programs(str(tmp_path)) == ()


@pytest.mark.parametrize("which", [".git/config", ".git/config.worktree"])
def test_a_config_that_is_a_fifo_is_reported_at_once_never_waited_on(
        tmp_path: Path, which: str) -> None:
    """From a review: a FIFO planted as /tmp/.git/config (any user can, in
    /tmp) hung every check and run below /tmp for good. Git would read
    whatever its writer feeds it: reported as a program, not waited on."""
    import os
    import threading

    repo = _repo(tmp_path)
    (repo / which).unlink(missing_ok=True)
    os.mkfifo(repo / which)
    found: list[tuple[str, ...]] = []
    reader = threading.Thread(target=lambda: found.append(repository_programs(str(repo))),
                              daemon=True)
    reader.start()
    reader.join(10)
    assert found, "repository_programs waited on the FIFO"
    assert any("is not a regular file" in entry for entry in found[0])


@pytest.mark.parametrize("planted", ["an empty directory", "a FIFO",
                                     "a directory with only a HEAD"])
def test_a_dot_git_git_would_pass_over_does_not_hide_the_repository_above(
        tmp_path: Path, planted: str) -> None:
    """From a review: with `mkdir sub/.git` in a repository whose config
    runs a core.fsmonitor, `git status` in sub looked repository-less (and
    was allowed) while git went on up and ran the monitor."""
    import os

    repo = _repo(tmp_path)
    _config(repo, "core.fsmonitor", "touch /tmp/x")
    sub = repo / "sub"
    sub.mkdir()
    dotgit = sub / ".git"
    if planted == "an empty directory":
        dotgit.mkdir()
    elif planted == "a FIFO":
        os.mkfifo(dotgit)
    else:
        dotgit.mkdir()
        (dotgit / "HEAD").write_text("ref: refs/heads/main\n")
    # the control: git itself takes the repository above for sub's
    top = subprocess.run(["git", "-C", str(sub), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True, check=False, timeout=10)
    assert top.stdout.strip() == str(repo)
    assert repository_programs(str(sub)) == ("core.fsmonitor=touch /tmp/x",)
