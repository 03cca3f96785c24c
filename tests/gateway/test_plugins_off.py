"""pydantic plugins never load in the gateway: an installed distribution
declaring one does not get its code run at the first model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MODEL = ("import sys\n{prelude}\nimport pydantic\n"
         "class Call(pydantic.BaseModel):\n    command: str\n"
         "Call(command='ls')\n"
         "print('importlib.metadata' in sys.modules)\n")


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A distribution on sys.path whose pydantic plugin, when imported,
    leaves a marker file."""
    marker = tmp_path / "plugin-ran"
    (tmp_path / "evilplug.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "class plugin:\n    @staticmethod\n    def new_schema_validator(*a, **k):\n"
        "        return None, None, None\n")
    dist = tmp_path / "evilplug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evilplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nevil = evilplug:plugin\n")
    return tmp_path


def _build_a_model(site: Path, prelude: str) -> tuple[bool, bool]:
    done = subprocess.run([sys.executable, "-c", MODEL.format(prelude=prelude)],
                          env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return (site / "plugin-ran").exists(), done.stdout.strip() == "True"


def test_control_pydantic_alone_runs_an_installed_plugin(planted: Path) -> None:
    ran, metadata = _build_a_model(planted, "")
    assert ran and metadata


def test_the_gateway_runs_no_installed_plugin_and_skips_importlib_metadata(
        planted: Path) -> None:
    ran, metadata = _build_a_model(planted, "import gateway")
    assert not ran
    assert not metadata
