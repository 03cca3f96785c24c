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


def test_which_passes_over_what_a_sandboxed_command_may_have_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox.programs import which

    root, system = tmp_path / "root", tmp_path / "system"
    for directory in (root / "bin", system):
        directory.mkdir(parents=True)
        (directory / "tool").write_text("#!/bin/sh\n")
        (directory / "tool").chmod(0o755)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "tool").symlink_to(root / "bin" / "tool")
    monkeypatch.chdir(root / "bin")
    cases = {  # PATH -> the tool found, with the root untrusted
        f"{root / 'bin'}:{system}": str(system / "tool"),
        f".:{system}": str(system / "tool"),
        f"{tmp_path / 'elsewhere'}:{system}": str(system / "tool"),  # a link into the root
        f"{root / 'bin'}": None,
        f"{system}": str(system / "tool"),
    }
    for path, expected in cases.items():
        monkeypatch.setenv("PATH", path)
        assert which("tool", untrusted=(str(root),)) == expected, path
        assert which("tool") == shutil.which("tool"), path  # without: shutil's answer
