"""The one answer to "may this path be read / written?" (FsPlan.may_read,
FsPlan.may_write), shared by the sandbox and the gateway's file tools: a
file tool must never reach what a sandboxed command cannot. Real temporary
filesystems; the same plan a run would render."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sandbox import FsPlan, build_plan, load_profile, run


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_ed25519").write_text("KEY")
    (h / "other" / "svc").mkdir(parents=True)
    (h / "other" / "svc" / ".env").write_text("K=v\n")
    return h


@pytest.fixture
def ws(home: Path) -> Path:
    w = home / "project"
    (w / "src").mkdir(parents=True)
    (w / "src" / "app.py").write_text("print(1)\n")
    subprocess.run(["git", "init", "-q", str(w)], check=True)
    (w / "key-link").symlink_to(home / ".ssh" / "id_ed25519")
    return w


def plan(ws: Path, home: Path, profile: str = "workspace-write") -> FsPlan:
    return build_plan(load_profile(profile), str(ws), home=str(home), private_tmp="/tmp")


@pytest.mark.parametrize(("rel", "allowed"), [
    ("project/src/app.py", True),
    ("project/.env", True),  # the workspace's own dotenv: readable (the analyzer asks)
    (".ssh/id_ed25519", False),
    ("project/key-link", False),  # the link's target is what is read
    ("project/../.ssh/id_ed25519", False),
    ("other/svc/.env", False),  # another project's dotenv file
])
def test_a_path_the_sandbox_hides_is_not_readable(
    ws: Path, home: Path, rel: str, allowed: bool
) -> None:
    assert bool(plan(ws, home).may_read(str(home / rel))) is allowed


def test_the_private_tmp_is_not_read_from_the_host(ws: Path, home: Path) -> None:
    right = plan(ws, home).may_read("/tmp/some-host-file")
    assert not right
    assert "/tmp" in right.reason


@pytest.mark.parametrize(("rel", "allowed"), [
    ("project/src/new.py", True),
    ("project/src/app.py", True),
    ("project/.git/config", False),
    ("project/.git/hooks/pre-commit", False),
    ("project/.vscode/settings.json", False),
    ("project/../outside.txt", False),
    ("project/key-link", False),
    ("other/svc/x", False),
])
def test_only_what_a_sandboxed_command_may_write_and_keep_is_writable(
    ws: Path, home: Path, rel: str, allowed: bool
) -> None:
    right = plan(ws, home).may_write(str(home / rel))
    assert bool(right) is allowed, right.reason


def test_nothing_is_writable_under_the_read_only_profile(ws: Path, home: Path) -> None:
    right = plan(ws, home, "read-only").may_write(str(ws / "src" / "new.py"))
    assert not right
    assert "outside the writable roots" in right.reason


def test_the_working_directory_moves_and_the_workspace_stays(ws: Path, home: Path) -> None:
    sub = build_plan(load_profile(), str(ws), cwd=str(ws / "src"), home=str(home),
                     private_tmp="/tmp")
    assert sub.cwd == str(ws / "src")
    assert sub.workspace == str(ws)
    assert sub.writable == (str(ws),)
    assert sub.may_write(str(ws / "top-level.txt"))


@pytest.mark.sandbox
def test_a_run_in_a_subdirectory_keeps_the_whole_workspace_writable(
    ws: Path, home: Path, tmp_path: Path
) -> None:
    """A session's persistent `cd src` must not shrink what the next command
    may write: `sandbox.run` takes the workspace apart from the directory."""
    result = run(["sh", "-c", "pwd; echo x > ../top.txt; echo y > ../../escaped.txt"],
                 load_profile("workspace-write"), cwd=str(ws / "src"), workspace=str(ws),
                 env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
    assert result.stdout_text.splitlines()[0] == str(ws / "src")
    assert (ws / "top.txt").read_text() == "x\n"
    assert not (home / "escaped.txt").exists()
