"""Escape tests: code planted in git's hooks, config and nested repositories,
and the gitlink guard turned against the host.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import struct
import subprocess
import time
from pathlib import Path

import pytest
from escape_kit import (
    PY,
    SHELLGATE,
    consume_control,
    hook_script,
    host_git,
    output,
    padded,
    require,
    require_same_stat,
    rewrite_in_place,
    run_planted_git,
    sh,
    snapshot,
)

from sandbox.gitguard import SUFFIX

pytestmark = [pytest.mark.sandbox]


# -- 4. git hooks and git config ----------------------------------------------

GIT_ATTACKS = {
    "write .git/hooks/pre-commit": "{hook:.git/hooks/pre-commit}",
    "empty and refill .git/hooks":
        "rm -rf .git/hooks/*; rm -rf .git/hooks; mkdir -p .git/hooks; "
        "{hook:.git/hooks/pre-commit}",
    "rename .git away and plant a new one":
        "mv .git .git2 && mkdir -p .git/hooks && {hook:.git/hooks/pre-commit} && "
        "cp -r .git2/HEAD .git2/config .git2/objects .git2/refs .git/",
    "git config core.hooksPath":
        "mkdir -p evil-hooks && {hook:evil-hooks/pre-commit}; "
        "git config core.hooksPath \"$PWD/evil-hooks\"",
    "git config core.fsmonitor": "git config core.fsmonitor 'touch {marker}'",
    "append to .git/config": "printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> .git/config",
    "replace .git/config by rename":
        "cp .git/config cfg && printf '[core]\\n\\thooksPath = /nonexistent\\n"
        "\\tfsmonitor = touch {marker}\\n' >> cfg && mv -f cfg .git/config",
}


def _git_script(template: str, marker: Path) -> str:
    script = template.replace("{marker}", str(marker))
    while "{hook:" in script:
        start = script.index("{hook:")
        end = script.index("}", start)
        script = script[:start] + hook_script(script[start + 6 : end], marker) + script[end + 1 :]
    return script


@pytest.mark.parametrize("attack", list(GIT_ATTACKS))
def test_a_command_cannot_plant_code_in_the_repositorys_git_hooks_or_config(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Attack: plant a hook or a config entry (core.hooksPath,
    core.fsmonitor) that the user's next `git status`/`git commit` would run
    on the host, outside any sandbox."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    hooks_before = snapshot(git_ws / ".git" / "hooks")
    config_before = (git_ws / ".git" / "config").read_bytes()
    proc = sh(git_ws, f"{_git_script(GIT_ATTACKS[attack], marker)}; echo ran > control.txt")
    consume_control(git_ws, proc)
    assert snapshot(git_ws / ".git" / "hooks") == hooks_before
    assert (git_ws / ".git" / "config").read_bytes() == config_before
    assert not (git_ws / ".git2").exists()
    run_planted_git(git_ws)
    assert not marker.exists(), "the planted code ran on the host"


@pytest.mark.parametrize("attack", list(GIT_ATTACKS))
def test_each_git_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Control for the table above: run unsandboxed, on a throwaway repo,
    each attack really does make the host's git run the planted code, so
    the sandboxed test is not vacuous."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    subprocess.run(["sh", "-c", _git_script(GIT_ATTACKS[attack], marker)], cwd=git_ws,
                   capture_output=True, timeout=20, check=False)
    run_planted_git(git_ws)
    assert marker.exists()


def test_a_command_cannot_redirect_git_to_a_planted_common_dir(
    git_ws: Path, tmp_path: Path
) -> None:
    """Attack: `.git/commondir` points git at a planted directory whose
    config and hooks then run on the host (hooks/ and config stay intact)."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    script = f"""
        mkdir evil && cp -r .git/objects .git/refs evil/ && cp .git/config evil/config
        git config -f evil/config core.fsmonitor 'touch {marker}'
        mkdir evil/hooks && {hook_script("evil/hooks/pre-commit", marker)}
        echo ran > control.txt
        echo ../evil > .git/commondir
    """
    # the control before the plant: the sandbox may stop the run the moment
    # .git/commondir appears (a sentinel), before a later line could run
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    run_planted_git(git_ws)
    assert not marker.exists(), "the host's git ran code planted through .git/commondir"


def test_a_command_cannot_plant_a_nested_repository_that_runs_code_on_git_status(
    git_ws: Path, tmp_path: Path
) -> None:
    """Attack: a nested repository (submodule-like gitlink) with its own
    core.fsmonitor, which the superproject's `git status` runs."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    script = f"""
        mkdir sub && cd sub && git init -q &&
        git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x &&
        git config core.fsmonitor 'touch {marker}' && cd .. &&
        git update-index --add --cacheinfo "160000,$(git -C sub rev-parse HEAD),sub" &&
        echo ran > control.txt
    """
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    host_git(git_ws, "status")
    assert not marker.exists(), "the host's `git status` ran a nested repository's fsmonitor"


NESTED_PLACES = ["sub", "a/b/sub", "sub/inner"]


@pytest.mark.parametrize("where", NESTED_PLACES)
def test_a_nested_repository_without_a_gitlink_is_defused_too(
    git_ws: Path, tmp_path: Path, where: str
) -> None:
    """Attack: the same planted repository, registered nowhere, waiting for
    the user to run git inside its directory. Its `.git` is renamed aside."""
    _plant_unregistered_repository_and_judge(git_ws, tmp_path / "PLANTED-CODE-RAN", where)


def _plant_unregistered_repository_and_judge(git_ws: Path, marker: Path, where: str) -> None:
    """A repository made at ``where`` with a planted fsmonitor, registered
    nowhere; the host's git run inside it afterwards must not run it."""
    script = f"""
        mkdir -p {where} && cd {where} && git init -q &&
        git config core.fsmonitor 'touch {marker}' && cd {git_ws} && echo ran > control.txt
    """
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    host_git(git_ws / where, "status")
    assert not marker.exists(), "the host's git ran a nested repository's fsmonitor"
    assert (git_ws / where / f".git{SUFFIX}").exists(), output(proc)


