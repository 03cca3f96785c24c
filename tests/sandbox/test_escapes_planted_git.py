"""Escape tests: code planted inside every git directory, where the host's
git runs or obeys it later, outside any sandbox — a submodule's gitdir under
`.git/modules` (nested too), a linked worktree's gitdir, `config.worktree`,
`info/`, `objects/info/alternates` — in the files a repository's config
names (`core.hooksPath`, `include.path`), a symlinked `.git/hooks`, and the
repositories below the workspace root.

Judged from the host, with a control proving each attack ran (see
escape_kit); a twin test runs each attack without the sandbox and shows the
planted code really runs, so the sandboxed test is not vacuous.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest
from escape_kit import (
    consume_control,
    control_status,
    expand,
    git_setup,
    host_git,
    init_repo,
    recorded,
    require,
    run_planted_git,
    sh,
    stopped,
    text_of,
    undone,
    unsandboxed,
)

pytestmark = [pytest.mark.sandbox]

SUFFIX = ".quarantined-by-shellgate"


# -- 1a. a submodule's gitdir, nested too ---------------------------------------------


def _add_submodules(ws: Path, tmp_path: Path) -> None:
    """`sub` (from a local repository) with its own submodule `inner`,
    registered on the host: gitdirs `.git/modules/sub` and
    `.git/modules/sub/modules/inner`."""
    allow = ("-c", "protocol.file.allow=always")
    inner = init_repo(tmp_path / "upstream-inner")
    upstream = init_repo(tmp_path / "upstream")
    git_setup(upstream, *allow, "submodule", "add", "-q", str(inner), "inner")
    git_setup(upstream, "commit", "-q", "-m", "add inner")
    git_setup(ws, *allow, "submodule", "add", "-q", str(upstream), "sub")
    git_setup(ws, *allow, "submodule", "update", "-q", "--init", "--recursive")
    git_setup(ws, "commit", "-q", "-m", "add sub")
    assert (ws / ".git" / "modules" / "sub" / "modules" / "inner" / "config").is_file()


#: attack -> (shell, the submodule work tree the user later runs git in,
#: deinitialized on the host before the run: its gitdir stays, its work tree is empty)
SUBMODULE_ATTACKS = {
    "core.fsmonitor appended to .git/modules/sub/config":
        ("{fsm:.git/modules/sub/config}", "sub", False),
    "core.fsmonitor set with git -C sub config":
        ("git -C sub config core.fsmonitor 'touch {marker}'", "sub", False),
    "a pre-commit hook in .git/modules/sub/hooks":
        ("{hook:.git/modules/sub/hooks/pre-commit}", "sub", False),
    "core.fsmonitor in a nested submodule's gitdir":
        ("{fsm:.git/modules/sub/modules/inner/config}", "sub/inner", False),
    "a pre-commit hook in a nested submodule's gitdir":
        ("{hook:.git/modules/sub/modules/inner/hooks/pre-commit}", "sub/inner", False),
    "a post-checkout hook in a deinitialized submodule's gitdir":
        ("{hook:.git/modules/sub/hooks/post-checkout}", "sub", True),
    "core.fsmonitor in a deinitialized submodule's gitdir":
        ("{fsm:.git/modules/sub/config}", "sub", True),
}


def _prepare_submodule(ws: Path, tmp_path: Path, attack: str) -> None:
    _add_submodules(ws, tmp_path)
    if SUBMODULE_ATTACKS[attack][2]:
        git_setup(ws, "submodule", "deinit", "-q", "--force", "sub")
        assert (ws / ".git" / "modules" / "sub" / "config").is_file()


def _judge_submodule(ws: Path, attack: str) -> None:
    """What the user does next: `git submodule update --init` (for a
    deinitialized one), status in the superproject, status and a commit in
    the submodule."""
    _template, worktree, deinit = SUBMODULE_ATTACKS[attack]
    if deinit:
        host_git(ws, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
    host_git(ws, "status")
    run_planted_git(ws / worktree)


@pytest.mark.parametrize("attack", list(SUBMODULE_ATTACKS))
def test_a_command_cannot_plant_code_in_a_submodules_gitdir(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Attack (from a review): a submodule's config and hooks live in the
    superproject's `.git/modules/<name>`, not in `sub/.git`; a planted
    core.fsmonitor or hook there runs on the host's next `git status` in the
    superproject, status/commit in the submodule, or — for a deinitialized
    submodule, whose gitdir stays — the next `git submodule update --init`."""
    _prepare_submodule(git_ws, tmp_path, attack)
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, f"{expand(SUBMODULE_ATTACKS[attack][0], marker)}; echo ran > control.txt")
    consume_control(git_ws, proc)
    _judge_submodule(git_ws, attack)
    assert not marker.exists(), "the host's git ran code planted in a submodule's gitdir"


