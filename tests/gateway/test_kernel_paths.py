"""Paths as the kernel resolves them, and shells whose options change the
language: each command runs for real first (the control: it prints the
canary), then must not be allowed — by `check`'s analysis and, for a path,
by the Read tool.

From a review: with `l -> .` in a project directly under the home, `cat
l/../.ssh/id_rsa` printed the key (so did `ls -la l/../.ssh`, `cd -P l/..`
and a shell with `-o physical`): `..` after a link was read as text."""

from __future__ import annotations

import asyncio
import os
import pty
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers import Verdict
from gateway.context import ToolContext
from gateway.decisions import Decision
from gateway.session import make_context
from gateway.tools.read import READ, ReadInput
from gateway.workspace import analyze_in_workspace

CANARY = "sg-canary-7f3a"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home holding a key and a project with `l -> .`, `a/b/c/l -> .`,
    `out -> <home>/elsewhere/d` and a `.env` at its top."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"{CANARY} key\n")
    (home / "elsewhere" / "d").mkdir(parents=True)
    proj = home / "proj"
    (proj / "a" / "b" / "c").mkdir(parents=True)
    (proj / "l").symlink_to(".")
    (proj / "a" / "b" / "c" / "l").symlink_to(".")
    (proj / "out").symlink_to(home / "elsewhere" / "d")
    (proj / ".env").write_text(f"TOKEN={CANARY}\n")
    (proj / "README").write_text("hello\n")
    return home


#: (command, what its output shows when it reached the secret)
COMMANDS = [
    ("cat l/../.ssh/id_rsa", CANARY),
    ("ls -la l/../.ssh", "id_rsa"),
    ("cat l/../.ssh/*", CANARY),
    ("head -n1 a/b/c/l/../../../l/../.ssh/id_rsa", CANARY),
    ("grep -r sg-canary l/..", CANARY),
    ("cd out && cat ../../.ssh/id_rsa", CANARY),
    ("cd -P a/b/c/l/.. && cat ../../../.ssh/id_rsa", CANARY),
    ("bash -o physical -c 'cd a/b/c/l/..; cat ../../../.ssh/id_rsa'", CANARY),
    ("bash -O dotglob -c 'cat *'", CANARY),
    ("bash -O globstar -O dotglob -c 'cat **'", CANARY),
    ("cat '[k]'*", CANARY),
    ("cat \\[k]*", CANARY),
    ("cat ~root/..{home}/proj/l/../.ssh/id_rsa", CANARY),
]


@pytest.mark.parametrize(("command", "shows"), COMMANDS)
def test_a_read_the_kernel_leads_out_of_the_project_is_not_allowed(
        home: Path, command: str, shows: str) -> None:
    proj = home / "proj"
    (proj / "[k]x").symlink_to(home / ".ssh" / "id_rsa")
    command = command.replace("{home}", str(home))
    ran = subprocess.run(["bash", "-c", command], cwd=proj, capture_output=True, text=True,
                         env={**os.environ, "HOME": str(home)}, check=False, timeout=30)
    assert shows in ran.stdout, \
        f"control: {command} did not reach the secret ({ran.stdout!r} {ran.stderr!r})"
    result = analyze_in_workspace(command, str(proj), home=str(home))
    assert result.verdict is not Verdict.ALLOW, result.reason


@pytest.mark.parametrize("command", ["cat a/../README", "cat a/b/c/l/../../../README",
                                     "bash -o pipefail -c 'cat README'", "ls l/.."])
def test_reads_that_stay_in_the_project_as_the_kernel_walks_them_are_allowed(
        home: Path, command: str) -> None:
    proj = home / "proj"
    ran = subprocess.run(["bash", "-c", command], cwd=proj, capture_output=True, check=False)
    assert ran.returncode == 0, f"control: {command} runs"
    result = analyze_in_workspace(command, str(proj), home=str(home))
    if command == "ls l/..":
        # l -> . : `l/..` is the home, outside the project
        assert result.verdict is not Verdict.ALLOW, result.reason
    else:
        assert result.verdict is Verdict.ALLOW, result.reason


def _read_permission(home: Path, path: str) -> Decision:
    session = make_context(str(home / "proj"), home=str(home), results_dir=str(home / "r"))
    ctx = ToolContext(session, "t")
    return asyncio.run(READ.check_permissions(ReadInput(file_path=path), ctx)).decision


@pytest.mark.parametrize("path", ["l/../.ssh/id_rsa", "a/b/c/l/../../../l/../.ssh/id_rsa",
                                  "{proj}/l/../.ssh/id_rsa"])