@pytest.mark.parametrize("where", [
    "node_modules/x",             # inside a dependency tree
    "src/main/java/com/acme",     # an existing directory deeper than the plan's search
    "a/b/c/d/e/f/g/h",            # made in the run, far down
])
def test_a_nested_repository_planted_where_the_plan_does_not_look_is_defused(
    git_ws: Path, tmp_path: Path, where: str
) -> None:
    """The plan looks for repositories 4 levels deep, outside dependency
    trees; the search after the run looks everywhere. In an existing
    directory (holding tracked files, so `git status` at the top shows
    nothing new), only that directory's ctime moves."""
    existing = git_ws / "src/main/java/com/acme"
    existing.mkdir(parents=True)
    (existing / "App.java").write_text("class App {}\n")
    assert host_git(git_ws, "add", ".").returncode == 0
    assert host_git(git_ws, "commit", "-q", "-m", "app").returncode == 0
    sh(git_ws, "true")  # a run that knows the tree as it is
    _plant_unregistered_repository_and_judge(git_ws, tmp_path / "PLANTED-CODE-RAN", where)


# -- 4b. the gitlink guard must never be turned against the host ----------------------


def _index_with_gitlinks(names: list[str]) -> bytes:
    """A version-2 git index holding one gitlink entry per name (as a
    command could write it by hand: no name checks)."""
    entries = b""
    for name in sorted(names):
        raw = name.encode()
        fixed = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o160000, 0, 0, 0) + b"\x11" * 20
        fixed += struct.pack(">H", min(len(raw), 0xFFF))
        entry = fixed + raw
        entry += b"\0" * (8 - len(entry) % 8)
        entries += entry
    body = b"DIRC" + struct.pack(">II", 2, len(names)) + entries
    return body + hashlib.sha1(body).digest()


GITLINK_NAMES = {
    "an absolute name": lambda victim, ws: str(victim),
    "a name climbing out with ..": os.path.relpath,
    "a symlink to the other repository": lambda victim, ws: "link",
    "a path through a symlinked directory": lambda victim, ws: f"up/{victim.name}",
}


