"""Escape tests: a program shellgate itself starts, planted on PATH.

Attack (from a review): with the project's virtualenv activated (its
`bin` first on PATH), one run wrote `.venv/bin/bwrap`, a script that runs
its own payload and then the real bubblewrap; the next `shellgate run`
started it — on the host, as the user shellgate runs as (root, there).
shellgate now looks for the programs it starts (bubblewrap; git, whose
answers decide what is guarded) only outside the run's writable paths.
Judged from the host, with a control proving the plant landed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from escape_kit import consume_control, output, sh

pytestmark = [pytest.mark.sandbox]


def test_a_bwrap_planted_in_a_directory_on_path_never_runs_on_the_host(
        workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "host-marker"
    bin_dir = workspace / ".venv" / "bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    real = shutil.which("bwrap")
    assert real is not None
    plant = (f"mkdir -p {bin_dir} && printf '#!/bin/sh\\necho ran > {marker}\\n"
             f"exec {real} \"$@\"\\n' > {bin_dir}/bwrap && chmod +x {bin_dir}/bwrap "
             "&& echo ran > control.txt")
    first = sh(workspace, plant, env=env)
    consume_control(workspace, first)
    assert os.access(bin_dir / "bwrap", os.X_OK)  # control: the plant is on the host
    second = sh(workspace, "echo ran > control.txt", env=env)
    consume_control(workspace, second)
    assert second.returncode == 0, output(second)
    assert not marker.exists(), "the planted bwrap ran on the host"


def test_a_bwrap_planted_by_an_earlier_run_elsewhere_never_runs_on_the_host(
        workspace: Path, tmp_path: Path) -> None:
    # from the review of a first fix, which distrusted only the run's own
    # writable paths: a run with --allow-write on a tools directory planted
    # it, and a later run from another directory, the tools on PATH, ran it
    marker = tmp_path / "host-marker"
    tools = tmp_path / "tools"
    (tools / "bin").mkdir(parents=True)
    real = shutil.which("bwrap")
    plant = (f"printf '#!/bin/sh\necho ran > {marker}\nexec {real} \"$@\"\n' "
             f"> {tools}/bin/bwrap && chmod +x {tools}/bin/bwrap && echo ran > control.txt")
    first = sh(workspace, plant, options=("--allow-write", str(tools)))
    consume_control(workspace, first)
    assert os.access(tools / "bin" / "bwrap", os.X_OK)  # control: the plant is on the host
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PATH": f"{tools / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    second = sh(elsewhere, "echo ran > control.txt", env=env)
    consume_control(elsewhere, second)
    assert not marker.exists(), "a bwrap planted by an earlier run ran on the host"


def test_the_programs_shellgate_starts_come_only_from_system_directories(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox.programs import system_program

    real = os.path.realpath(shutil.which("bwrap") or "")
    planted = tmp_path / "bin"
    planted.mkdir()
    (planted / "bwrap").write_text("#!/bin/sh\n")
    (planted / "bwrap").chmod(0o755)
    (tmp_path / "to-usr-bin").symlink_to(os.path.dirname(real))
    (tmp_path / "link-bin").mkdir()
    (tmp_path / "link-bin" / "bwrap").symlink_to(planted / "bwrap")
    monkeypatch.chdir(planted)
    cases = {  # PATH -> what is started
        f"{planted}{os.pathsep}{os.path.dirname(real)}": real,
        f".{os.pathsep}{os.path.dirname(real)}": real,
        f"{tmp_path / 'link-bin'}{os.pathsep}{os.path.dirname(real)}": real,
        f"{tmp_path / 'to-usr-bin'}": real,  # a link to a system directory: its real path
        f"{planted}": None,
    }
    for path, expected in cases.items():
        monkeypatch.setenv("PATH", path)
        assert system_program("bwrap") == expected, path
