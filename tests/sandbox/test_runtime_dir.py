"""The private runtime directory (sandbox state, caches, the daemons'
sockets) is checked on every call: one that was removed is made again,
one that another user could enter or that was replaced by a link is
never used, and the environment that chooses it is read each time."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sandbox import runtime_dir


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "xdg"
    where.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(where))
    return where


def _private(path: Path) -> bool:
    st = path.lstat()
    return path.is_dir() and not path.is_symlink() and st.st_uid == os.getuid() \
        and not st.st_mode & 0o077


def test_the_runtime_directory_is_made_private_under_the_xdg_runtime_dir(base: Path) -> None:
    first = runtime_dir()
    assert first == base / f"shellgate-{os.getuid()}"
    assert _private(first)
    assert runtime_dir() == first


def test_a_runtime_directory_removed_between_calls_is_made_again(base: Path) -> None:
    first = runtime_dir()
    shutil.rmtree(first)
    assert runtime_dir() == first
    assert _private(first)


def _opened(path: Path) -> None:
    path.chmod(0o777)


def _linked(path: Path) -> None:
    elsewhere = path.with_name("elsewhere")
    elsewhere.mkdir(mode=0o700)
    path.rmdir()
    path.symlink_to(elsewhere)


@pytest.mark.parametrize("spoil", [pytest.param(_opened, id="opened to others"),
                                   pytest.param(_linked, id="replaced by a link")])
def test_a_runtime_directory_spoiled_between_calls_is_not_used_again(
        base: Path, spoil: object) -> None:
    """Attack: a directory others may write to (or a link to one) would let
    them plant a cache the next run trusts (a seccomp program, a search's
    result). The last answer is kept only while the directory stays
    private."""
    first = runtime_dir()
    assert callable(spoil)
    spoil(first)
    instead = runtime_dir()
    try:
        assert instead != first
        assert _private(instead)
    finally:
        if instead != first:
            shutil.rmtree(instead, ignore_errors=True)


def test_the_runtime_directory_follows_the_environment_that_chooses_it(
        base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = runtime_dir()
    other = tmp_path / "other-xdg"
    other.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(other))
    assert runtime_dir() == other / f"shellgate-{os.getuid()}"
    temp = tmp_path / "tmpdir"
    temp.mkdir()
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setenv("TMPDIR", str(temp))
    assert runtime_dir() == temp / f"shellgate-{os.getuid()}"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    assert runtime_dir() == first
