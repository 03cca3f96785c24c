"""Sandbox tests run real bubblewrap. They are skipped, with the reason
`shellgate doctor` gives, only on a machine where the sandbox cannot work;
on CI (root on Debian, bubblewrap installed by `make test`) they run."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from escape_kit import host_git, user_home

from sandbox import run_probes, sandbox_works


@functools.cache
def _doctor() -> tuple[bool, str]:
    probes = run_probes()
    failed = "; ".join(f"{p.name}: {p.detail}" for p in probes if p.required and not p.ok)
    return sandbox_works(probes), failed


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    works, why = _doctor()
    if works:
        # (under pytest-xdist the controller starts them: tests/conftest.py)
        if os.geteuid() == 0 and "PYTEST_XDIST_WORKER" not in os.environ and any(
                item.module is not None and item.module.__name__ == "test_unprivileged_leg"
                for item in items if isinstance(item, pytest.Function)):
            # the unprivileged legs run beside the rest of the suite
            import test_unprivileged_leg

            test_unprivileged_leg.start()
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
def token() -> str:
    return f"sgescape-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A host directory outside the workspace that is NOT under /tmp (the
    sandbox's private /tmp would hide a /tmp directory anyway)."""
    path = Path(tempfile.mkdtemp(prefix="shellgate-escape-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def leaks() -> Iterator[list[Path]]:
    """Paths an escape would have created: removed whatever happens."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()


@pytest.fixture
def git_ws(workspace: Path) -> Path:
    """The workspace as a git repository with one commit (made on the host)."""
    for args in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "init"]):
        proc = host_git(workspace, *args)
        assert proc.returncode == 0, proc.stderr
    return workspace


def _plant_home_secret(directory: Path, name: str, secret: str) -> Callable[[], None]:
    """Create ``directory/name`` holding ``secret``; return the undo."""
    created_dir = not directory.exists()
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret)

    def undo() -> None:
        path.unlink(missing_ok=True)
        if created_dir:
            with contextlib.suppress(OSError):
                directory.rmdir()

    return undo


@pytest.fixture
def home_secrets(token: str) -> Iterator[dict[str, tuple[Path, str]]]:
    """A fake SSH key and fake AWS credentials under the real home directory
    (unique names; only what the fixture created is removed)."""
    home = user_home()
    aws_name = "credentials" if not (home / ".aws" / "credentials").exists() else \
        f"credentials-{token}"
    plan = {
        "ssh": (home / ".ssh", f"id_{token}", f"-----FAKE KEY {uuid.uuid4().hex}-----"),
        "aws": (home / ".aws", aws_name, f"aws_secret_access_key = {uuid.uuid4().hex}"),
    }
    undo: list[Callable[[], None]] = []
    try:
        secrets = {}
        for kind, (directory, name, secret) in plan.items():
            undo.append(_plant_home_secret(directory, name, secret))
            secrets[kind] = (directory / name, secret)
        yield secrets
    finally:
        for step in reversed(undo):
            step()
