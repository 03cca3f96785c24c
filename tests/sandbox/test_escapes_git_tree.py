"""Escape tests: the tree of repositories around a run — nested ones under
names the search skips, submodules' git directories planted under
``.git/modules``, ``.git/commondir`` written while a host git is watching,
many submodules — and files `git status` does not show.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from escape_kit import consume_control, hook_script, host_git, output, require, sh

from sandbox.gitguard import SUFFIX

pytestmark = [pytest.mark.sandbox]


def _commit(repo: Path, message: str = "x") -> None:
    proc = host_git(repo, "commit", "-q", "--allow-empty", "-m", message)
    assert proc.returncode == 0, proc.stderr


# -- repositories under names the search does not walk into -----------------------

SKIPPED_NAMES = ["target", ".venv", "node_modules", "__pycache__"]


@pytest.mark.parametrize("name", SKIPPED_NAMES)
def test_a_repository_planted_under_a_dependency_tree_name_is_defused(
    git_ws: Path, tmp_path: Path, name: str
) -> None:
    """Attack: the repository search skips dependency trees, so a planted
    `target/.git` with `core.fsmonitor` waited for the user's `git status`
    there. Such a directory is looked into (not walked below)."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, f"git init -q {name} && git -C {name} config core.fsmonitor "
                      f"'touch {marker}' && echo ran > control.txt")
    consume_control(git_ws, proc)
    host_git(git_ws / name, "status")
    assert not marker.exists(), "the host's git ran the planted repository's fsmonitor"
    assert (git_ws / name / f".git{SUFFIX}").exists()


@pytest.mark.parametrize("name", SKIPPED_NAMES)
def test_an_existing_repository_under_a_skipped_name_is_protected_and_left_alone(
    git_ws: Path, tmp_path: Path, name: str
) -> None:
    """The user's own repository named `target/`: found before the run, so
    its hooks are read-only; untouched, it is not quarantined."""
    repo = git_ws / name
    repo.mkdir()
    assert host_git(repo, "init", "-q").returncode == 0
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, f"printf '#!/bin/sh\\ntouch {marker}\\n' > {name}/.git/hooks/pre-commit "
                      f"&& chmod +x {name}/.git/hooks/pre-commit; echo ran > control.txt")
    consume_control(git_ws, proc)
    assert (repo / ".git").is_dir(), output(proc)
    assert not (repo / f".git{SUFFIX}").exists()
    _commit(repo)
    assert not marker.exists(), "a hook planted in the nested repository ran on the host"


# -- git directories planted for submodules -----------------------------------------

PLANT_MODULE = """
    git clone -q --bare . .git/modules/m &&
    git --git-dir=.git/modules/m config core.bare false &&
    git --git-dir=.git/modules/m config core.fsmonitor 'touch {marker}' &&
    echo ran > control.txt
"""


def _declared_submodule(ws: Path) -> None:
    """A submodule `m` declared and committed but never checked out (a
    clone made without --recursive): its git directory does not exist yet.
    The gitlink names the superproject's own first commit, which a clone of
    the superproject holds."""
    head = host_git(ws, "rev-parse", "HEAD").stdout.decode().strip()
    (ws / ".gitmodules").write_text('[submodule "m"]\n\tpath = m\n\turl = ./nowhere\n')
    for args in (["update-index", "--add", "--cacheinfo", f"160000,{head},m"],
                 ["add", ".gitmodules"], ["commit", "-q", "-m", "declare m"]):
        proc = host_git(ws, *args)
        assert proc.returncode == 0, proc.stderr


def _submodule_update(ws: Path) -> None:
    host_git(ws, "-c", "protocol.file.allow=always", "submodule", "update", "--init")
    host_git(ws / "m", "status")


