"""Which candidate paths exist, from cached directory listings: the answer
must always equal what lstat would say, however the directories change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox import listings
from sandbox.listings import existing, group


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    listings._CACHE.clear()


def _truth(paths: list[str]) -> list[str]:
    return sorted(p for p in paths if os.path.lexists(p))


def test_the_answer_is_what_lstat_says(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "present").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    paths = [str(tmp_path / rel) for rel in
             ("a/present", "a/absent", "dangling", "missing-dir/x", "a/present/below")]
    assert sorted(existing(group(paths))) == _truth(paths)


def test_a_file_created_after_a_listing_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listings, "_RACY_NS", 0)  # a listing made just now is trusted
    paths = [str(tmp_path / "later")]
    candidates = group(paths)
    assert existing(candidates) == []
    (tmp_path / "later").write_text("x")
    assert existing(candidates) == paths


def test_a_file_added_with_the_mtime_set_back_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cp -a`, `rsync -a`, `touch -d` set a directory's mtime back after
    adding to it; its ctime cannot be set back."""
    monkeypatch.setattr(listings, "_RACY_NS", 0)
    paths = [str(tmp_path / "late")]
    candidates = group(paths)
    assert existing(candidates) == []
    mtime = tmp_path.stat().st_mtime_ns
    (tmp_path / "late").write_text("x")
    os.utime(tmp_path, ns=(mtime, mtime))
    assert existing(candidates) == paths


def test_a_directory_that_can_be_searched_but_not_listed_falls_back_to_lstat(
    tmp_path: Path,
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "secret").write_text("x")
    locked.chmod(0o311)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("this user reads any directory (root)")
        paths = [str(locked / "secret"), str(locked / "other")]
        assert existing(group(paths)) == [str(locked / "secret")]
    finally:
        locked.chmod(0o755)