@pytest.mark.parametrize("attack", list(SUBMODULE_ATTACKS))
def test_each_submodule_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Control for the table above, unsandboxed on a throwaway repository."""
    _prepare_submodule(git_ws, tmp_path, attack)
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(git_ws, expand(SUBMODULE_ATTACKS[attack][0], marker))
    _judge_submodule(git_ws, attack)
    assert marker.exists()


# -- 1b. a linked worktree's gitdir ---------------------------------------------------

WORKTREE_ATTACKS = {
    "commondir pointed at a planted copy with core.fsmonitor and a hook":
        "cp -r .git planted-common && {fsm:planted-common/config} && "
        "{hook:planted-common/hooks/pre-commit} && "
        "echo ../../../planted-common > .git/worktrees/wt/commondir",
    "config.worktree in the worktree's gitdir (extensions.worktreeConfig on)":
        "{fsm:.git/worktrees/wt/config.worktree}",
}


def _add_worktree(ws: Path, tmp_path: Path) -> Path:
    """A linked worktree beside the workspace; its gitdir is
    `.git/worktrees/wt` inside the workspace."""
    worktree = tmp_path / "wt"
    git_setup(ws, "worktree", "add", "-q", str(worktree))
    git_setup(ws, "config", "extensions.worktreeConfig", "true")
    assert (ws / ".git" / "worktrees" / "wt" / "commondir").is_file()
    return worktree


@pytest.mark.parametrize("attack", list(WORKTREE_ATTACKS))
def test_a_command_cannot_plant_code_in_a_linked_worktrees_gitdir(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Attack (from a review): rewrite `.git/worktrees/<wt>/commondir` to a
    planted directory with its own config and hooks, or plant a
    config.worktree there; the user's `git -C <worktree> status`/commit on
    the host runs it."""
    worktree = _add_worktree(git_ws, tmp_path)
    marker = tmp_path / "PLANTED-CODE-RAN"
    # the control as the others take it: a planted config.worktree may stop
    # the command at once, before a control written after it (seen as uid
    # 65534 beside the root leg), and the kill itself says the write happened
    proc = sh(git_ws, recorded(expand(WORKTREE_ATTACKS[attack], marker)))
    control_status(git_ws, proc)
    run_planted_git(worktree)
    assert not marker.exists(), "the host's git ran code planted in a worktree's gitdir"