def test_a_submodule_git_directory_planted_in_the_run_is_renamed_aside(
    git_ws: Path, tmp_path: Path
) -> None:
    """Attack: a submodule `m` is declared but not checked out; the run makes
    `.git/modules/m` with `core.fsmonitor`, and the user's `git submodule
    update --init` takes the planted directory for the submodule's and runs
    git in it. The new git directory is renamed aside after the run."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    _declared_submodule(git_ws)
    proc = sh(git_ws, PLANT_MODULE.format(marker=marker))
    consume_control(git_ws, proc)
    assert (git_ws / ".git" / "modules" / f"m{SUFFIX}").is_dir(), output(proc)
    _submodule_update(git_ws)
    assert not marker.exists(), "the host's `git submodule update` ran a planted fsmonitor"
    assert "renamed to " + str(git_ws / ".git" / "modules" / "m") + SUFFIX in output(proc)


def test_the_planted_submodule_git_directory_runs_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path
) -> None:
    """Control for the test above: unsandboxed, the attack runs on the host."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    _declared_submodule(git_ws)
    subprocess.run(["sh", "-c", PLANT_MODULE.format(marker=marker)], cwd=git_ws,
                   capture_output=True, timeout=30, check=False)
    _submodule_update(git_ws)
    assert marker.exists()


# -- a sentinel: .git/commondir must not appear, even for a moment ------------------


@pytest.mark.parametrize(("name", "content"), [
    ("commondir", "/tmp"),
    # obeyed when extensions.worktreeConfig is on (git sparse-checkout sets it)
    ("config.worktree", "[core]\\n\\tfsmonitor = touch /tmp/x"),
])
def test_creating_a_git_file_git_obeys_stops_the_command_at_once(
    git_ws: Path, name: str, content: str
) -> None:
    """Attack: `.git/commondir` written while an editor's git polls the
    repository: that git reads its config (and `core.fsmonitor`) from where
    the file points before any post-run check. The run is stopped the
    moment the name appears, and the file is taken away."""
    proc = sh(git_ws, f"echo ran > control.txt; printf '{content}' > .git/{name}; sleep 5; "
                      "echo survived > survived.txt")
    consume_control(git_ws, proc)
    assert proc.returncode == 137, output(proc)
    assert not (git_ws / "survived.txt").exists()
    assert f"{name} was created during the run" in output(proc)
    assert not (git_ws / ".git" / name).exists()
    assert host_git(git_ws, "status").returncode == 0


# -- many submodules: beyond the mounted ones and the checked tree ------------------


def _superproject(ws: Path, count: int, prefix: str = "") -> None:
    """``count`` submodules at ``prefix``, checked out, each with its git
    directory under ``.git/modules`` (built on the host with git itself)."""
    origin = ws.parent / "origin"
    origin.mkdir()
    assert host_git(origin, "init", "-q").returncode == 0
    _commit(origin, "origin")
    for n in range(count):
        proc = host_git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                        str(origin), f"{prefix}s{n}")
        assert proc.returncode == 0, proc.stderr
    _commit(ws, "submodules")