@pytest.mark.parametrize("kind", list(GITLINK_NAMES))
def test_a_planted_gitlink_name_cannot_make_the_guard_touch_another_repository(
    git_ws: Path, outside: Path, kind: str
) -> None:
    """Attack: register a gitlink whose name leads outside the workspace, so
    that shellgate's own post-run step renames *another* repository's
    config and hooks (breaking it, or planting a rename the user trusts).
    The index also holds an honest planted gitlink `sub`, whose defusing
    proves the guard read this index."""
    victim = outside / "victim"
    victim.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "victim"]):
        assert host_git(victim, *args).returncode == 0
    (victim / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    before = snapshot(victim / ".git")
    (git_ws / "crafted-index").write_bytes(
        _index_with_gitlinks([GITLINK_NAMES[kind](victim, git_ws), "sub"]))
    script = f"""
        ln -s {shlex.quote(str(victim))} link; ln -s {shlex.quote(str(outside))} up
        git init -q sub && cp crafted-index .git/index && echo ran > control.txt
    """
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    require((git_ws / "sub" / f".git{SUFFIX}").exists(),
            "the guard read the crafted index (it defused `sub`)", proc)
    assert snapshot(victim / ".git") == before
    assert list(outside.rglob(f"*{SUFFIX}")) == []


INDEX_TRAPS = {
    "a symlink to /dev/zero": "rm -f .git/index && ln -s /dev/zero .git/index",
    "a symlink to /dev/tty": "rm -f .git/index && ln -s /dev/tty .git/index",
    "a directory": "rm -f .git/index && mkdir .git/index",
}


@pytest.mark.parametrize("trap", list(INDEX_TRAPS))
def test_an_index_turned_into_a_trap_hangs_neither_this_run_nor_the_next(
    git_ws: Path, trap: str
) -> None:
    """Attack: turn .git/index into something that blocks a reader: the
    post-run step of this run and the pre-run step of every later run in
    the workspace hung for ever (a denial of service on the user)."""
    started = time.monotonic()
    first = sh(git_ws, f"{INDEX_TRAPS[trap]} && echo ran > control.txt", timeout=20)
    consume_control(git_ws, first)
    second = sh(git_ws, "echo again > control.txt", timeout=20)
    require(first.returncode == 0, "the first run ended with the command's status", first)
    assert consume_control(git_ws, second) == "again\n"
    assert second.returncode == 0, output(second)
    assert time.monotonic() - started < 15


def test_an_index_that_does_not_parse_is_reported_and_cleaned_up(git_ws: Path) -> None:
    """Attack: a crafted index that made the post-run parser crash: exit 125
    after the command had run, and stubs left in the workspace. Now it is a
    warning, the command's own status, the index moved aside (git gave no
    list of it: fail closed), and nothing else left behind."""
    before = snapshot(git_ws)
    script = ("printf 'DIRC\\000\\000\\000\\002\\377\\377\\377\\377x' > .git/index "
              "&& echo ran > control.txt; exit 3")
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    assert proc.returncode == 3, output(proc)
    assert "shellgate: warning:" in proc.stderr.decode()
    assert (git_ws / ".git" / f"index{SUFFIX}").exists()
    after = snapshot(git_ws)
    index_names = {".git/index", f".git/index{SUFFIX}"}
    assert set(after) - index_names == set(before) - index_names


_SUBREPO = (
    "mkdir sub && cd sub && git init -q && "
    "git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x && "
    "git config core.fsmonitor 'touch {marker}; false' && cd .."
)

PLANTING_TRICKS = {
    "a split index (the gitlink in .git/sharedindex.*)":
        "git update-index --split-index && "
        "git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub && "
        "git -c splitIndex.maxPercentChange=0 update-index --split-index",
    "an index behind a symlink":
        "git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub && "
        "mv .git/index .git/index.real && ln -s index.real .git/index",
    "index version 4":
        "git update-index --index-version 4 && "
        "git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub",
}


@pytest.mark.parametrize("trick", list(PLANTING_TRICKS))
def test_a_gitlink_planted_in_an_index_git_reads_its_own_way_is_still_defused(
    git_ws: Path, tmp_path: Path, trick: str
) -> None:
    """Attack (from a review): put the gitlink where only git looks — a
    split index, an index behind a symlink — so a guard with its own index
    parser sees nothing, while the user's `git status` runs the planted
    fsmonitor."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    script = (_SUBREPO.format(marker=marker)
              + f" && {PLANTING_TRICKS[trick]} && echo ran > control.txt")
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    moved_aside = (git_ws / ".git" / f"index{SUFFIX}").exists()
    require(moved_aside or "160000" in host_git(git_ws, "ls-files", "--stage").stdout.decode(),
            "the gitlink is in the index the host's git reads, or that index was moved "
            "aside (fail closed)", proc)
    host_git(git_ws, "status")
    assert not marker.exists(), "the host's `git status` ran the planted fsmonitor"


_GRAB = r"""
import os, sys, time
open("control.txt", "w").close()
payload = ("\n[core]\n\tfsmonitor = touch " + sys.argv[1] + "\n").encode()
end = time.monotonic() + 15
while time.monotonic() < end:
    try:
        fd = os.open(".git/config", os.O_WRONLY | os.O_APPEND)
    except OSError:
        continue
    os.write(fd, payload)
    print("WROTE", flush=True)
    break
"""


def test_a_host_rename_over_a_protected_file_stops_the_run_and_undoes_the_write(
    git_ws: Path, tmp_path: Path
) -> None:
    """Attack (from two reviews): the command retries a write to
    `.git/config` in a tight loop until the user's own `git config …` on the
    host (lockfile + rename) detaches the read-only mount over it. The run
    is stopped at once; if the write still landed in the window, the file
    is put back as it was before the run (the host's version kept beside)."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    with subprocess.Popen([SHELLGATE, "run", "--cwd", str(git_ws), "--", PY, "-c", _GRAB,
                           str(marker)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        deadline = time.monotonic() + 60  # the start, on a loaded machine
        while not (git_ws / "control.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        require((git_ws / "control.txt").exists(), "the command started")
        time.sleep(0.3)
        assert host_git(git_ws, "config", "user.name", "changed on the host").returncode == 0
        _out, err = proc.communicate(timeout=30)
    assert b"was replaced or removed during the run" in err
    assert "fsmonitor" not in (git_ws / ".git" / "config").read_text()
    assert "changed on the host" in (git_ws / ".git" / "config.replaced-during-run").read_text()
    run_planted_git(git_ws)
    assert not marker.exists()


def _paused_rebase(repo: Path) -> Path:
    """Two more commits and an interactive rebase stopped at the first
    (`edit`), as the user may leave one; its todo list (the line left
    names the second commit by its long subject)."""
    for i in (1, 2):
        (repo / f"f{i}.txt").write_text(f"{i}\n")
        assert host_git(repo, "add", f"f{i}.txt").returncode == 0
        assert host_git(repo, "commit", "-q", "-m", f"c{i} " + "subject " * 40).returncode == 0
    subprocess.run(["git", "-C", str(repo), "rebase", "-q", "-i", "HEAD~2"], check=True,
                   capture_output=True, timeout=30,
                   env={**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})
    return repo / ".git" / "rebase-merge" / "git-rebase-todo"


def test_a_paused_rebases_todo_list_rewritten_at_the_same_size_and_mtime_is_reported(
        git_ws: Path, tmp_path: Path) -> None:
    """Attack (issue 37): the todo list of a paused rebase rewritten in
    place at the same size, its mtime put back, with an `exec` line: the
    host's `git rebase --continue` (which `git status` suggests) ran it, and
    the watch of `.git/rebase-merge` (names and sizes) saw nothing. A rebase
    the agent leaves is legitimate: reported, not undone."""
    todo = _paused_rebase(git_ws)
    marker = tmp_path / "TODO-EXEC-RAN"
    old = todo.read_text()
    # `pick <hash>` without its subject, as git reads it: room for the exec line
    picks = "".join(" ".join(line.split()[:2]) + "\n" for line in old.splitlines()
                    if line.strip() and not line.startswith("#"))
    new = padded(f"exec touch {marker}\n{picks}", len(old))
    before = todo.stat()
    proc = sh(git_ws, f"{rewrite_in_place('.git/rebase-merge/git-rebase-todo', new)}; "
                      "echo ran > control.txt")
    consume_control(git_ws, proc)
    require_same_stat(todo, before, new, proc)
    # the control: the host's continuing rebase runs the planted line
    subprocess.run(["git", "-C", str(git_ws), "rebase", "--continue"], capture_output=True,
                   timeout=30, check=False, env={**os.environ, "GIT_EDITOR": "true"})
    require(marker.exists(), "the host's `git rebase --continue` ran the exec line", proc)
    assert f"{git_ws}/.git/rebase-merge was changed during the run" in output(proc), output(proc)


@pytest.mark.parametrize("form", ["a byte-order mark", "an include nine deep"])
def test_a_hooks_path_the_old_reader_missed_is_protected_as_git_reads_it(
    git_ws: Path, tmp_path: Path, form: str
) -> None:
    """The repository's configuration names a hooks directory in the work
    tree in a form a model of git's syntax misread: the directory must be
    read-only during the run, since the host's next `git commit` runs what
    is in it. The control: git itself takes the directory for its hooks."""
    hooks = git_ws / "team-hooks"
    hooks.mkdir()
    config = git_ws / ".git" / "config"
    entry = f"[core]\n\thooksPath = {hooks}\n"
    if form == "a byte-order mark":
        config.write_bytes(b"\xef\xbb\xbf" + entry.encode() + config.read_bytes())
    else:
        for i in range(9):
            (git_ws / ".git" / f"inc{i}").write_text(f"[include]\n\tpath = inc{i + 1}\n")
        (git_ws / ".git" / "inc9").write_text(entry)
        with config.open("a") as f:
            f.write("[include]\n\tpath = inc0\n")
    said = host_git(git_ws, "rev-parse", "--git-path", "hooks").stdout.decode().strip()
    require(os.path.realpath(said) == os.path.realpath(hooks),
            f"git takes {hooks} for its hooks (it said {said})", None)
    marker = tmp_path / "HOOK-RAN"
    proc = sh(git_ws, f"printf '#!/bin/sh\\ntouch {marker}\\n' > team-hooks/pre-commit; "
                      "chmod +x team-hooks/pre-commit; echo ran > control.txt")
    consume_control(git_ws, proc)
    assert not (hooks / "pre-commit").exists(), output(proc)


def test_a_linked_worktrees_hooks_directory_named_by_the_shared_config_is_protected(
    git_ws: Path, tmp_path: Path
) -> None:
    """From a review: `core.hooksPath = .githooks` in the main repository's
    config (as husky sets it) and a run in a linked worktree: the
    worktree's `.githooks` stayed writable, and the host's next `git
    commit` there ran the planted hook."""
    linked = git_ws.parent / "linked"
    host_git(git_ws, "config", "core.hooksPath", ".githooks")
    require(host_git(git_ws, "worktree", "add", "-q", str(linked)).returncode == 0,
            "the linked worktree was made")
    (linked / ".githooks").mkdir()
    marker = tmp_path / "WT-HOOK-RAN"
    proc = sh(linked, f"printf '#!/bin/sh\\ntouch {marker}\\n' > .githooks/pre-commit; "
                      "chmod +x .githooks/pre-commit; echo ran > control.txt")
    consume_control(linked, proc)
    assert not (linked / ".githooks" / "pre-commit").exists(), output(proc)


def test_a_hooks_path_given_by_the_environments_global_file_is_protected(
    git_ws: Path, tmp_path: Path
) -> None:
    """From a review: GIT_CONFIG_GLOBAL (or XDG_CONFIG_HOME) naming the file
    that sets core.hooksPath was not read when deciding what to protect."""
    glob = tmp_path / "global.gitconfig"
    glob.write_text("[core]\n\thooksPath = .githooks\n")
    (git_ws / ".githooks").mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(glob)}
    said = subprocess.run(["git", "rev-parse", "--git-path", "hooks"], cwd=git_ws, env=env,
                          capture_output=True, text=True, check=False).stdout.strip()
    require(said.endswith(".githooks"), f"git takes .githooks for its hooks ({said})")
    proc = sh(git_ws, "printf '#!/bin/sh\\ntrue\\n' > .githooks/pre-commit; echo ran > control.txt",
              env=env)
    consume_control(git_ws, proc)
    assert not (git_ws / ".githooks" / "pre-commit").exists(), output(proc)


def _linked_worktree_with_common_dir_inside(workspace: Path, tmp_path: Path, *,
                                             wt: str = "wt", common: str = "common") -> Path:
    """The workspace made a linked worktree whose common directory lies in
    the workspace as ``.meta/<common>`` — no ``HEAD`` there (git needs none
    in a common directory), so nothing marks it as a repository — and
    whose own git directory is ``.meta/<wt>`` (HEAD and a commondir file,
    no objects: no bare repository either). The names are written into
    the `.git` and `commondir` files exactly; git reads them byte for byte."""
    src = tmp_path / "src"
    for args in (["init", "-q", str(src)], ["-C", str(src), "commit", "-q", "--allow-empty",
                                             "-m", "init"],
                 ["-C", str(src), "worktree", "add", "-q", str(tmp_path / "wt")]):
        require(host_git(tmp_path, *args).returncode == 0, f"git {args[-1]}")
    meta = workspace / ".meta"
    meta.mkdir()
    (src / ".git").rename(meta / common)
    (meta / common / "worktrees" / "wt").rename(meta / wt)
    (meta / common / "HEAD").unlink()
    (workspace / ".git").write_bytes(b"gitdir: .meta/" + os.fsencode(wt) + b"\n")
    (meta / wt / "commondir").write_bytes(b"../" + os.fsencode(common) + b"\n")
    (meta / wt / "gitdir").write_text(f"{workspace}/.git\n")
    said = host_git(workspace, "rev-parse", "--path-format=absolute",
                    "--git-common-dir").stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    require(os.path.realpath(said) == os.path.realpath(meta / common),
            f"git takes {meta / common} for the common directory (it said {said!r})")
    return meta / common


#: (own git directory's name, common directory's name, a decoy beside them):
#: names a reading other than git's took for others (from a review)
COMMON_LAYOUTS = {
    "plain names": ("wt", "common", None),
    "a common directory ending in a space": ("wt", "common ", "common"),
    "a git directory ending in a space": ("wt ", "common", "wt"),
    "a form feed in the git directory's name": ("w\x0cx", "common", "w"),
    "a byte that is no UTF-8": ("w\udcffx", "common", "w\ufffdx"),
}


@pytest.mark.parametrize("through", ["sandbox", "host (the control)"])
@pytest.mark.parametrize("layout", list(COMMON_LAYOUTS))
def test_a_linked_worktrees_common_directory_inside_the_workspace_is_protected(
    workspace: Path, tmp_path: Path, through: str, layout: str
) -> None:
    """From a review: the workspace is a linked worktree whose common
    directory lies inside it under another name. The sandbox protected only
    the worktree's own git directory, so a core.fsmonitor appended to the
    common directory's config ran at the host's next `git status`; and a
    reading of the `.git` or `commondir` file other than git's (spaces
    stripped, a form feed taken for a line break, bytes decoded) protected
    a decoy beside the directory git used. The control runs the same plant
    on the host and watches git run it."""
    wt, common_name, decoy = COMMON_LAYOUTS[layout]
    common = _linked_worktree_with_common_dir_inside(workspace, tmp_path, wt=wt,
                                                     common=common_name)
    if decoy is not None:
        (workspace / ".meta" / decoy).mkdir(exist_ok=True)
    marker = tmp_path / "COMMON-CONFIG-RAN"
    config = shlex.quote(f"{common}/config")
    script = (f"echo ran > control.txt; printf '[core]\\n\\tfsmonitor = touch {marker}\\n' "
              f">> {config}")
    _run_through(through, workspace, script)
    host_git(workspace, "status")
    if through == "sandbox":
        assert not marker.exists(), f"git ran the fsmonitor planted in {config}"
    else:
        require(marker.exists(), "git ran the fsmonitor planted in the common config")


def _run_through(through: str, workspace: Path, script: str) -> None:
    if through == "sandbox":
        proc = sh(workspace, script)
    else:
        proc = subprocess.run(["sh", "-c", script], cwd=workspace, capture_output=True,
                              check=False)
    consume_control(workspace, proc)


@pytest.mark.parametrize("through", ["sandbox", "host (the control)"])
def test_a_common_directory_missing_before_the_run_cannot_be_made_by_the_command(
    workspace: Path, tmp_path: Path, through: str
) -> None:
    """From a review: the common directory a linked worktree names was
    moved away before the run (git: "not a git repository"); the command
    made it anew with a config of its own, and the host's `git status`
    obeyed it."""
    common = _linked_worktree_with_common_dir_inside(workspace, tmp_path)
    common.rename(tmp_path / "common-away")
    marker = tmp_path / "REMADE-COMMON-RAN"
    script = (f"echo ran > control.txt; mkdir -p {common}/objects {common}/refs && "
              f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > {common}/config")
    _run_through(through, workspace, script)
    host_git(workspace, "status")
    if through == "sandbox":
        assert not marker.exists(), "git ran the fsmonitor of a remade common directory"
    else:
        require(marker.exists(), "git ran the fsmonitor of the remade common directory")