@pytest.mark.parametrize("attack", list(WORKTREE_ATTACKS))
def test_each_worktree_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Control for the table above, unsandboxed on a throwaway repository."""
    worktree = _add_worktree(git_ws, tmp_path)
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(git_ws, expand(WORKTREE_ATTACKS[attack], marker))
    run_planted_git(worktree)
    assert marker.exists()


# -- 1c. .git/config.worktree ---------------------------------------------------------


def _worktree_config(ws: Path, existing: bool) -> bytes | None:
    git_setup(ws, "config", "extensions.worktreeConfig", "true")
    if existing:
        git_setup(ws, "config", "--worktree", "user.name", "Host User")
    path = ws / ".git" / "config.worktree"
    return path.read_bytes() if existing else None


@pytest.mark.parametrize("existing", [False, True], ids=["missing", "existing"])
def test_a_command_cannot_plant_code_in_config_worktree(
    git_ws: Path, tmp_path: Path, existing: bool
) -> None:
    """Attack (from a review): with extensions.worktreeConfig on (set on the
    host, as `git sparse-checkout` does), `.git/config.worktree` is read like
    `.git/config`: a core.fsmonitor planted there runs on `git status`."""
    before = _worktree_config(git_ws, existing)
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, recorded(expand("{fsm:.git/config.worktree}", marker)))
    status = control_status(git_ws, proc)
    run_planted_git(git_ws)
    assert not marker.exists(), "the host's git ran a core.fsmonitor from config.worktree"
    path = git_ws / ".git" / "config.worktree"
    assert (path.read_bytes() if path.exists() else None) == before
    if existing:
        assert status != 0, "the existing config.worktree was writable during the run"


@pytest.mark.parametrize("existing", [False, True], ids=["missing", "existing"])
def test_a_config_worktree_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, existing: bool
) -> None:
    """Control for the test above, unsandboxed on a throwaway repository."""
    _worktree_config(git_ws, existing)
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(git_ws, expand("{fsm:.git/config.worktree}", marker))
    run_planted_git(git_ws)
    assert marker.exists()


# -- 1d. .git/info/exclude ------------------------------------------------------------

#: case -> (the planted file, does .git/info exist before the run)
EXCLUDE_CASES = {
    "a planted .npmrc, info/exclude existing": (".npmrc", True),
    "a planted script, info/exclude existing": ("planted.sh", True),
    "a planted script, .git/info missing": ("planted.sh", False),
}


def _exclude_attack(name: str) -> str:
    return (f"echo planted > {name}; "
            + recorded(f"mkdir -p .git/info && echo {name} >> .git/info/exclude"))


def _prepare_exclude(ws: Path, info_exists: bool) -> bytes | None:
    exclude = ws / ".git" / "info" / "exclude"
    if not info_exists:
        shutil.rmtree(ws / ".git" / "info", ignore_errors=True)
        return None
    assert exclude.is_file(), "git init made .git/info/exclude"
    return exclude.read_bytes()


def _untracked(ws: Path) -> str:
    return host_git(ws, "status", "--porcelain", "--untracked-files=all").stdout.decode()


@pytest.mark.parametrize("case", list(EXCLUDE_CASES))
def test_a_command_cannot_hide_a_planted_file_from_git_status_with_info_exclude(
    git_ws: Path, case: str
) -> None:
    """Attack (from a review): plant a file (an `.npmrc` that the next
    `npm run` obeys) and add it to `.git/info/exclude`, so the user's
    `git status` never shows it. Afterwards the exclude file is as before,
    and the planted file is either listed by `git status` or gone."""
    name, info_exists = EXCLUDE_CASES[case]
    before = _prepare_exclude(git_ws, info_exists)
    proc = sh(git_ws, _exclude_attack(name))
    status = control_status(git_ws, proc)
    planted = git_ws / name
    assert name in _untracked(git_ws) or not planted.exists(), \
        "the planted file is hidden from the host's git status"
    exclude = git_ws / ".git" / "info" / "exclude"
    assert (exclude.read_bytes() if exclude.exists() else None) == before
    if info_exists:
        assert status != 0, ".git/info/exclude was writable during the run"


@pytest.mark.parametrize("case", list(EXCLUDE_CASES))
def test_an_info_exclude_attack_would_hide_the_file_without_the_sandbox(
    git_ws: Path, case: str
) -> None:
    """Control for the table above, unsandboxed on a throwaway repository."""
    name, info_exists = EXCLUDE_CASES[case]
    _prepare_exclude(git_ws, info_exists)
    unsandboxed(git_ws, _exclude_attack(name))
    (git_ws / "control.txt").unlink()
    assert (git_ws / name).exists()
    assert name not in _untracked(git_ws)


# -- 1e. .git/objects/info/alternates -------------------------------------------------

_ALTERNATES_ATTACK = (
    "mkdir planted-objects && "
    "echo planted-object | GIT_OBJECT_DIRECTORY=\"$PWD/planted-objects\" "
    "git hash-object -w --stdin > sha.txt; "
    + recorded("echo ../../planted-objects >> .git/objects/info/alternates")
)


def _prepare_alternates(ws: Path, tmp_path: Path, existing: bool) -> bytes | None:
    if not existing:
        return None
    shared = tmp_path / "shared-objects"
    shared.mkdir()
    path = ws / ".git" / "objects" / "info" / "alternates"
    path.write_text(f"{shared}\n")
    return path.read_bytes()


def _planted_sha(ws: Path) -> str:
    sha_file = ws / "sha.txt"
    require(sha_file.is_file(), "the command wrote sha.txt")
    sha = sha_file.read_text().strip()
    require((ws / "planted-objects" / sha[:2] / sha[2:]).is_file(),
            "the planted object is in planted-objects")
    return sha


@pytest.mark.parametrize("existing", [False, True], ids=["missing", "existing"])
def test_a_command_cannot_make_the_repository_borrow_planted_objects(
    git_ws: Path, tmp_path: Path, existing: bool
) -> None:
    """Attack (from a review): `.git/objects/info/alternates` pointing at a
    planted object store: the host's git then reads objects (and with them
    history) the command made up, as the repository's own."""
    before = _prepare_alternates(git_ws, tmp_path, existing)
    proc = sh(git_ws, _ALTERNATES_ATTACK)
    status = control_status(git_ws, proc)
    sha = _planted_sha(git_ws)
    assert host_git(git_ws, "cat-file", "-e", sha).returncode != 0, \
        "the host's git reads an object from the planted store"
    path = git_ws / ".git" / "objects" / "info" / "alternates"
    assert (path.read_bytes() if path.exists() else None) == before
    if existing:
        assert status != 0, "the existing alternates file was writable during the run"


