"""Which repositories make git's reads run programs — asked of the installed
git (the fact `shellgate check` gives the analyzer; see
tests/gateway/test_cli_check_repo.py)."""

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
    ("filter.lfs.clean", "evil %f", "filter.lfs.clean=evil %f"),
    ("filter.x.process", "evil", "filter.x.process=evil"),
    ("diff.bin.textconv", "evil", "diff.bin.textconv=evil"),
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
def test_a_config_that_is_a_fifo_is_unknown_after_a_bounded_wait(
        tmp_path: Path, which: str) -> None:
    """From a review: a FIFO planted as /tmp/.git/config (any user can, in
    /tmp) hung every check and run below /tmp for good; git itself blocks
    on it. git is killed past its timeout, and unknown is reported as a
    program (asked), never as nothing."""
    import os
    import threading

    repo = _repo(tmp_path)
    if which.endswith(".worktree"):
        # git reads config.worktree only when the repository says so
        _config(repo, "core.repositoryformatversion", "1")
        _config(repo, "extensions.worktreeConfig", "true")
    (repo / which).unlink(missing_ok=True)
    os.mkfifo(repo / which)
    found: list[tuple[str, ...]] = []
    reader = threading.Thread(target=lambda: found.append(repository_programs(str(repo))),
                              daemon=True)
    reader.start()
    reader.join(10)
    assert found, "repository_programs waited on the FIFO"
    assert any("took more than" in entry for entry in found[0]), found


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


def _documented_keys() -> list[str]:
    """Every configuration variable the installed git documents."""
    out = subprocess.run(["git", "help", "--config"], capture_output=True, text=True,
                         check=False, timeout=30).stdout
    return [line.strip() for line in out.splitlines() if "." in line and " " not in line.strip()]


#: documented keys that run a program, name a helper or driver, or make git
#: read a file or fetch: each is found with any value but a boolean
_RUNNERS = ("core.fsmonitor", "core.pager", "core.sshCommand", "core.askPass", "core.gitProxy",
            "core.alternateRefsCommand", "core.editor", "core.hooksPath", "diff.external",
            "diff.<driver>.textconv", "diff.<driver>.command", "filter.<driver>.clean",
            "filter.<driver>.smudge", "merge.<driver>.driver", "gpg.program",
            "gpg.<format>.program", "interactive.diffFilter", "sequence.editor",
            "credential.helper", "pager.<cmd>", "uploadpack.packObjectsHook",
            "url.<base>.insteadOf", "remote.<name>.proxy", "core.attributesFile",
            "blame.ignoreRevsFile", "mailmap.file", "diff.orderFile", "web.browser",
            "gpg.ssh.defaultKeyCommand", "difftool.<tool>.cmd", "mergetool.<tool>.cmd")


@pytest.mark.parametrize("documented", _RUNNERS)
def test_every_documented_key_that_runs_or_reads_is_found(documented: str) -> None:
    from sandbox.gitask import ConfigEntry
    from sandbox.gitprograms import program_entry

    assert documented in _documented_keys() or documented.startswith("pager."), documented
    key = documented.replace("<driver>", "x").replace("<format>", "ssh").replace(
        "<cmd>", "log").replace("<base>", "ext::").replace("<name>", "o").replace("<tool>", "t")
    assert program_entry(ConfigEntry("local", "file:x", key.lower(), "evil"))


@pytest.mark.parametrize("key", ["hook.pre-commit.command", "foo.bar.newhelper",
                                 "tool.x.launchcmd", "newsection.keyfile"])
def test_a_key_newer_than_the_table_asks_by_its_name(key: str) -> None:
    from sandbox.gitask import ConfigEntry
    from sandbox.gitprograms import program_entry

    assert program_entry(ConfigEntry("local", "file:x", key, "evil"))


def test_a_change_to_the_configuration_is_seen_at_the_next_question(tmp_path: Path) -> None:
    """git's answers are kept only while what git read is the same: a
    config rewritten, or an include's missing target made, is a new
    question."""
    repo = _repo(tmp_path)
    assert repository_programs(str(repo)) == ()
    _config(repo, "include.path", "../later.cfg")
    assert repository_programs(str(repo)) == ()
    (repo / "later.cfg").write_text("[core]\n\tpager = evil\n")
    assert repository_programs(str(repo)) == ("core.pager=evil",)
    _config(repo, "diff.external", "evil2")
    assert "diff.external=evil2" in repository_programs(str(repo))