#: more submodules than the git directories a run protects by mounts (32),
#: deeper than the search for repositories goes (4 levels): reached only
#: through the superproject's `.git/modules`
MANY = 34
DEEP = "a/b/c/d/"


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["config", "hook"])
def test_a_superproject_with_many_submodules_keeps_them_all_after_a_run(
    git_ws: Path, tmp_path: Path, plant: str
) -> None:
    """Past the git directories protected by mounts, the rest are
    tripwired. A run that leaves them alone leaves every one of them
    working; one whose config or hooks the run changed is renamed aside
    whole (a hook cannot be put back from a copy), and nothing planted
    runs on the host — neither on `git status` nor on `git submodule update`."""
    _superproject(git_ws, MANY, DEEP)
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, "echo ran > control.txt")
    consume_control(git_ws, proc)
    assert SUFFIX not in output(proc), output(proc)
    for n in range(MANY):
        assert (git_ws / f"{DEEP}s{n}" / ".git").is_file(), f"s{n} was defused by a plain run"
    # planted in every submodule: the mounted ones refuse it, the others
    # are the ones under test
    if plant == "config":
        plants = [f"git -C {DEEP}s{n} config core.fsmonitor 'touch {marker}' 2>/dev/null"
                  for n in range(MANY)]
    else:
        plants = [hook_script(f".git/modules/{DEEP}s{n}/hooks/pre-commit", marker)
                  + " 2>/dev/null" for n in range(MANY)]
    proc = sh(git_ws, "; ".join(plants) + "; echo ran > control.txt")
    consume_control(git_ws, proc)
    require("renamed" in output(proc) or plant == "config", "some submodule took the plant",
            proc)
    host_git(git_ws, "status")
    host_git(git_ws, "-c", "protocol.file.allow=always", "submodule", "update", "--init")
    for n in range(MANY):
        host_git(git_ws / f"{DEEP}s{n}", "status")
        host_git(git_ws / f"{DEEP}s{n}", "commit", "-q", "--allow-empty", "-m", "host commit")
    assert not marker.exists(), f"a {plant} planted in a submodule past the mounted ones ran"


# -- files git status does not show --------------------------------------------------


def test_files_created_where_git_ignores_them_are_reported(git_ws: Path) -> None:
    """A `.pyc` planted in an ignored `__pycache__` runs on the next
    `pytest`, and `git status` stays clean: each file git ignores that the
    run created is reported (by directory), the visible ones are not."""
    (git_ws / ".gitignore").write_text("build/\n__pycache__/\n")
    assert host_git(git_ws, "add", ".gitignore").returncode == 0
    _commit(git_ws, "ignore")
    proc = sh(git_ws, "mkdir -p build pkg/__pycache__ && echo x > build/run.sh && "
                      "echo x > pkg/__pycache__/mod.cpython-311.pyc && echo x > shown.txt && "
                      "echo ran > control.txt")
    consume_control(git_ws, proc)
    text = output(proc)
    require((git_ws / "build" / "run.sh").exists(), "the ignored file was written", proc)
    assert "2 files created during the run" in text, text
    assert "build/ (1)" in text and "pkg/__pycache__/ (1)" in text
    assert "shown.txt" not in text


def test_a_run_that_creates_only_files_git_shows_reports_nothing(git_ws: Path) -> None:
    proc = sh(git_ws, "echo x > shown.txt && echo ran > control.txt")
    consume_control(git_ws, proc)
    assert "ignored by git" not in output(proc)


