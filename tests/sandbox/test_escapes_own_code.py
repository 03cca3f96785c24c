"""The gateway's own code, when the project it guards holds it.

Attack (from a review of the build-time regex table): with shellgate run
from the very checkout an agent works in, a sandboxed command rewrote
``regexes/__pycache__/table.cpython-3X.pyc`` (two compiled patterns
swapped, the header's source mtime and size kept), and the host's next
``shellgate check 'cat {/etc/shadow,x}'`` said allow; ``git status`` showed
nothing. Editing ``analyzers/*.py``, or planting a ``.pth`` in the
gateway's own virtualenv, worked the same way. Each member is tried here
against a gateway started from a copy of its packages inside the workspace,
with a control proving the command ran and could write beside them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from escape_kit import PY, consume_control, output

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("analyzers", "sandbox", "gateway", "profiles", "values", "regexes")


@pytest.fixture
def own_checkout(workspace: Path) -> Path:
    """The gateway's packages copied into the workspace (bytecode included)."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, workspace / package,
                        ignore=shutil.ignore_patterns("*.tmp"))
    return workspace


def _run_from(checkout: Path, script: str, python: str = PY) -> subprocess.CompletedProcess[bytes]:
    """`python -m gateway run` with the workspace's copy first on the path."""
    site = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{site}"}
    return subprocess.run([python, "-m", "gateway", "run", "--cwd", str(checkout), "--",
                           "sh", "-c", script], cwd=checkout, env=env, input=b"",
                          capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("target", [
    "regexes/table.py",
    "regexes/__pycache__/planted.cpython-311.pyc",
    "analyzers/bash/analysis.py",
    "gateway/__init__.py",
    "sandbox/plan.py",
    "values/table.py",
])
def test_a_command_cannot_rewrite_the_code_of_the_gateway_running_it(
        own_checkout: Path, target: str) -> None:
    path = own_checkout / target
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_bytes() if path.exists() else None
    proc = _run_from(own_checkout, f"echo ran > control.txt; echo 'raise SystemExit' >> {target}")
    consume_control(own_checkout, proc)
    after = path.read_bytes() if path.exists() else None
    assert after == before, output(proc)


def test_a_command_cannot_plant_a_startup_file_in_the_gateways_own_virtualenv(
        own_checkout: Path, tmp_path: Path) -> None:
    venv = own_checkout / ".gwvenv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    site = next((venv / "lib").glob("python3*/site-packages"))
    # the gateway's dependencies, reached from its own environment
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    marker = tmp_path / "PTH-RAN"
    rel = site.relative_to(own_checkout)
    proc = _run_from(own_checkout,
                     f"echo ran > control.txt; "
                     f"echo 'import os; os.system(\"touch {marker}\")' > {rel}/zz_evil.pth",
                     python=str(venv / "bin" / "python"))
    consume_control(own_checkout, proc)
    assert not (site / "zz_evil.pth").exists(), output(proc)
    subprocess.run([str(venv / "bin" / "python"), "-c", "pass"], check=True, timeout=60)
    assert not marker.exists()
