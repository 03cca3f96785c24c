"""Escape tests: every version control system's own directory, proved with
the real tool. Each one obeys a file in its repository directory that runs
a program on the host later: Mercurial's `.hg/hgrc` hooks on `hg status`,
darcs's `_darcs/prefs/defaults` prehooks on any command, Fossil's checkout
database naming the repository whose `before-commit` hook runs on
`fossil commit`, Breezy's `.bzr/branch/branch.conf` whose `post_commit`
Python is evaluated on `brz commit`.

For each tool: the control plants the same thing without the sandbox and
the host tool runs it; then the sandboxed command plants it into a
repository that existed before the run, and into one it makes itself, and
the host tool runs nothing. A tool that is not installed is skipped with
its reason (`make test` installs them as root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from escape_kit import consume_control, output, require, sh

pytestmark = [pytest.mark.sandbox]


@dataclass(frozen=True)
class Proof:
    """One tool's attack. Shell strings; ``{marker}`` is the file the
    planted program touches."""

    tool: str
    #: makes a repository in the current directory (on the host, or by the
    #: sandboxed command for a repository it makes itself)
    init: str
    #: plants the program in an existing repository
    plant: str
    #: what the user later runs on the host
    trigger: str


PROOFS = {
    "hg": Proof(
        "hg", "hg init",
        "printf '[hooks]\\npre-status = touch {marker}\\n' >> .hg/hgrc",
        "hg status"),
    "darcs": Proof(
        "darcs", "darcs init -q",
        "printf 'ALL prehook touch {marker}\\nALL run-prehook\\n' >> _darcs/prefs/defaults",
        "darcs whatsnew"),
    # the repository database lives outside the checkout (in the home
    # here); the checkout's `.fslckout` names it, so re-opening the
    # checkout on a planted database is the attack (hooks are that
    # database's settings)
    "fossil": Proof(
        "fossil",
        "fossil init $HOME/origin.fossil >/dev/null && fossil open -k $HOME/origin.fossil",
        "rm -f .fslckout; fossil init planted.fossil >/dev/null && fossil hook add "
        "-R planted.fossil --command 'touch {marker}' --type before-commit --sequence 1 "
        "&& fossil open --force planted.fossil",
        "echo x > f.txt && fossil add f.txt && fossil commit -m x --no-warnings"),
    # `post_commit` is Python, split at spaces and evaluated (chr(32) is
    # the space the command needs)
    "brz": Proof(
        "brz", "brz init -q .",
        "printf '%s\\n' 'post_commit = __import__(\"os\").system(\"touch\"+chr(32)+"
        "\"{marker}\")or(str)' >> .bzr/branch/branch.conf",
        "echo x > f.txt && brz add -q f.txt && brz commit -q -m x"),
    # not packaged by Debian: skipped here with that reason, run where a
    # user has installed them (the repository configuration's editor runs
    # on `jj describe`; Sapling's hooks are Mercurial's)
    "jj": Proof(
        "jj", "jj git init -q 2>/dev/null || jj git init",
        "mkdir -p .jj/repo && printf 'ui.editor = \"touch {marker}\"\\n' "
        ">> .jj/repo/config.toml",
        "jj describe"),
    "sl": Proof(
        "sl", "sl init",
        "printf '[hooks]\\npre-status = touch {marker}\\n' >> .sl/config",
        "sl status"),
}


def _env(home: Path) -> dict[str, str]:
    """What each tool needs to run at all, in a home of the test's own:
    a user name and e-mail, no user configuration of the real home."""
    return {**os.environ, "HOME": str(home), "USER": "tester", "LOGNAME": "tester",
            "FOSSIL_HOME": str(home), "BRZ_EMAIL": "Tester <tester@example.invalid>",
            "HGRCPATH": "", "HGPLAIN": "1", "HGUSER": "tester"}


def _host(script: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[bytes]:
    """The user running ``script`` on the host, later."""
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, timeout=60,
                          check=False, env=_env(home))


#: what make test cannot install: not packaged by Debian
_UNPACKAGED = frozenset({"jj", "sl"})


def _installed(tool: str) -> None:
    if shutil.which(tool) is None:
        why = ("is not packaged by Debian; install it to run this proof" if tool in _UNPACKAGED
               else "is not installed (make test installs it as root)")
        pytest.skip(f"{tool} {why}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    where = tmp_path / "home"
    where.mkdir()
    return where


@pytest.mark.parametrize("name", list(PROOFS))
def test_the_planted_program_runs_on_the_host_without_the_sandbox(
        tmp_path: Path, home: Path, name: str) -> None:
    """The control: on the host, the plant makes the tool run the program."""
    proof = PROOFS[name]
    _installed(proof.tool)
    repo = tmp_path / "control" / "repo"
    repo.mkdir(parents=True)
    marker = tmp_path / "ran"
    made = _host(f"{proof.init} && {proof.plant.format(marker=marker)}", repo, home)
    assert made.returncode == 0, output(made)
    _host(proof.trigger, repo, home)
    require(marker.exists(), f"{proof.tool} runs the program planted by: {proof.plant}")


#: where the repository is: the workspace's top or a directory below it
#: (`vendor/lib`, where the search after a run finds it), there before the
#: run or made by the command
PLACES = {"existing": (".", True), "new": (".", False),
          "nested existing": ("vendor/lib", True), "nested new": ("vendor/lib", False)}


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("name", list(PROOFS))
def test_a_program_planted_in_a_repository_directory_never_runs_on_the_host(
        workspace: Path, tmp_path: Path, home: Path, name: str, place: str) -> None:
    """From a review: `.hg/hgrc` hooks ran on the host's next `hg status`,
    and the other systems' directories were writable — at the top of the
    workspace, and below it where only `.git` was looked for. The sandboxed
    command plants the program in a repository there before the run (read
    only for the run: the search after an earlier run found a nested one)
    or made by itself (renamed aside after the run, or the run stopped at
    once), and reports that it ran."""
    proof = PROOFS[name]
    _installed(proof.tool)
    where, existing = PLACES[place]
    repo = workspace / where
    repo.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "ran"
    if existing:
        made = _host(proof.init, repo, home)
        assert made.returncode == 0, output(made)
        sh(workspace, "true")  # the search after a run learns a nested one
    # the tools' own settings (user name, config database) go to a home
    # inside the workspace: the real one is read-only in the sandbox
    setup = ("export HOME=$PWD/.tool-home USER=tester FOSSIL_HOME=$PWD/.tool-home "
             f"BRZ_EMAIL='Tester <tester@example.invalid>'; mkdir -p $HOME; cd {where}; ")
    attack = proof.plant.format(marker=marker)
    if not existing:
        attack = f"{proof.init} && {attack}"
    proc = sh(workspace, f"{setup}( {attack} ) >/dev/null 2>&1; echo ran > "
                         f"{workspace}/control.txt")
    if b"was created during the run" not in proc.stderr:
        # (a new repository directory at the top is a sentinel: the sandbox
        # may stop the command at once, before the control)
        assert consume_control(workspace, proc) == "ran\n"
    _host(proof.trigger, repo, home)
    assert not marker.exists(), output(proc)


def test_a_repository_planted_at_the_top_of_a_deep_submodule_never_runs_on_the_host(
        git_ws: Path, tmp_path: Path, home: Path) -> None:
    """From a review: a submodule five levels down — deeper than the plan
    looks for repositories, so its top is not protected during the run —
    was still taken for a protected top after it, and an `.hg` planted there
    stayed: the host's `hg status` in the submodule ran its hook."""
    _installed("hg")
    source = tmp_path / "lib"
    source.mkdir()
    made = _host("git init -q && git -c user.name=t -c user.email=t@x commit -q "
                 "--allow-empty -m lib", source, home)
    assert made.returncode == 0, output(made)
    where = "d1/d2/d3/d4/d5/sub"
    made = _host(f"git -c protocol.file.allow=always submodule add -q {source} {where} && "
                 "git -c user.name=t -c user.email=t@x commit -qm sub", git_ws, home)
    assert made.returncode == 0, output(made)
    sh(git_ws, "true")  # the search after a run learns the tree
    marker = tmp_path / "ran"
    plant = PROOFS["hg"].plant.format(marker=marker)
    proc = sh(git_ws, f"cd {where} && hg init && {plant}; echo ran > {git_ws}/control.txt")
    assert consume_control(git_ws, proc) == "ran\n"
    _host("hg status", git_ws / where, home)
    assert not marker.exists(), output(proc)
    assert "Mercurial" in output(proc)