def test_a_run_that_creates_nothing_asks_git_nothing(
    git_ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that creates nothing starts no second sandbox to ask git about
    what it made (the names the sandbox keeps missing, `.mcp.json`,
    `.gitmodules` …, are nothing it made)."""
    import sandbox.unseen
    from sandbox import load_profile, run

    asked: list[list[str]] = []
    real = sandbox.unseen._ignored

    def spy(worktree: str, rels: list[str], **kw: object) -> tuple[list[str], str]:
        asked.append(rels)
        return real(worktree, rels, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox.unseen, "_ignored", spy)
    time.sleep(0.1)  # the fixture's files are older than the run (50 ms of clock slack)
    result = run(["true"], load_profile(), cwd=str(git_ws))
    assert result.exit_code == 0
    assert asked == []
    run(["sh", "-c", "echo x > new.txt"], load_profile(), cwd=str(git_ws))
    assert asked == [["new.txt"]]


@pytest.mark.parametrize("link", [".git/modules/m", ".git/modules"])
def test_a_symlink_planted_as_a_submodule_git_directory_is_renamed_aside(
    git_ws: Path, tmp_path: Path, link: str
) -> None:
    """`ln -s ../x-cache .git/modules/m` makes `git submodule update
    --init` adopt a planted bare repository, hooks and all."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    _declared_submodule(git_ws)
    target = "../x-cache" if link.endswith("/m") else "x-cache/modules"
    bare = ".git/x-cache" if link.endswith("/m") else ".git/x-cache/modules/m"
    proc = sh(git_ws, f"git init -q --bare {bare} && "
                      f"git --git-dir={bare} config core.fsmonitor 'touch {marker}; false' && "
                      f"mkdir -p .git/modules && rm -rf {link} && ln -s {target} {link} && "
                      "echo ran > control.txt")
    consume_control(git_ws, proc)
    assert not (git_ws / link).is_symlink(), output(proc)
    assert "renamed" in output(proc)
    _submodule_update(git_ws)
    assert not marker.exists()


#: a file git reads by itself, made a FIFO -> a host git command that read it
#: where a FIFO would hang a host tool that opens the name by itself: git's
#: per-directory files (at the top, below, under a package cache the
#: post-run search skips, past its depth), its index and a `.git`, a
#: version manager's pin read at every shell prompt; and the sandbox's own
#: /tmp (the file type is refused wherever it is asked for)
FIFO_PLACES = {
    ".gitignore": ".gitignore",
    "sub/.gitattributes": "sub/.gitattributes",
    ".mailmap": ".mailmap",
    "under a package cache": ".cache/pkg/.gitignore",
    "past the search's depth": "/".join(["d"] * 70) + "/.gitignore",
    ".git/index": ".git/index",
    "sub/.git": "sub/.git",
    ".python-version": ".python-version",
    "the sandbox's /tmp": "/tmp/fifo",
}
#: every way to ask for one: the tool, mknod(1), and the syscall itself
FIFO_MAKERS = {
    "mkfifo": "mkfifo {path}",
    "mknod p": "mknod {path} p",
    "os.mkfifo": "python3 -c 'import os, sys; os.mkfifo(sys.argv[1])' {path}",
}


#: links a command may leave where a host tool opens a name by itself:
#: (the link, where it leads)
DEVICE_LINKS = {
    ".hgignore to the terminal": (".hgignore", "/dev/stdin"),
    ".hgignore to endless zeros": (".hgignore", "/dev/zero"),
    ".bzrignore to the terminal": (".bzrignore", "/dev/tty"),
    "a nested .gitignore through /proc": ("sub/.gitignore", "/proc/self/fd/0"),
    ".python-version by a relative path": (".python-version", "../../../../../../../dev/zero"),
    "through /dev/fd": (".hgignore", "/dev/fd/0"),
    "a link to /dev itself": ("d", "/dev"),
    "in a package cache the search passes over": (".cache/x/.ignore", "/dev/zero"),
}


@pytest.mark.skipif(shutil.which("hg") is None,
                    reason="Mercurial is not installed (make test installs it as root)")
def test_an_hgignore_linked_to_the_terminal_hangs_host_hg(tmp_path: Path) -> None:
    """The control for the test below, on the host: `hg status` waits on
    `.hgignore -> /dev/stdin` for as long as its input stays open."""
    subprocess.run(["hg", "init", str(tmp_path)], check=True, capture_output=True,
                   env={**os.environ, "HGRCPATH": ""})
    (tmp_path / ".hgignore").symlink_to("/dev/stdin")
    read, write = os.pipe()  # an input that stays open, as a terminal does
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run(["hg", "status"], cwd=tmp_path, stdin=read,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=3,
                           check=False, env={**os.environ, "HGRCPATH": ""})
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.parametrize("case", list(DEVICE_LINKS))
def test_a_link_to_a_device_where_a_host_tool_reads_by_itself_is_moved_aside(
        git_ws: Path, case: str) -> None:
    """From a review: `.hgignore -> /dev/stdin` hung the host's `hg status`
    on the terminal, `-> /dev/zero` grew it past 1.5 GB; `.bzrignore` hung
    `brz status`. No FIFO can be made, but a link to a device can: one
    made during the run, under any name, is renamed aside and named."""
    name, target = DEVICE_LINKS[case]
    proc = sh(git_ws, f"mkdir -p $(dirname {name}) && ln -s {target} {name} && "
                      "echo ran > control.txt")
    consume_control(git_ws, proc)
    assert not (git_ws / name).is_symlink(), output(proc)
    kept = list((git_ws / name).parent.glob((git_ws / name).name + SUFFIX + "*"))
    assert len(kept) == 1 and kept[0].is_symlink()  # the command's link, kept for review
    assert name.rsplit("/", 1)[-1] in output(proc)


def test_a_link_to_a_device_in_a_cache_linked_in_is_moved_aside(git_ws: Path) -> None:
    """From a review: `.cache/y/.ignore -> /dev/zero` and `t -> .cache/y`:
    `rg --hidden` (Claude Code's Grep) read the device through either."""
    proc = sh(git_ws, "mkdir -p .cache/y && ln -s /dev/zero .cache/y/.ignore && "
                      "ln -s .cache/y t && echo ran > control.txt")
    consume_control(git_ws, proc)
    assert not (git_ws / ".cache" / "y" / ".ignore").is_symlink(), output(proc)


def test_a_link_to_dev_null_stays(git_ws: Path) -> None:
    """`ln -s /dev/null x` (a log silenced, a config masked) reads nothing."""
    proc = sh(git_ws, "ln -s /dev/null .hgignore && echo ran > control.txt")
    consume_control(git_ws, proc)
    assert (git_ws / ".hgignore").is_symlink(), output(proc)


def test_a_fifo_named_like_a_file_git_reads_hangs_host_git(tmp_path: Path) -> None:
    """The control for the test below, on the host: `mkfifo .gitignore`
    makes the host's next `git status` wait for ever."""
    repo = tmp_path / "repo"
    repo.mkdir()
    assert host_git(repo, "init", "-q").returncode == 0
    subprocess.run(["bash", "-c", "mkfifo .gitignore"], cwd=repo, check=True)
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(["git", "-C", str(repo), "status", "--short"], capture_output=True,
                       timeout=2, check=False)


#: each place with mkfifo, each other maker at the top
FIFO_CASES = [(place, "mkfifo") for place in FIFO_PLACES] + [
    (".gitignore", maker) for maker in FIFO_MAKERS if maker != "mkfifo"]


@pytest.mark.parametrize(("place", "maker"), FIFO_CASES)
def test_no_fifo_can_be_made_where_a_host_tool_would_wait_on_it(
    git_ws: Path, place: str, maker: str
) -> None:
    """Attack (from a review): `mkfifo .gitignore`. git opens the files it
    reads by itself (ignore and attribute rules at every depth, the
    mailmap, the index) with a blocking open, as version managers open
    their pin at every prompt: the host's next `git status` hung for ever.
    The post-run search renamed such a FIFO aside where it looked, but not
    under the package caches it skips, nor past its depth, nor under names
    it did not know. The filter refuses the file type; the command goes on
    (the control) and git on the host answers at once."""
    path = FIFO_PLACES[place]
    (git_ws / "sub").mkdir()
    (git_ws / "sub" / "x").write_text("x\n")
    prepare = f"rm -f {path}; mkdir -p $(dirname {path}) && "
    attempt = FIFO_MAKERS[maker].format(path=path)
    proc = sh(git_ws, f"{prepare}{attempt}; "
                      f"if [ -p {path} ]; then echo made > control.txt; "
                      f"else echo refused > control.txt; fi")
    assert consume_control(git_ws, proc) == "refused\n", output(proc)
    assert "Operation not permitted" in output(proc)
    fifos = [p for p in git_ws.rglob("*") if p.is_fifo()]
    assert fifos == []
    answer = host_git(git_ws, "status", "--short")  # raises TimeoutExpired if it hangs
    assert answer.returncode == 0, answer.stderr
