"""The macOS backend executed for real. The profile text itself is
golden-tested on every platform (test_golden.py); running it needs
/usr/bin/sandbox-exec, which exists only on macOS."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sandbox import load_profile, run

pytestmark = pytest.mark.skipif(
    sys.platform != "darwin", reason="sandbox-exec exists only on macOS"
)


def test_seatbelt_allows_workspace_writes_and_refuses_writes_elsewhere(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    result = run(["sh", "-c", f"echo ok > inside; echo no > {outside}"], load_profile(),
                 cwd=str(ws), backend="seatbelt")
    assert (ws / "inside").read_text() == "ok\n"
    assert not outside.exists()
    assert result.exit_code != 0


def test_seatbelt_refuses_writes_to_protected_paths(tmp_path: Path) -> None:
    result = run(["sh", "-c", "mkdir -p .shellgate && echo x > .shellgate/settings.json"],
                 load_profile(), cwd=str(tmp_path), backend="seatbelt")
    assert result.exit_code != 0
    assert not (tmp_path / ".shellgate" / "settings.json").exists()