FOSSIL_HOOK = ("fossil hook add -R proj.fossil --command 'touch {marker}' "
               "--type before-commit --sequence 1")


@pytest.mark.parametrize("where", [".", "vendor/lib"])
def test_a_hook_added_to_a_fossil_repository_database_in_the_workspace_never_runs(
        workspace: Path, tmp_path: Path, home: Path, where: str) -> None:
    """From a review: the checkout file was protected, but the repository
    database it names lay in the workspace (`fossil init proj.fossil;
    fossil open proj.fossil`), and the command added a before-commit hook
    to it; the host's next `fossil commit` ran it. The control adds the
    same hook without the sandbox."""
    _installed("fossil")
    marker = tmp_path / "ran"
    control = tmp_path / "control"
    control.mkdir()
    opened = "fossil init proj.fossil >/dev/null && fossil open -k proj.fossil >/dev/null"
    made = _host(f"{opened} && {FOSSIL_HOOK.format(marker=marker)}", control, home)
    assert made.returncode == 0, output(made)
    _host(PROOFS["fossil"].trigger, control, home)
    require(marker.exists(), "fossil commit runs a hook added to the repository database")
    marker.unlink()
    repo = workspace / where
    repo.mkdir(parents=True, exist_ok=True)
    made = _host(opened, repo, home)
    assert made.returncode == 0, output(made)
    sh(workspace, "true")  # the search after a run learns a nested checkout
    setup = "export HOME=$PWD/.tool-home USER=tester; mkdir -p $HOME; "
    proc = sh(workspace, f"{setup}cd {where} && ( {FOSSIL_HOOK.format(marker=marker)} ) "
                         f">/dev/null 2>&1; echo ran > {workspace}/control.txt")
    assert consume_control(workspace, proc) == "ran\n"
    _host(PROOFS["fossil"].trigger, repo, home)
    assert not marker.exists(), output(proc)


