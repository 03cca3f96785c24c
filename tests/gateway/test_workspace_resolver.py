"""The resolver the gateway follows a command's links with gives exactly
what ``os.path.realpath`` gives, over a tree of links, loops, missing
names and files used as directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gateway.workspace import Resolver


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("links")
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("x")
    (root / "outside").mkdir()
    links = {
        "up": "..", "self": ".", "abs": str(root / "outside"), "rel": "d/e",
        "chain": "up2", "up2": "rel", "loop1": "loop2", "loop2": "loop1",
        "dangling": "nowhere/x", "tofile": "d/f.txt", "d/e/back": "../../outside",
        "d/deep": "../chain", "c": "d", "d/l2": "l2/..",
    }
    for name, target in links.items():
        (root / name).symlink_to(target)
    locked = root / "locked"
    locked.mkdir()
    (locked / "in").mkdir()
    return root


NAMES = ["", "d", "d/e", "d/f.txt", "d/f.txt/below", "up", "up/x", "self/d/e", "abs",
         "abs/new", "rel/back", "rel/back/z", "chain", "chain/back", "loop1", "loop1/x",
         "dangling", "dangling/y", "tofile", "tofile/z", "missing", "missing/a/b",
         "d/deep/back", "c/l2/l2", "c/l2/l2/f.txt", "locked/in", "d/../up", "d/./e", "d//e",
         "missing/a/b/c", "d/f.txt/below/deeper", "dangling/y/z", "tofile/z/w", "up/missing/up"]


@pytest.mark.parametrize("name", NAMES)
def test_the_resolver_agrees_with_realpath(tree: Path, name: str) -> None:
    path = f"{tree}/{name}" if name else str(tree)
    resolve = Resolver()
    assert resolve(path) == os.path.realpath(path)
    assert resolve(path) == os.path.realpath(path)  # and again, from what it knows


def test_one_resolver_agrees_with_realpath_over_many_paths(tree: Path) -> None:
    resolve = Resolver()
    for name in [*NAMES, *reversed(NAMES)]:
        path = f"{tree}/{name}"
        assert resolve(path) == os.path.realpath(path), name


def test_the_resolver_agrees_with_realpath_where_a_directory_cannot_be_searched(
        tree: Path) -> None:
    os.chmod(tree / "locked", 0)
    try:
        for name in ("locked/in", "locked/in/x", "locked"):
            assert Resolver()(f"{tree}/{name}") == os.path.realpath(f"{tree}/{name}")
    finally:
        os.chmod(tree / "locked", 0o755)


def test_the_root_and_relative_paths_resolve_as_realpath_does() -> None:
    for path in ("/", "//", "//usr", "relative/x", "/usr/../etc"):
        assert Resolver()(path) == os.path.realpath(path)


def test_nothing_below_a_missing_name_is_looked_at(tree: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel answers a path below a missing directory (or below a file)
    # with the same error: one lstat says it for every longer path
    looked: list[str] = []
    real_lstat = os.lstat

    def lstat(path: str) -> os.stat_result:
        looked.append(path)
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", lstat)
    resolve = Resolver()
    assert resolve(f"{tree}/missing/a/b/c") == f"{tree}/missing/a/b/c"
    assert resolve(f"{tree}/d/f.txt/x/y") == f"{tree}/d/f.txt/x/y"
    assert resolve(f"{tree}/missing/a/other") == f"{tree}/missing/a/other"
    below = [p for p in looked if p.startswith(f"{tree}/missing/") or "/f.txt/" in p]
    assert below == [f"{tree}/d/f.txt/x"]