@pytest.mark.parametrize("existing", [False, True], ids=["missing", "existing"])
def test_an_alternates_attack_would_borrow_objects_without_the_sandbox(
    git_ws: Path, tmp_path: Path, existing: bool
) -> None:
    """Control for the test above, unsandboxed on a throwaway repository."""
    _prepare_alternates(git_ws, tmp_path, existing)
    unsandboxed(git_ws, _ALTERNATES_ATTACK)
    sha = _planted_sha(git_ws)
    assert host_git(git_ws, "cat-file", "-e", sha).returncode == 0


# -- 1f. the core.hooksPath directory -------------------------------------------------

#: case -> (core.hooksPath as set on the host; {ws} is the workspace, existing before)
HOOKS_PATHS = {
    ".githooks, existing": (".githooks", True),
    ".githooks, missing": (".githooks", False),
    ".husky/_, existing": (".husky/_", True),
    ".husky/_, missing": (".husky/_", False),
    "an absolute path into the workspace, existing": ("{ws}/.githooks", True),
}


def _prepare_hooks_path(ws: Path, case: str) -> str:
    value, existing = HOOKS_PATHS[case]
    value = value.replace("{ws}", str(ws))
    git_setup(ws, "config", "core.hooksPath", value)
    directory = ws / value
    if existing:
        directory.mkdir(parents=True)
        (directory / "pre-push").write_text("#!/bin/sh\nexit 0\n")
        (directory / "pre-push").chmod(0o755)
    return value


def _hooks_path_attack(directory: str) -> str:
    return f"mkdir -p {directory} && {{hook:{directory}/pre-commit}}"


@pytest.mark.parametrize("case", list(HOOKS_PATHS))
def test_a_command_cannot_plant_a_hook_in_the_core_hookspath_directory(
    git_ws: Path, tmp_path: Path, case: str
) -> None:
    """Attack (from a review): the repository's config (set on the host, as
    husky does) points core.hooksPath at a directory of the work tree; a
    pre-commit hook written there runs on the user's next commit."""
    directory = _prepare_hooks_path(git_ws, case)
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, recorded(expand(_hooks_path_attack(directory), marker)))
    status = control_status(git_ws, proc)
    run_planted_git(git_ws)
    assert not marker.exists(), "the host's git ran a hook planted in core.hooksPath"
    if HOOKS_PATHS[case][1]:
        assert status != 0, "the existing hooks directory was writable during the run"


