"""The gitlink guard around a run: real repositories, real git (asked
inside a real sandbox), each planted gitlink judged by what the host's git
would then do. The "run" is whatever the test does between ``before()``
and ``after()``."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import time
from pathlib import Path

import pytest

from sandbox.gitguard import SUFFIX, GitGuard, safe_link_name

pytestmark = [pytest.mark.sandbox]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True, text=True, check=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for name in ("a.txt", "dir/b.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    git(root, "add", ".")
    return root


def nested(root: Path, name: str, marker: Path | None = None) -> str:
    """A nested repository at ``name`` (optionally with an fsmonitor that
    touches ``marker``); returns its HEAD."""
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    git(path, "commit", "-q", "--allow-empty", "-m", "x")
    if marker is not None:
        git(path, "config", "core.fsmonitor", f"touch {marker}; false")
    return git(path, "rev-parse", "HEAD")


def register(root: Path, name: str, head: str) -> None:
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{head},{name}")


def guard(tmp_path: Path, root: Path) -> GitGuard:
    g = GitGuard(str(tmp_path), "bwrap", tmp_path / "gitlinks.json")
    g.before((str(root),))
    return g


def host_status(root: Path) -> None:
    subprocess.run(["git", "-C", str(root), "status"], capture_output=True, timeout=20,
                   check=False)


def test_a_gitlink_added_during_the_run_has_its_repository_defused(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "RAN"
    g = guard(tmp_path, repo)
    register(repo, "sub", nested(repo, "sub", marker))
    report = g.after()
    assert report.defused == (str(repo / "sub" / ".git"),)
    assert (repo / "sub" / f".git{SUFFIX}" / "config").exists()  # kept, renamed aside
    host_status(repo)
    assert not marker.exists()


def test_gitlinks_that_were_there_before_the_run_are_left_alone(
    repo: Path, tmp_path: Path
) -> None:
    head = nested(repo, "old")
    register(repo, "old", head)
    old = time.time_ns()
    for path in (repo / "old" / ".git", repo / "old" / ".git" / "config"):
        os.utime(path, ns=(old - 10**10, old - 10**10))
    time.sleep(0.1)  # the ctime of the nested repository is before the run
    g = guard(tmp_path, repo)
    (repo / "new.txt").write_text("x")
    git(repo, "add", "new.txt")  # the index changes, the old gitlink stays
    assert g.after().defused == ()
    assert (repo / "old" / ".git" / "config").exists()


def test_a_gitlink_kept_in_a_split_index_is_found(repo: Path, tmp_path: Path) -> None:
    """Attack (from a review): with a split index the gitlink lives in
    `.git/sharedindex.*`, which a parser of `.git/index` alone never saw."""
    marker = tmp_path / "RAN"
    g = guard(tmp_path, repo)
    head = nested(repo, "sub", marker)
    git(repo, "update-index", "--split-index")
    register(repo, "sub", head)
    git(repo, "-c", "splitIndex.maxPercentChange=0", "update-index", "--split-index")
    assert list(repo.joinpath(".git").glob("sharedindex.*"))
    g.after()
    host_status(repo)
    assert not marker.exists()


def _index_hiding_a_gitlink(sub_head: str) -> bytes:
    """A two-entry index git reads as `a` + gitlink `sub`, while a parser
    that ends a name at its first NUL (rather than at the length in its
    flags) reads `a` + a plain file `z` hidden inside the first name."""
    blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

    def entry(mode: int, sha: str, name: bytes, length: int) -> bytes:
        return (struct.pack(">10I", 0, 0, 0, 0, 0, 0, mode, 0, 0, 0) + bytes.fromhex(sha)
                + struct.pack(">H", length) + name)

    decoy = entry(0o100644, blob, b"z\0", 1)
    decoy += b"\0" * (64 - len(decoy))
    region = bytearray(101)
    region[0:1] = b"a"
    region[2:2 + len(decoy)] = decoy
    first = entry(0o100644, blob, b"", 100) + bytes(region)
    first += b"\0" * (((62 + 100) // 8 + 1) * 8 - len(first))
    second = entry(0o160000, sub_head, b"sub", 3)
    second += b"\0" * (((62 + 3) // 8 + 1) * 8 - len(second))
    body = b"DIRC" + struct.pack(">II", 2, 2) + first + second
    return body + hashlib.sha1(body).digest()


def test_an_index_read_one_way_by_git_and_another_by_a_naive_parser(
    repo: Path, tmp_path: Path
) -> None:
    """Attack (from a review): the guard's own parser and git disagreed on
    where an entry ends; git itself now reads the index."""
    marker = tmp_path / "RAN"
    g = guard(tmp_path, repo)
    head = nested(repo, "sub", marker)
    (repo / ".git" / "index").write_bytes(_index_hiding_a_gitlink(head))
    assert "sub" in git(repo, "ls-files", "--stage")
    g.after()
    host_status(repo)
    assert not marker.exists()


def test_an_index_behind_a_symlink_is_read_as_git_reads_it(repo: Path, tmp_path: Path) -> None:
    """Attack (from a review): `.git/index` replaced by a symlink to the real
    index; git follows it, a guard refusing links only warned."""
    marker = tmp_path / "RAN"
    g = guard(tmp_path, repo)
    register(repo, "sub", nested(repo, "sub", marker))
    (repo / ".git" / "index").rename(repo / ".git" / "index.real")
    (repo / ".git" / "index").symlink_to("index.real")
    g.after()
    host_status(repo)
    assert not marker.exists()


def test_a_repository_planted_earlier_and_registered_now_is_defused(
    repo: Path, tmp_path: Path
) -> None:
    """Two steps: one run plants the nested repository (no gitlink: left
    alone), a later run only adds the gitlink."""
    marker = tmp_path / "RAN"
    head = nested(repo, "sub", marker)
    then = time.time_ns() - 10**10
    for path in (repo / "sub" / ".git", repo / "sub" / ".git" / "config"):
        os.utime(path, ns=(then, then))
    time.sleep(0.1)
    g = guard(tmp_path, repo)
    register(repo, "sub", head)
    g.after()
    host_status(repo)
    assert not marker.exists()


def test_an_existing_submodule_whose_config_the_run_changes_is_defused(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "RAN"
    register(repo, "sub", nested(repo, "sub"))
    time.sleep(0.1)
    g = guard(tmp_path, repo)
    git(repo / "sub", "config", "core.fsmonitor", f"touch {marker}; false")
    git(repo, "add", "a.txt")
    (repo / "a.txt").write_text("changed")
    git(repo, "add", "a.txt")
    g.after()
    host_status(repo)
    assert not marker.exists()


@pytest.mark.parametrize("trap", ["fifo", "symlink to /dev/zero", "symlink to a fifo"])
def test_an_index_that_is_no_regular_file_is_moved_aside_at_once(
    repo: Path, tmp_path: Path, trap: str
) -> None:
    """A FIFO in place of the index: git waits on it for ever. Fail closed,
    without waiting: moved aside, so the user's git sees no gitlink until
    they look."""
    g = guard(tmp_path, repo)
    index = repo / ".git" / "index"
    index.unlink()
    if trap == "fifo":
        os.mkfifo(index)
    elif trap == "symlink to a fifo":
        os.mkfifo(repo / ".git" / "pipe")
        index.symlink_to("pipe")
    else:
        index.symlink_to("/dev/zero")
    started = time.monotonic()
    report = g.after()
    assert time.monotonic() - started < 5
    assert not os.path.lexists(index)
    assert os.path.lexists(repo / ".git" / f"index{SUFFIX}")
    assert any("moved aside" in p for p in report.problems)


@pytest.mark.parametrize("trap", ["garbage"])
def test_an_index_git_refuses_is_reported_and_left(
    repo: Path, tmp_path: Path, trap: str
) -> None:
    """The user's git refuses such an index too: nothing can recurse."""
    g = guard(tmp_path, repo)
    index = repo / ".git" / "index"
    if trap == "garbage":
        index.write_bytes(b"DIRC\0\0\0\x02\xff\xff\xff\xff" + b"x" * 100)
    else:
        index.unlink()
        index.symlink_to("/dev/zero")
    report = g.after()
    assert report.defused == ()
    assert any("git refuses to read the index" in p for p in report.problems)


