"""Writable paths other than the workspace: a directory inside the home or
inside a git directory must not open what the home or git runs by itself.

Attack (from a red-team review): `--allow-write ~/.local --allow-write
~/.config` let a command plant `~/.local/bin/git` and an fsmonitor in
`~/.config/git/config` (the home's protections applied only when a
writable root held the whole home); `--allow-write other/.git` left that
repository's config writable.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from escape_kit import consume_control, output, sh

pytestmark = pytest.mark.sandbox


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for d in (".local/bin", ".local/share", ".config/git", ".config/app"):
        (home / d).mkdir(parents=True)
    (home / ".config" / "git" / "config").write_text("[user]\n\tname = u\n")
    return home


@pytest.mark.parametrize(
    ("allowed", "planted", "control"),
    [
        (".local", ".local/bin/git", ".local/share/ok"),
        (".config", ".config/git/config", ".config/app/ok"),
        (".local", ".local/lib/python3.11/site-packages/zz.pth", ".local/share/ok"),
        (".config", ".config/pip/pip.conf", ".config/app/ok"),
    ],
)
def test_a_writable_directory_inside_the_home_keeps_the_home_protections(
    workspace: Path, home: Path, allowed: str, planted: str, control: str
) -> None:
    before = (home / planted).read_bytes() if (home / planted).exists() else None
    script = (f"echo ran > control.txt; echo ok > $HOME/{control}; "
              f"mkdir -p $(dirname $HOME/{planted}); echo planted > $HOME/{planted}")
    proc = sh(workspace, script, options=("--allow-write", str(home / allowed)),
              env={**os.environ, "HOME": str(home)})
    consume_control(workspace, proc)
    assert (home / control).read_text() == "ok\n", output(proc)  # the root is writable
    after = (home / planted).read_bytes() if (home / planted).exists() else None
    assert after == before, output(proc)


@pytest.mark.parametrize("inside", [".git", ".git/hooks"])
def test_a_writable_path_inside_a_git_directory_is_refused(
    workspace: Path, tmp_path: Path, inside: str
) -> None:
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    proc = sh(workspace, "echo ran > control.txt", options=("--allow-write", str(other / inside)))
    assert proc.returncode == 125
    assert "inside a git directory" in output(proc)
    assert not (workspace / "control.txt").exists()


@pytest.mark.parametrize("target", [".local/bin", ".config/git/sub"])
def test_a_writable_path_at_or_inside_a_blocked_home_directory_is_refused(
    workspace: Path, home: Path, target: str
) -> None:
    (home / ".config" / "git" / "sub").mkdir()
    proc = sh(workspace, "echo ran > control.txt",
              options=("--allow-write", str(home / target)),
              env={**os.environ, "HOME": str(home)})
    assert proc.returncode == 125
    assert "refusing to make" in output(proc)