#: a repository planted where the search after a run does not look (a
#: package cache), then made a place the user works in by a link
LINKED_PLANTS = {
    "hg": ("hg init && " + PROOFS["hg"].plant, "hg status"),
    "git": ("git init -q && git config core.fsmonitor 'touch {marker}; :'", "git status"),
}


@pytest.mark.parametrize("tool", list(LINKED_PLANTS))
def test_a_repository_planted_in_a_cache_and_linked_in_never_runs_on_the_host(
        workspace: Path, tmp_path: Path, home: Path, tool: str) -> None:
    """From a review: the search after a run passes over package caches
    (`.cache`, `.npm` …); `mkdir -p .cache/tools`, a repository with a
    planted hook there, and `ln -s .cache/tools tools` — the host's `cd
    tools && hg status` ran the hook. The control plants the same without
    the sandbox."""
    _installed(tool)
    plant, trigger = LINKED_PLANTS[tool]
    marker = tmp_path / "ran"
    script = (f"mkdir -p .cache/tools && (cd .cache/tools && {plant.format(marker=marker)}) "
              ">/dev/null 2>&1 && ln -s .cache/tools tools")
    control = tmp_path / "control"
    control.mkdir()
    _host(script, control, home)
    _host(trigger, control / "tools", home)
    require(marker.exists(), f"{trigger} in the linked cache directory runs the plant")
    marker.unlink()
    proc = sh(workspace, f"{script}; echo ran > control.txt")
    assert consume_control(workspace, proc) == "ran\n", output(proc)
    _host(trigger, workspace / "tools", home)
    assert not marker.exists(), output(proc)


@pytest.mark.parametrize("left", ["proj.fossil-journal", "proj.fossil-wal",
                                  ".fslckout-journal", "link.fossil"])
def test_nothing_sqlite_or_fossil_replays_into_the_database_is_left_by_a_run(
        workspace: Path, home: Path, left: str) -> None:
    """From a review: with the database read-only, a run left a hot
    journal beside it (`proj.fossil-journal` holding the pages of a copy
    with a before-commit hook); the host's next `fossil commit` recovered
    it and ran the hook — the same through `.fslckout-journal`, and by
    re-pointing `link.fossil`, the link the checkout names, at a planted
    database. After the run, none of them is as the command left it."""
    _installed("fossil")
    (workspace / "data").mkdir()
    made = _host("fossil init data/proj.fossil >/dev/null && ln -s data/proj.fossil "
                 "proj.fossil && ln -s data/proj.fossil link.fossil && "
                 "fossil open -k link.fossil >/dev/null", workspace, home)
    assert made.returncode == 0, output(made)
    database = (workspace / "data" / "proj.fossil").resolve()
    target = workspace / left if not left.startswith("proj.fossil") else Path(
        f"{database}{left.removeprefix('proj.fossil')}")
    write = (f"rm -f {target}; ln -s planted.fossil {target}" if left == "link.fossil"
             else f"printf 'planted' > {target}")
    proc = sh(workspace, f"( {write} ) >/dev/null 2>&1; echo ran > control.txt")
    if b"was replaced or removed during the run" not in proc.stderr:
        # (a protected link replaced stops the command at once, before the control)
        assert consume_control(workspace, proc) == "ran\n"
    if left == "link.fossil":
        assert os.readlink(target) == "data/proj.fossil", output(proc)
    else:
        assert not target.exists(), output(proc)


@pytest.mark.parametrize("checkout", ["an endless view", "a NUL in the name"])
def test_a_hostile_fossil_checkout_from_a_clone_neither_hangs_nor_breaks_a_run(
        workspace: Path, checkout: str) -> None:
    """From a review: a `.fslckout` that came in a cloned repository, its
    `vvar` a view over an endless recursive query, hung the plan at 100%
    CPU; a repository name holding a NUL stopped every run with an
    internal error. Both are no checkout shellgate can read: the run goes
    on, at once."""
    import sqlite3
    import time

    db = sqlite3.connect(workspace / ".fslckout")
    if checkout == "an endless view":
        db.execute("CREATE VIEW vvar(name, value) AS WITH RECURSIVE c(x) AS "
                   "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 'repository', x FROM c "
                   "WHERE x < 0")
    else:
        db.execute("CREATE TABLE vvar(name TEXT PRIMARY KEY, value CLOB)")
        db.execute("INSERT INTO vvar VALUES (?, ?)", ("repository", "a\x00b.fossil"))
    db.commit()
    db.close()
    started = time.monotonic()
    proc = sh(workspace, "echo ran > control.txt")
    assert consume_control(workspace, proc) == "ran\n", output(proc)
    assert proc.returncode == 0, output(proc)
    assert time.monotonic() - started < 20
