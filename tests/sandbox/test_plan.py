"""The filesystem plan: mandatory write-denies, sentinels, pins, hidden paths.
Built against a real temporary filesystem; rendering is tested elsewhere."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandbox import FilesystemPolicy, PolicyError, SandboxPolicy, build_plan, load_profile


def plan_for(ws: Path, home: Path, **fs: object) -> object:
    policy = SandboxPolicy(filesystem=FilesystemPolicy(**fs))  # type: ignore[arg-type]
    return build_plan(policy, str(ws), home=str(home), private_tmp="/scratch/tmp")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_ed25519").write_text("KEY")
    (h / ".aws").mkdir()
    (h / ".netrc").write_text("machine x")
    return h


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


def test_missing_protected_paths_are_kept_missing_at_their_first_missing_component(
    ws: Path, home: Path
) -> None:
    plan = plan_for(ws, home)
    missing = dict(plan.missing)  # type: ignore[attr-defined]
    assert missing[str(ws / ".git")] == "dir"  # covers .git/hooks and .git/config
    assert missing[str(ws / ".claude")] == "dir"
    assert missing[str(ws / ".shellgate")] == "dir"
    assert missing[str(ws / ".mcp.json")] == "file"
    assert missing[str(ws / ".gitmodules")] == "file"
    assert str(ws / ".git" / "hooks") not in missing  # covered by .git
    # each stops the run when made, and is moved aside after it
    assert set(missing) <= set(plan.sentinels) & set(plan.tripwires)  # type: ignore[attr-defined]
    assert str(ws / ".git" / "hooks") not in plan.tripwires  # type: ignore[attr-defined]


def test_existing_protected_paths_are_read_only_and_their_parents_pinned(
    ws: Path, home: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text("{}")
    plan = plan_for(ws, home)
    protected = set(plan.protected)  # type: ignore[attr-defined]
    assert {str(ws / ".git" / "hooks"), str(ws / ".git" / "config"),
            str(ws / ".claude" / "settings.json")} <= protected
    assert {str(ws / ".git"), str(ws / ".claude")} <= set(plan.pinned)  # type: ignore[attr-defined]
    missing = dict(plan.missing)  # type: ignore[attr-defined]
    assert missing[str(ws / ".claude" / "commands")] == "dir"
    assert str(ws) not in plan.pinned  # type: ignore[attr-defined]


def test_a_worktree_gitdir_and_its_common_dir_are_protected(
    tmp_path: Path, home: Path
) -> None:
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.email=a@b", "-c", "user.name=a",
                    "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    wt = tmp_path / "wt"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(wt)], check=True)
    # both directories writable: the worktree's real gitdir lives in main/.git
    plan = plan_for(wt, home, allow_write=(str(main),))
    protected = set(plan.protected)  # type: ignore[attr-defined]
    gitdir = main / ".git" / "worktrees" / "wt"
    assert str(wt / ".git") in protected  # the `gitdir:` pointer file itself
    assert str(main / ".git" / "hooks") in protected
    assert str(main / ".git" / "config") in protected
    missing = dict(plan.missing)  # type: ignore[attr-defined]
    assert str(gitdir / "hooks") in missing or str(gitdir / "hooks") in protected


def test_shell_rc_files_are_protected_only_where_the_home_directory_is_writable(
    ws: Path, home: Path
) -> None:
    (home / ".bashrc").write_text("# rc")
    plain = plan_for(ws, home)
    names = {os.path.basename(p) for p in plain.protected} | {  # type: ignore[attr-defined]
        os.path.basename(p) for p, _ in plain.missing}  # type: ignore[attr-defined]
    assert ".bashrc" not in names and ".zshrc" not in names
    with_home = plan_for(ws, home, allow_write=(str(home),))
    assert str(home / ".bashrc") in with_home.protected  # type: ignore[attr-defined]
    assert str(home / ".zshrc") in dict(with_home.missing)  # type: ignore[attr-defined]


def test_policy_write_denies_win_over_the_writable_workspace(ws: Path, home: Path) -> None:
    (ws / "secrets").mkdir()
    plan = plan_for(ws, home, deny_write=("secrets", "not-yet/file"))
    assert str(ws / "secrets") in plan.protected  # type: ignore[attr-defined]
    assert dict(plan.missing)[str(ws / "not-yet")] == "dir"  # type: ignore[attr-defined]


def test_sensitive_paths_of_the_shared_list_are_hidden(ws: Path, home: Path) -> None:
    plan = plan_for(ws, home)
    assert str(home / ".ssh") in plan.hidden_dirs  # type: ignore[attr-defined]
    assert str(home / ".aws") in plan.hidden_dirs  # type: ignore[attr-defined]
    assert str(home / ".netrc") in plan.hidden_files  # type: ignore[attr-defined]
    assert str(home / ".kube") not in plan.hidden_dirs  # type: ignore[attr-defined]


def test_a_read_deny_wins_over_a_write_allow_inside_it(ws: Path, home: Path) -> None:
    plan = plan_for(ws, home, allow_write=(str(home / ".ssh"),))
    assert str(home / ".ssh") not in plan.writable  # type: ignore[attr-defined]


def test_the_read_only_profile_has_no_writable_root(ws: Path, home: Path) -> None:
    plan = build_plan(load_profile("read-only"), str(ws), home=str(home), private_tmp="/t")
    assert plan.writable == ()
    assert plan.missing == ()  # nothing writable, nothing to protect
    assert plan.private_tmp == "/t"


def test_a_symlinked_workspace_is_resolved(tmp_path: Path, home: Path, ws: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(ws)
    plan = build_plan(load_profile(), str(link), home=str(home), private_tmp=None)
    assert plan.cwd == str(ws)
    assert plan.writable == (str(ws),)


@pytest.mark.parametrize("root", ["/", "/etc", "/usr/lib", "/home", "/var"])
def test_the_root_or_a_system_directory_is_never_made_writable(
    root: str, home: Path, ws: Path
) -> None:
    from sandbox import PolicyError

    with pytest.raises(PolicyError, match="refusing to make"):
        plan_for(ws, home, allow_write=(root,))
    with pytest.raises(PolicyError, match="refusing to make"):
        build_plan(load_profile(), root, home=str(home), private_tmp=None)


@pytest.mark.parametrize(
    ("target", "hidden"),
    [("/usr", False), ("/", False), ("{home}", False), ("{home}/work", False),
     ("{home}/dotfiles/gradle.properties", True)],
)
def test_a_sensitive_name_that_is_a_symlink_hides_its_target_only_when_that_is_safe(
    tmp_path: Path, target: str, hidden: bool
) -> None:
    """Attack (from a review): `ln -s /usr ~/.gradle/gradle.properties` in a
    writable ~/.gradle made every later run hide /usr."""
    home = tmp_path / "home"
    (home / ".gradle").mkdir(parents=True)
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "gradle.properties").write_text("token")
    work = home / "work"
    work.mkdir()
    (home / ".gradle" / "gradle.properties").symlink_to(target.format(home=home))
    plan = build_plan(load_profile(), str(work), home=str(home), private_tmp=None)
    real = os.path.realpath(target.format(home=home))
    assert (real in plan.hidden_dirs + plan.hidden_files) is hidden
    assert str(work) in plan.writable


def test_in_home_mode_a_path_granted_below_a_read_only_directory_is_writable_alone(
        home: Path) -> None:
    app = home / ".config" / "app"
    (app / ".git" / "hooks").mkdir(parents=True)
    (app / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (home / ".local" / "share").mkdir(parents=True)
    plan = plan_for(home, home, allow_write=(str(app),))
    assert str(home / ".config") in plan.protected  # type: ignore[attr-defined]
    assert str(home / ".local" / "share") in plan.protected  # type: ignore[attr-defined]
    assert plan.may_write(str(app / "settings.ini")).allowed  # type: ignore[attr-defined]
    assert not plan.may_write(str(home / ".config" / "x.ini")).allowed  # type: ignore[attr-defined]
    # what the table protects inside the granted path stays protected
    assert str(app / ".git" / "hooks") in plan.protected  # type: ignore[attr-defined]
    assert not plan.may_write(str(app / ".git" / "hooks" / "x")).allowed  # type: ignore[attr-defined]
    # seatbelt, where the last matching rule wins: denied, allowed again, denied inside
    from sandbox.macos.seatbelt import sbpl_profile

    text = sbpl_profile(plan)  # type: ignore[arg-type]
    config, granted = f'(subpath "{home / ".config"}")', f'(subpath "{app}")'
    hooks = f'(subpath "{app / ".git" / "hooks"}")'
    assert text.index(config) < text.rindex(granted) < text.rindex(hooks)


def test_a_path_below_a_home_default_directory_is_writable_when_the_home_is_not(
        ws: Path, home: Path) -> None:
    """Not home mode: `--allow-write ~/.config/app` alone is that path."""
    app = home / ".config" / "app"
    app.mkdir(parents=True)
    plan = plan_for(ws, home, allow_write=(str(app),))
    assert str(home / ".config") not in plan.protected  # type: ignore[attr-defined]
    assert plan.may_write(str(app / "x")).allowed  # type: ignore[attr-defined]


@pytest.mark.parametrize("shared", ["/tmp", "/var/tmp"])
def test_a_directory_every_user_shares_is_never_a_writable_root(home: Path, shared: str) -> None:
    """From a review: a run in /tmp could write every user's files there."""
    if not os.path.isdir(shared) or os.stat(shared).st_mode & 0o1002 != 0o1002:
        pytest.skip(f"{shared} is not a shared (world-writable, sticky) directory here")
    with pytest.raises(PolicyError, match="every user shares"):
        plan_for(Path(shared), home)


def test_a_directory_of_ones_own_below_tmp_is_a_writable_root(tmp_path: Path,
                                                              home: Path) -> None:
    plan = plan_for(tmp_path, home)
    assert str(tmp_path.resolve()) in plan.writable  # type: ignore[attr-defined]
