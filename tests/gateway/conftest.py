"""Gateway tests build real sessions: a real workspace on disk, the real
sandbox profile and filesystem plan."""

from __future__ import annotations

import contextlib
import functools
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from gateway.context import SessionContext, ToolContext
from gateway.session import make_context
from sandbox import run_probes, sandbox_works


# The same rule as tests/sandbox/conftest.py's (a conftest at tests/ would
# put tests/ on the import path, where tests/sandbox shadows the package).
@functools.cache
def _doctor() -> tuple[bool, str]:
    probes = run_probes()
    failed = "; ".join(f"{p.name}: {p.detail}" for p in probes if p.required and not p.ok)
    return sandbox_works(probes), failed


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``sandbox`` run real bubblewrap; skipped, with the
    doctor's reason, only where it cannot work."""
    if not any("sandbox" in item.keywords for item in items):
        return
    works, why = _doctor()
    if works:
        return
    skip = pytest.mark.skip(reason=f"shellgate doctor: the sandbox cannot work here ({why})")
    for item in items:
        if "sandbox" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("hello\n")
    return ws


@pytest.fixture
def session(workspace: Path, tmp_path: Path) -> SessionContext:
    home = tmp_path / "home"
    home.mkdir()
    results = tmp_path / "results"
    results.mkdir()
    return make_context(str(workspace), home=str(home), results_dir=str(results))


@pytest.fixture
def tool_context(session: SessionContext) -> Callable[[], ToolContext]:
    counter = iter(range(1_000_000))
    return lambda: ToolContext(session, f"toolu_{next(counter)}")


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime directory for the warm daemons (short: a unix
    socket's path is at most 108 bytes; under /var/tmp, which the sandbox
    shows, so that hiding it is tested); every daemon started in it, and
    its children, gone after."""
    here = Path(tempfile.mkdtemp(prefix="sg-rt-", dir="/var/tmp"))
    yield here
    for proc in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(str(here) in part for part in proc.info["cmdline"] or ()):
                proc.kill()
    shutil.rmtree(here, ignore_errors=True)
