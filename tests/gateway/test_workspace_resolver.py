"""The resolver the gateway follows a command's links with gives what the
kernel opens — ``os.path.realpath``'s answer over a tree of links, missing
names and files used as directories, the kernel's own where ``..`` follows
a link — and "unresolved" where the kernel could not say either (a loop,
a directory it may not search)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gateway.resolver import UNRESOLVED, Resolver, kernel_path


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # a tree one level down: what `..` out of it reaches is there too
    base = tmp_path_factory.mktemp("links")
    (base / "d").mkdir()
    (base / "x").write_text("parent's x")
    root = base / "tree"
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


#: names whose links loop: the kernel answers ELOOP, and so does the resolver
LOOPS = frozenset({"loop1", "loop1/x", "c/l2/l2", "c/l2/l2/f.txt"})


def _expected(path: str, name: str) -> str:
    return UNRESOLVED if name in LOOPS else os.path.realpath(path)


@pytest.mark.parametrize("name", NAMES)
def test_the_resolver_agrees_with_realpath(tree: Path, name: str) -> None:
    path = f"{tree}/{name}" if name else str(tree)
    resolve = Resolver()
    assert resolve(path) == _expected(path, name)
    assert resolve(path) == _expected(path, name)  # and again, from what it knows


def test_one_resolver_agrees_with_realpath_over_many_paths(tree: Path) -> None:
    resolve = Resolver()
    for name in [*NAMES, *reversed(NAMES)]:
        path = f"{tree}/{name}"
        assert resolve(path) == _expected(path, name), name


#: `..` after a link: the kernel climbs out of the link's target
CLIMBS = ["self/../d", "self/../x", "rel/../f.txt", "rel/back/../d", "d/e/back/../d/f.txt",
          "chain/back/..", "abs/..", "c/e/../f.txt", "d/deep/back/../d/e",
          "self/self/../d", "up/tree/self/.."]


@pytest.mark.parametrize("name", CLIMBS)
def test_dot_dot_after_a_link_lands_where_the_kernel_opens(tree: Path, name: str) -> None:
    """The kernel is the oracle: what it opens for the path as written is
    the very file (device and inode) the resolver names."""
    path = f"{tree}/{name}"
    got = Resolver()(path)
    opened = os.stat(path)  # every name here opens
    assert (os.stat(got).st_dev, os.stat(got).st_ino) == (opened.st_dev, opened.st_ino), name


def test_a_lexical_reading_of_dot_dot_after_a_link_is_not_what_the_kernel_opens(
        tree: Path) -> None:
    """The control for the table above: for `self/../d` (self -> .) the
    text says the tree's `d`, the kernel opens the tree's parent's."""
    path = f"{tree}/self/../d"
    assert os.path.normpath(path) == f"{tree}/d"
    assert os.stat(path).st_ino == os.stat(tree.parent / "d").st_ino
    assert kernel_path(path) == str(tree.parent / "d")


@pytest.mark.parametrize("error", [PermissionError(13, "denied"), OSError(36, "too long")])
def test_a_name_that_cannot_be_looked_at_is_unresolved_not_a_plain_name(
        tree: Path, monkeypatch: pytest.MonkeyPatch, error: OSError) -> None:
    """From a review: `chmod 000` on a parent made a link to ~/.ssh/id_rsa
    below it read as no link at all, and `cat` of it was allowed."""
    real_lstat = os.lstat

    def lstat(path: str) -> os.stat_result:
        if path.startswith(f"{tree}/locked"):
            raise error
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", lstat)
    assert Resolver()(f"{tree}/locked/in/k") == UNRESOLVED
    assert kernel_path(f"{tree}/d/../locked/in/k") == UNRESOLVED
    assert Resolver()(f"{tree}/d/f.txt") == f"{tree}/d/f.txt"


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