@pytest.mark.parametrize("case", list(HOOKS_PATHS))
def test_a_hookspath_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, case: str
) -> None:
    """Control for the table above, unsandboxed on a throwaway repository."""
    directory = _prepare_hooks_path(git_ws, case)
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(git_ws, expand(_hooks_path_attack(directory), marker))
    run_planted_git(git_ws)
    assert marker.exists()


# -- 1g. a file named by include.path / includeIf.*.path -------------------------------

#: case -> (config key, value set on the host, the file in the workspace, existing before)
INCLUDES = {
    "include.path, existing": ("include.path", "../.gitconfig-project", ".gitconfig-project",
                               True),
    "include.path, missing": ("include.path", "../.gitconfig-project", ".gitconfig-project",
                              False),
    "includeIf.gitdir:/.path, existing": ("includeIf.gitdir:/.path", "../.gitconfig-ci",
                                          ".gitconfig-ci", True),
    "includeIf.gitdir:/.path, missing": ("includeIf.gitdir:/.path", "../.gitconfig-ci",
                                         ".gitconfig-ci", False),
    "include.path absolute, missing": ("include.path", "{ws}/config/git.inc", "config/git.inc",
                                       False),
}


def _prepare_include(ws: Path, case: str) -> tuple[Path, str | None]:
    key, value, name, existing = INCLUDES[case]
    git_setup(ws, "config", key, value.replace("{ws}", str(ws)))
    path = ws / name
    if existing:
        path.write_text("[user]\n\tname = Host User\n")
    return path, text_of(path)


def _include_attack(path: Path) -> str:
    return f"mkdir -p {shlex.quote(str(path.parent))} && {{fsm:{shlex.quote(str(path))}}}"


@pytest.mark.parametrize("case", list(INCLUDES))
def test_a_command_cannot_plant_code_in_a_file_the_repositorys_config_includes(
    git_ws: Path, tmp_path: Path, case: str
) -> None:
    """Attack (from a review): `.git/config` includes a file of the work tree
    (`include.path = ../.gitconfig-project`); a core.fsmonitor written into
    that file runs on the host's next `git status`."""
    path, before = _prepare_include(git_ws, case)
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, recorded(expand(_include_attack(path), marker)))
    status = control_status(git_ws, proc)
    run_planted_git(git_ws)
    assert not marker.exists(), "the host's git ran a core.fsmonitor from an included file"
    assert undone(text_of(path), before)
    if INCLUDES[case][3]:
        assert status != 0, "the existing included file was writable during the run"


@pytest.mark.parametrize("case", list(INCLUDES))
def test_an_include_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, case: str
) -> None:
    """Control for the table above, unsandboxed on a throwaway repository."""
    path, _ = _prepare_include(git_ws, case)
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(git_ws, expand(_include_attack(path), marker))
    run_planted_git(git_ws)
    assert marker.exists()


# -- 1h. a symlinked .git/hooks -------------------------------------------------------

_HOOKS_LINK = "../.githooks-real"
_PLANTED_HOOKS = "mkdir planted-hooks && {hook:planted-hooks/pre-commit} && "

SYMLINK_ATTACKS = {
    "ln -sfn to a planted directory": _PLANTED_HOOKS + "ln -sfn ../planted-hooks .git/hooks",
    "remove the link and make a new one":
        _PLANTED_HOOKS + "rm .git/hooks && ln -s ../planted-hooks .git/hooks",
    "rename a new link over it":
        _PLANTED_HOOKS + "ln -s ../planted-hooks .git/hooks.new && mv -T .git/hooks.new .git/hooks",
    "write a hook through the link": "{hook:.git/hooks/pre-commit}",
    "write a hook into the link's target": "{hook:.githooks-real/pre-commit}",
}


def _link_hooks(ws: Path) -> None:
    """`.git/hooks -> ../.githooks-real`, as dotfile managers and some
    team setups make it (done on the host)."""
    real = ws / ".githooks-real"
    real.mkdir()
    (real / "pre-push").write_text("#!/bin/sh\nexit 0\n")
    shutil.rmtree(ws / ".git" / "hooks")
    (ws / ".git" / "hooks").symlink_to(_HOOKS_LINK)