def test_an_unchanged_index_costs_no_git_run_the_second_time(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gitlinks git saw are cached by the index's stamp: a run that
    leaves the index alone (most runs) asks git nothing."""
    g = guard(tmp_path, repo)
    git(repo, "add", "a.txt")
    (repo / "a.txt").write_text("x")
    git(repo, "add", "a.txt")
    g.after()  # the cache now holds this index
    calls: list[str] = []
    from sandbox import gitguard

    real = gitguard.enumerate_gitlinks
    monkeypatch.setattr(gitguard, "enumerate_gitlinks",
                        lambda root, **kw: (calls.append(root), real(root, **kw))[1])
    again = guard(tmp_path, repo)
    again.after()
    assert calls == []


# -- names -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["/abs", "../up", "a/../b", "a//b", "./a", "a/.git/b", "",
                                  "a\0b", ".GIT/x"])
def test_names_git_itself_would_refuse_are_unsafe(name: str) -> None:
    assert not safe_link_name(name)


@pytest.mark.parametrize("name", ["sub", "a/b/c", "lib/mod-1.2", "a/.github/x"])
def test_ordinary_submodule_paths_are_safe(name: str) -> None:
    assert safe_link_name(name)


# -- second review: what the guard must check even when the index is unchanged -----------


def _settle() -> None:
    """Let what was set up so far be older than the coming run's start (the
    guard allows 50 ms of clock slack)."""
    time.sleep(0.1)


def submodule(repo: Path, name: str) -> Path:
    """A submodule the way git lays it out: `name/.git` is a file naming
    `.git/modules/name`."""
    gitdir = repo / ".git" / "modules" / name
    gitdir.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", f"--separate-git-dir={gitdir}", str(repo / name)],
                   check=True, capture_output=True)
    git(repo / name, "commit", "-q", "--allow-empty", "-m", "x")
    register(repo, name, git(repo / name, "rev-parse", "HEAD"))
    return gitdir


def test_a_repository_planted_behind_a_gitlink_registered_in_an_earlier_run(
    repo: Path, tmp_path: Path
) -> None:
    """Attack (from a review): run 1 registers a gitlink with no repository
    behind it (nothing to defuse); run 2 plants the repository and leaves
    the index alone."""
    marker = tmp_path / "RAN"
    first = guard(tmp_path, repo)
    register(repo, "sub", "1" * 40)
    first.after()
    _settle()
    second = guard(tmp_path, repo)
    nested(repo, "sub", marker)
    second.after()
    host_status(repo)
    assert not marker.exists()


def test_an_existing_submodules_gitdir_changed_without_touching_the_index(
    repo: Path, tmp_path: Path
) -> None:
    """Attack (from a review): `git -C sub config core.fsmonitor …` writes
    `.git/modules/sub/config`; the index is not touched."""
    marker = tmp_path / "RAN"
    gitdir = submodule(repo, "sub")
    _settle()
    g = guard(tmp_path, repo)
    git(repo / "sub", "config", "core.fsmonitor", f"touch {marker}; false")
    report = g.after()
    assert report.defused
    host_status(repo)
    assert not marker.exists()
    assert not (repo / "sub" / ".git").exists()  # the `.git` file was renamed
    assert (gitdir / "config").exists()


def test_a_gitdir_reached_through_a_symlink_counts_as_changed(
    repo: Path, tmp_path: Path
) -> None:
    """Attack (from a review): move `.git/modules/sub` and leave a symlink;
    the guard could not open it without following the link and called it
    unchanged."""
    marker = tmp_path / "RAN"
    gitdir = submodule(repo, "sub")
    _settle()
    g = guard(tmp_path, repo)
    evil = repo / ".git" / "evil"
    evil.mkdir()
    gitdir.rename(evil / "sub")
    gitdir.symlink_to(Path("..") / "evil" / "sub")
    git(repo / "sub", "config", "core.fsmonitor", f"touch {marker}; false")
    (repo / "new.txt").write_text("x")
    git(repo, "add", "new.txt")
    g.after()
    host_status(repo)
    assert not marker.exists()


def test_every_gitlink_is_checked_however_many_there_are(repo: Path, tmp_path: Path) -> None:
    """Attack (from a review): 1,001 decoy gitlinks before the real one; only
    the first 1,000 were checked."""
    marker = tmp_path / "RAN"
    g = guard(tmp_path, repo)
    decoys = "".join(f"160000 {'1' * 40}\ta{i:04d}\n" for i in range(1001))
    subprocess.run(["git", "-C", str(repo), "update-index", "--index-info"], input=decoys,
                   text=True, check=True)
    register(repo, "zzz", nested(repo, "zzz", marker))
    g.after()
    host_status(repo)
    assert not marker.exists()


def test_an_index_the_sandboxed_git_cannot_read_is_moved_aside(
    repo: Path, tmp_path: Path
) -> None:
    """Attack (from a review, as root): `chmod 000 .git/index`. The
    sandboxed git has no capabilities and cannot read it; the user's root
    git can. No list from git means fail closed."""
    marker = tmp_path / "RAN"
    g = guard(tmp_path, repo)
    register(repo, "sub", nested(repo, "sub", marker))
    (repo / ".git" / "index").chmod(0)
    report = g.after()
    host_status(repo)
    assert not marker.exists()
    assert any("moved aside" in p for p in report.problems)


def test_a_second_quarantine_never_overwrites_or_fails_on_the_first(
    repo: Path, tmp_path: Path
) -> None:
    first = guard(tmp_path, repo)
    register(repo, "sub", nested(repo, "sub"))
    first.after()
    nested(repo, "sub")  # planted again, behind the same gitlink
    second = guard(tmp_path, repo)
    git(repo / "sub", "config", "core.fsmonitor", "evil")
    second.after()
    names = sorted(p.name for p in (repo / "sub").iterdir() if SUFFIX in p.name)
    assert names == [f".git{SUFFIX}", f".git{SUFFIX}.1"]


def test_a_repository_planted_two_gitlinks_deep_is_defused(repo: Path, tmp_path: Path) -> None:
    """Attack (from a review): `sub` is an honest submodule; the run plants
    `sub/inner` and registers it in *sub's* index, rewritten in place. The
    host's `git status` recurses sub -> sub/inner and runs its fsmonitor."""
    marker = tmp_path / "RAN"
    submodule(repo, "sub")
    (repo / "sub" / "f").write_text("x")
    git(repo / "sub", "add", "f")
    _settle()
    g = guard(tmp_path, repo)
    head = nested(repo / "sub", "inner", marker)
    index = Path(git(repo / "sub", "rev-parse", "--absolute-git-dir")) / "index"
    copy = tmp_path / "idx"
    copy.write_bytes(index.read_bytes())
    subprocess.run(["git", "-C", str(repo / "sub"), "update-index", "--add", "--cacheinfo",
                    f"160000,{head},inner"], env={**os.environ, "GIT_INDEX_FILE": str(copy)},
                   check=True, capture_output=True)
    with index.open("r+b") as handle:  # rewritten in place: same inode
        handle.write(copy.read_bytes())
    g.after()
    host_status(repo)
    subprocess.run(["git", "-C", str(repo), "status", "--recurse-submodules"],
                   capture_output=True, timeout=20, check=False)
    assert not marker.exists()


