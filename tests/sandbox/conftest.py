"""Sandbox tests run real bubblewrap. They are skipped, with the reason
`shellgate doctor` gives, only on a machine where the sandbox cannot work;
on CI (root on Debian, bubblewrap installed by `make test`) they run."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from sandbox import run_probes, sandbox_works

SHELLGATE = str(Path(sys.executable).with_name("shellgate"))


@functools.cache
def _doctor() -> tuple[bool, str]:
    probes = run_probes()
    failed = "; ".join(f"{p.name}: {p.detail}" for p in probes if p.required and not p.ok)
    return sandbox_works(probes), failed


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    works, why = _doctor()
    if works:
        return
    skip = pytest.mark.skip(reason=f"shellgate doctor: the sandbox cannot work here ({why})")
    for item in items:
        if "sandbox" in item.keywords:
            item.add_marker(skip)


def shellgate_run(
    workspace: Path,
    *argv: str,
    options: Sequence[str] = (),
    env: dict[str, str] | None = None,
    timeout: float = 60,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`shellgate run [options] -- argv` in ``workspace``, as a real process."""
    return subprocess.run(
        [SHELLGATE, "run", "--cwd", str(workspace), *options, "--", *argv],
        capture_output=True,
        env=env if env is not None else dict(os.environ),
        timeout=timeout,
        input=input,
        check=False,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("hello\n")
    return ws
