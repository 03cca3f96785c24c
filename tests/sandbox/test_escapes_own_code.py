"""The gateway's own code, when the project it guards holds it.

Attack (from a review of the build-time regex table): with shellgate run
from the very checkout an agent works in, a sandboxed command rewrote
``regexes/__pycache__/table.cpython-3X.pyc`` (two compiled patterns
swapped, the header's source mtime and size kept), and the host's next
``shellgate check 'cat {/etc/shadow,x}'`` said allow; ``git status`` showed
nothing. Editing ``analyzers/*.py``, planting a ``.pth`` in the gateway's
own virtualenv, adding a ``sitecustomize.py`` beside the packages (it runs
at every interpreter start), or working from inside a package directory
(a writable root *below* the code) worked the same way. Each member is
tried here against a gateway started from a copy of its packages inside
the workspace, with a control proving the command ran and could write
beside them.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from escape_kit import PY, consume_control, output

pytestmark = pytest.mark.sandbox

PACKAGES = ("analyzers", "sandbox", "gateway", "profiles", "values", "regexes")


@pytest.fixture
def vendored(workspace: Path) -> Path:
    """The gateway's packages copied below the workspace (bytecode included),
    the directory its interpreter imports them from."""
    vendor = workspace / "vendor"
    for package in PACKAGES:  # from where this interpreter has them (a checkout, a venv)
        source = Path(importlib.import_module(package).__file__ or "").resolve().parent
        shutil.copytree(source, vendor / package)
    return vendor


def _run_from(vendor: Path, cwd: Path, script: str, python: str = PY,
              options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """`python -m gateway run` with the vendored copy on the import path."""
    site = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PYTHONPATH": f"{vendor}{os.pathsep}{site}"}
    return subprocess.run([python, "-m", "gateway", "run", "--cwd", str(cwd), *options, "--",
                           "sh", "-c", script], cwd=cwd, env=env, input=b"",
                          capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("target", [
    "regexes/table.py",
    "regexes/__pycache__/planted.cpython-311.pyc",
    "analyzers/bash/analysis.py",
    "gateway/__init__.py",
    "sandbox/plan.py",
    "values/table.py",
    "sitecustomize.py",
    "msvcrt.py",
])
def test_a_command_cannot_change_the_code_of_the_gateway_running_it(
        vendored: Path, workspace: Path, target: str) -> None:
    path = vendored / target
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_bytes() if path.exists() else None
    proc = _run_from(vendored, workspace,
                     f"echo ran > control.txt; echo 'raise SystemExit' >> vendor/{target}")
    consume_control(workspace, proc)
    after = path.read_bytes() if path.exists() else None
    assert after == before, output(proc)


def test_a_run_from_inside_the_gateways_code_may_write_nothing_there(
        vendored: Path, workspace: Path) -> None:
    (workspace / "out").mkdir()
    table = vendored / "regexes" / "table.py"
    before = table.read_bytes()
    proc = _run_from(vendored, vendored / "regexes",
                     f"echo ran > {workspace}/out/control.txt; echo '# x' >> table.py",
                     options=("--allow-write", str(workspace / "out")))
    consume_control(workspace / "out", proc)
    assert table.read_bytes() == before, output(proc)
    assert "not writable in this run" in output(proc)


def _gateway_venv(venv: Path) -> Path:
    """A virtualenv the gateway can run from (its dependencies reached
    through a .pth); its site-packages."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return site


def test_a_command_cannot_plant_a_startup_file_in_the_gateways_own_virtualenv(
        vendored: Path, workspace: Path, tmp_path: Path) -> None:
    venv = workspace / ".gwvenv"
    site = _gateway_venv(venv)
    marker = tmp_path / "PTH-RAN"
    rel = site.relative_to(workspace)
    proc = _run_from(vendored, workspace,
                     f"echo ran > control.txt; "
                     f"echo 'import os; os.system(\"touch {marker}\")' > {rel}/zz_evil.pth",
                     python=str(venv / "bin" / "python"))
    consume_control(workspace, proc)
    assert not (site / "zz_evil.pth").exists(), output(proc)
    subprocess.run([str(venv / "bin" / "python"), "-c", "pass"], check=True, timeout=60)
    assert not marker.exists()


def test_a_venv_reached_through_a_symlink_is_kept_read_only(
        vendored: Path, workspace: Path, tmp_path: Path) -> None:
    real = workspace / "realvenv"
    site = _gateway_venv(real)
    link = tmp_path / "vlink"
    link.symlink_to(real)
    rel = site.relative_to(workspace)
    proc = _run_from(vendored, workspace, f"echo ran > control.txt; echo x > {rel}/zz.pth",
                     python=str(link / "bin" / "python"))
    consume_control(workspace, proc)
    assert not (site / "zz.pth").exists(), output(proc)