def test_repositories_beyond_the_checked_tree_are_kept_when_the_run_left_them_alone(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A superproject with more nested repositories than are stamped before
    the run: the ones past the limit, untouched, keep their `.git` (renaming
    a user's submodules on every run is no protection), and the report says
    what was not followed."""
    monkeypatch.setattr("sandbox.gitguard.MAX_REPOS", 2)
    for name in ("s1", "s2", "s3"):
        register(repo, name, nested(repo, name))
    _settle()
    g = guard(tmp_path, repo)
    report = g.after()
    assert report.defused == ()
    assert all((repo / name / ".git").is_dir() for name in ("s1", "s2", "s3"))
    assert any("beyond" in p for p in report.problems)


def test_a_repository_beyond_the_checked_tree_that_the_run_touched_is_defused(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sandbox.gitguard.MAX_REPOS", 2)
    for name in ("s1", "s2", "s3"):
        register(repo, name, nested(repo, name))
    marker = tmp_path / "RAN"
    _settle()
    g = guard(tmp_path, repo)
    git(repo / "s3", "config", "core.fsmonitor", f"touch {marker}; false")
    report = g.after()
    assert report.defused == (str(repo / "s3" / ".git"),)
    host_status(repo)
    assert not marker.exists()


@pytest.mark.parametrize("plant", ["hook rewritten in place", "info/exclude", "new module"])
def test_a_nested_repository_changed_anywhere_git_obeys_is_defused(
    repo: Path, tmp_path: Path, plant: str
) -> None:
    """Besides config and the hooks directory: a hook file rewritten in
    place (the directory's ctime stays), ``info/``, and a git directory
    added below ``modules/`` all count as changes to the repository."""
    sub = repo / "sub"
    register(repo, "sub", nested(repo, "sub"))
    hook = sub / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n")
    (sub / ".git" / "info").mkdir(exist_ok=True)
    (sub / ".git" / "info" / "exclude").write_text("")
    (sub / ".git" / "modules").mkdir()
    _settle()
    g = guard(tmp_path, repo)
    if plant == "hook rewritten in place":
        with open(hook, "r+") as handle:
            handle.write("#!/bin/sh\ntouch /tmp/x\n")
    elif plant == "info/exclude":
        with open(sub / ".git" / "info" / "exclude", "a") as handle:
            handle.write("planted\n")
    else:
        git(sub / ".git" / "modules", "init", "-q", "--bare", "m")
    report = g.after()
    assert report.defused == (str(sub / ".git"),)