@pytest.mark.parametrize("attack", list(SYMLINK_ATTACKS))
def test_a_command_cannot_swap_or_fill_a_symlinked_hooks_directory(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Attack (from a review): `.git/hooks` is a symlink; the command points
    it at a planted directory (the swap must be undone), or writes a hook
    through it. The user's next commit on the host runs the hook."""
    _link_hooks(git_ws)
    marker = tmp_path / "PLANTED-CODE-RAN"
    proc = sh(git_ws, f"{expand(SYMLINK_ATTACKS[attack], marker)}; echo ran > control.txt")
    if (git_ws / "control.txt").exists() or not stopped(proc):
        consume_control(git_ws, proc)
    else:  # stopped while swapping the link: the planted directory proves it ran
        require((git_ws / "planted-hooks" / "pre-commit").is_file(),
                "the command planted its hooks directory before it was stopped", proc)
    hooks = git_ws / ".git" / "hooks"
    assert hooks.is_symlink(), ".git/hooks is no longer the host's symlink"
    assert os.readlink(hooks) == _HOOKS_LINK
    run_planted_git(git_ws)
    assert not marker.exists(), "the host's git ran a hook planted through a symlinked hooks dir"


@pytest.mark.parametrize("attack", list(SYMLINK_ATTACKS))
def test_each_symlinked_hooks_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Control for the table above, unsandboxed on a throwaway repository."""
    _link_hooks(git_ws)
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(git_ws, expand(SYMLINK_ATTACKS[attack], marker))
    run_planted_git(git_ws)
    assert marker.exists()


# -- 1i. a repository below the workspace root ----------------------------------------

#: where the repository is below `--cwd` -> (its path, is --cwd itself a repository)
NESTED_LOCATIONS = {
    "in a plain parent directory": ("proj", False),
    "two levels down": ("team/proj", False),
    "inside the workspace's own repository": ("vendor/proj", True),
}

NESTED_ATTACKS = {
    "core.fsmonitor appended to its .git/config": "{fsm:{repo}/.git/config}",
    "core.fsmonitor set with git -C": "git -C {repo} config core.fsmonitor 'touch {marker}'",
    "a pre-commit hook in its .git/hooks": "{hook:{repo}/.git/hooks/pre-commit}",
}


def _nested_repos(ws: Path, location: str) -> str:
    """Repositories below the workspace (the one attacked, and a sibling:
    a parent directory holding several repositories)."""
    rel, ws_is_repo = NESTED_LOCATIONS[location]
    if ws_is_repo:
        init_repo(ws)
    init_repo(ws / rel)
    init_repo(ws / Path(rel).parent / "other")
    return rel


@pytest.mark.parametrize("attack", list(NESTED_ATTACKS))
@pytest.mark.parametrize("location", list(NESTED_LOCATIONS))
def test_a_command_cannot_plant_code_in_a_repository_below_the_workspace_root(
    workspace: Path, tmp_path: Path, location: str, attack: str
) -> None:
    """Attack (from a review): `--cwd` is a directory holding several
    repositories; the command plants a core.fsmonitor or a hook in one of
    them, which the user's next `git status`/commit there runs on the host."""
    rel = _nested_repos(workspace, location)
    marker = tmp_path / "PLANTED-CODE-RAN"
    template = NESTED_ATTACKS[attack].replace("{repo}", rel)
    proc = sh(workspace, recorded(expand(template, marker)))
    status = control_status(workspace, proc)
    run_planted_git(workspace / rel)
    assert not marker.exists(), "the host's git ran code planted in a nested repository"
    assert status != 0, "the nested repository's config or hooks were writable during the run"


@pytest.mark.parametrize("attack", list(NESTED_ATTACKS))
@pytest.mark.parametrize("location", list(NESTED_LOCATIONS))
def test_each_nested_repository_attack_would_run_code_without_the_sandbox(
    workspace: Path, tmp_path: Path, location: str, attack: str
) -> None:
    """Control for the table above, unsandboxed on throwaway repositories."""
    rel = _nested_repos(workspace, location)
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(workspace, expand(NESTED_ATTACKS[attack].replace("{repo}", rel), marker))
    run_planted_git(workspace / rel)
    assert marker.exists()
