"""A warm daemon's check that its code is still the code installed
(gateway/cli/warm_sources.py), on a real package tree and real inotify: every
kind of change the full fingerprint sees must be seen through the watch's
cheap path too, by the daemon's children (forked, as the spares are), and a
tree the watch cannot see completely must fall back to the full check."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.cli.warm_sources import Sources, _libraries, fingerprint


def _package(root: Path) -> Path:
    for name in ("gateway", "analyzers", "sandbox", "profiles", "values", "regexes"):
        (root / name / "sub").mkdir(parents=True)
        (root / name / "__init__.py").write_text("x = 1\n")
        (root / name / "sub" / "mod.py").write_text("y = 2\n")
    (root / "profiles" / "default.json").write_text("{}\n")
    return root


def _in_child(sources: Sources) -> bool:
    """changed(), asked by a forked child, as a spare asks it."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child
        os._exit(3 if sources.changed() else 0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 3


def _bump(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _swap_parent(root: Path) -> None:
    """The directory above the package moved away, a copy put at its path
    with one file changed: the path the fingerprint reads is new."""
    parent = root.parent
    shutil.copytree(parent, parent.with_name(parent.name + "-new"), symlinks=True)
    parent.rename(parent.with_name(parent.name + "-old"))
    parent.with_name(parent.name + "-new").rename(parent)
    (root / "gateway" / "__init__.py").write_text("x = 2\n")


def _same_size_same_mtime(root: Path) -> None:
    path = root / "sandbox" / "sub" / "mod.py"
    st = path.stat()
    path.write_text("y = 9\n")  # the same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # `touch -r`


CHANGES: dict[str, Callable[[Path], object]] = {
    "the same size with its time put back": _same_size_same_mtime,
    "a source's content": lambda r: (r / "sandbox" / "sub" / "mod.py").write_text("y = 3\n"),
    "a data file's time": lambda r: _bump(r / "profiles" / "default.json"),
    "a new module": lambda r: (r / "analyzers" / "sub" / "new.py").write_text(""),
    "a removed module": lambda r: (r / "values" / "sub" / "mod.py").unlink(),
    "a module renamed": lambda r: (r / "regexes" / "sub" / "mod.py").rename(
        r / "regexes" / "sub" / "other.py"),
    "a new package directory": lambda r: (r / "gateway" / "new").mkdir() or (
        r / "gateway" / "new" / "m.py").write_text(""),
    "a source directory replaced": lambda r: (r / "sandbox").rename(r / "sandbox-old") or
        shutil.copytree(r / "sandbox-old", r / "sandbox") or
        (r / "sandbox" / "__init__.py").write_text("x = 9\n"),
    "the directory above moved and replaced": _swap_parent,
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_every_change_the_fingerprint_sees_is_seen_through_the_watch(
        tmp_path: Path, change: str) -> None:
    root = _package(tmp_path / "install" / "pkg")
    sources = Sources(str(root))
    assert sources.watch >= 0  # the cheap path is the one under test
    assert not sources.changed() and not _in_child(sources)
    CHANGES[change](root)
    assert fingerprint(str(root)) != sources.print  # the control: it did change
    assert sources.changed() and _in_child(sources)
    # the daemon's own look finds it too, and leaves its children checking
    # in full from then on (the events are read away, the flag stays up)
    assert sources.recheck()
    assert sources.flag[0] == 1
    assert sources.changed() and _in_child(sources)


def test_an_unrelated_file_costs_one_full_check_then_the_watch_holds_again(
        tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    sources = Sources(str(root))
    (root / "gateway" / "notes.txt").write_text("not a source\n")
    assert sources._queued() > 0
    assert not sources.changed()  # the full check: same sources
    assert not sources.recheck()
    assert sources._queued() == 0 and sources.flag[0] == 0
    assert not _in_child(sources)
    (root / "gateway" / "__init__.py").write_text("x = 5\n")  # and still sees a change
    assert _in_child(sources)


def test_a_linked_source_file_turns_the_watch_off_and_its_target_still_counts(
        tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    target = tmp_path / "elsewhere.py"
    target.write_text("z = 1\n")
    (root / "sandbox" / "linked.py").symlink_to(target)
    sources = Sources(str(root))
    assert sources.watch == -1  # a watch would not see the target's changes
    assert not sources.changed()
    target.write_text("z = 22\n")
    assert sources.changed() and _in_child(sources)


def test_a_package_reached_through_a_link_turns_the_watch_off(tmp_path: Path) -> None:
    real = _package(tmp_path / "real")
    (tmp_path / "link").symlink_to(real)
    sources = Sources(str(tmp_path / "link"))
    assert sources.watch == -1
    (real / "gateway" / "__init__.py").write_text("x = 7\n")
    assert sources.changed()


def test_a_file_with_a_hard_link_elsewhere_turns_the_watch_off(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    (tmp_path / "other-name.json").hardlink_to(root / "profiles" / "default.json")
    sources = Sources(str(root))
    assert sources.watch == -1  # an edit through the other name raises no event here
    (tmp_path / "other-name.json").write_text('{"changed": true}\n')
    assert sources.changed() and _in_child(sources)


REWATCH: dict[str, Callable[[Path, Path], object]] = {
    # the watch would not see what changes in a directory made after it
    "a new directory": lambda r, _: (r / "sandbox" / "later").mkdir(),
    # nor what changes in the target of a link put in its place
    "a file swapped for a link to its copy": lambda r, t: (
        shutil.copy2(r / "gateway" / "__init__.py", t / "copy.py"),
        (r / "gateway" / "__init__.py").unlink(),
        (r / "gateway" / "__init__.py").symlink_to(t / "copy.py")),
}


@pytest.mark.parametrize("change", list(REWATCH), ids=list(REWATCH))
def test_a_tree_the_watch_no_longer_covers_makes_the_daemon_leave(
        tmp_path: Path, change: str) -> None:
    root = _package(tmp_path / "pkg")
    sources = Sources(str(root))
    REWATCH[change](root, tmp_path)
    if change == "a new directory":
        assert fingerprint(str(root)) == sources.print  # no file changed
    assert sources.recheck()


def test_a_change_no_event_reports_is_found_by_the_daemons_own_look(tmp_path: Path) -> None:
    import mmap

    root = _package(tmp_path / "pkg")
    target = root / "profiles" / "default.json"
    target.write_text("{} \n" * 1024)
    sources = Sources(str(root))
    before = target.stat().st_mtime_ns
    with target.open("r+b") as handle, mmap.mmap(handle.fileno(), 0) as mapped:
        time.sleep(0.01)
        mapped[0:2] = b"[]"  # a write through a shared mapping: no inotify event
        mapped.flush()
    assert target.stat().st_mtime_ns != before  # the control: the fingerprint sees it
    assert sources.recheck()


def test_the_grammar_is_watched_though_its_package_was_never_imported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The analyzer loads tree-sitter's and the bash grammar's extensions by
    hand (analyzers/bash/grammar.py): neither package is in sys.modules,
    and a review saw a grammar moved away go unnoticed by the daemon."""
    from analyzers import analyze_bash

    analyze_bash("true", "/")
    for name in ("tree_sitter", "tree_sitter_bash"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    found = {os.path.basename(p) for p in _libraries()}
    assert {"tree_sitter", "tree_sitter_bash"} <= found