def test_the_read_tool_resolves_dot_dot_after_a_link_as_the_kernel_does(
        home: Path, path: str) -> None:
    path = path.format(proj=home / "proj")
    full = path if path.startswith("/") else f"{home}/proj/{path}"
    assert CANARY in Path(full).read_text(), "control: the path opens the key"
    assert _read_permission(home, path) is not Decision.ALLOW


def test_a_path_whose_directory_cannot_be_searched_is_asked_about(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`chmod 000` on a parent: where a link below it leads is unknown.
    (As root every directory is searchable, so the refusal is simulated.)"""
    locked = home / "proj" / "locked"
    locked.mkdir()
    (locked / "k").symlink_to(home / ".ssh" / "id_rsa")
    real_lstat: Callable[[str], os.stat_result] = os.lstat

    def lstat(path: str) -> os.stat_result:
        if str(path).startswith(str(locked)):
            raise PermissionError(13, "Permission denied", path)
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", lstat)
    result = analyze_in_workspace("cat locked/k", str(home / "proj"), home=str(home))
    assert result.verdict is not Verdict.ALLOW, result.reason
    assert _read_permission(home, "locked/k") is Decision.ASK


def test_nohup_which_writes_a_file_of_its_own_through_a_planted_link_is_not_allowed(
        home: Path) -> None:
    """From a review: `nohup.out -> ~/.bashrc` planted in the project, and
    an allowed `nohup ls` appended its output to the host's shell startup.
    The control runs it with a terminal for output, as a hook's host
    command may have."""
    proj = home / "proj"
    (home / ".bashrc").write_text("# rc\n")
    (proj / "nohup.out").symlink_to(home / ".bashrc")
    primary, secondary = pty.openpty()
    try:
        subprocess.run(["nohup", "echo", CANARY], cwd=proj, stdout=secondary,
                       stderr=secondary, check=False, timeout=30)
    finally:
        os.close(primary)
        os.close(secondary)
    assert CANARY in (home / ".bashrc").read_text(), "control: nohup wrote through the link"
    result = analyze_in_workspace("nohup ls", str(proj), home=str(home))
    assert result.verdict is not Verdict.ALLOW, result.reason


@pytest.mark.parametrize("command", ["grep K *", "grep -n K ?.txt *", "cat * /dev/null"])
def test_a_glob_matching_a_file_named_like_an_option_is_not_allowed(
        tmp_path: Path, command: str) -> None:
    """From a review: a glob standing first in a word matches a file named
    `-r`, which grep then takes for its option: `grep K *` read every file
    below the directory, the `.env` in it among them."""
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "sub" / ".env").write_text(f"K={CANARY}\n")
    (proj / "a.txt").write_text("K\n")
    (proj / "-r").write_text("")
    ran = subprocess.run(["bash", "-c", "grep K *"], cwd=proj, capture_output=True, text=True,
                         check=False)
    assert CANARY in ran.stdout, "control: the planted -r made grep read sub/.env"
    result = analyze_in_workspace(command, str(proj))
    assert result.verdict is not Verdict.ALLOW, result.reason
    after = analyze_in_workspace("grep K -- *.txt", str(proj))
    assert after.verdict is Verdict.ALLOW, after.reason


@pytest.mark.parametrize("command", ["cargo --version", "rustc --version", "go version"])
def test_a_launcher_that_obeys_project_files_is_not_allowed_even_for_its_version(
        tmp_path: Path, command: str) -> None:
    """From a review: rustup's proxies obey the project's rust-toolchain
    file, and `path = "/proc/self/cwd/tc"` made `cargo --version` run the
    project's tc/bin/cargo (go switches to the toolchain go.mod names). The
    control runs it where rustup is installed; elsewhere the decision is
    what the test can see."""
    proj = tmp_path / "proj"
    (proj / "tc" / "bin").mkdir(parents=True)
    marker = tmp_path / "TOOLCHAIN-RAN"
    for tool in ("cargo", "rustc"):
        (proj / "tc" / "bin" / tool).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (proj / "tc" / "bin" / tool).chmod(0o755)
    (proj / "rust-toolchain.toml").write_text('[toolchain]\npath = "/proc/self/cwd/tc"\n')
    if command.startswith(("cargo", "rustc")) and shutil.which("rustup"):
        subprocess.run(["bash", "-c", command], cwd=proj, capture_output=True, check=False,
                       timeout=60)
        assert marker.exists(), "control: rustup ran the project's toolchain"
    result = analyze_in_workspace(command, str(proj))
    assert result.verdict is not Verdict.ALLOW, result.reason
