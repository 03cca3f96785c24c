"""Escape tests: a home directory as a writable root (`--cwd ~`) — startup
files, a global git configuration, `~/.ssh`, the configuration, data and
version-manager directories read-only whole, and dotfiles kept as links.

Judged from the host, with a control proving each attack ran (see
escape_kit).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from escape_kit import (
    HOST_VERSION,
    consume_control,
    control_status,
    expand,
    host_git,
    output,
    padded,
    recorded,
    reported,
    require,
    require_same_stat,
    rewrite_in_place,
    sh,
    text_of,
    undone,
    unsandboxed,
    user_home,
)

pytestmark = [pytest.mark.sandbox]

SUFFIX = ".quarantined-by-shellgate"


# -- 4. the home directory as a writable root -------------------------------------------


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    """A home directory to run in with `--cwd` (and as HOME)."""
    home = tmp_path / "home"
    home.mkdir()
    return home


def _home_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_CONFIG_HOME", None)
    return env


#: file the command writes -> (its entry in host-run-files.toml, sentinel = true there)
HOME_PLANTS = {
    ".gitconfig": (".gitconfig", True),
    ".config/git/config": (".config/git", True),
    ".bash_aliases": (".bash_aliases", False),
    ".bashrc.d/x.sh": (".bashrc.d", False),
    ".local/bin/ls": (".local/bin", True),
    ".config/systemd/user/x.service": (".config/systemd/user", True),
    ".config/autostart/x.desktop": (".config/autostart", True),
    ".local/lib/python3.11/site-packages/x.pth": (".local/lib", False),
    ".cargo/config.toml": (".cargo/config.toml", False),
    ".config/nvim/init.lua": (".config/nvim", False),
    ".vimrc": (".vimrc", False),
    ".aws/config": (".aws", True),
    ".kube/config": (".kube", True),
    ".docker/config.json": (".docker", True),
    # tools' startup files (from a review of the file tools, which share the list)
    ".hgrc": (".hgrc", False),
    ".gradle/init.d/x.gradle": (".gradle/init.d", False),
    ".Rprofile": (".Rprofile", False),
    ".direnvrc": (".direnvrc", False),
    ".irbrc": (".irbrc", False),
    ".ghci": (".ghci", False),
    ".jupyter/jupyter_server_config.py": (".jupyter/jupyter_server_config.py", False),
    ".sqliterc": (".sqliterc", False),
    ".rustup/settings.toml": (".rustup/settings.toml", False),
    # the long tail a review found (issue 40)
    ".config/tmux/tmux.conf": (".config/tmux", False),
    ".bash_completion": (".bash_completion", False),
    ".local/share/bash-completion/completions/git": (".local/share/bash-completion", False),
    ".screenrc": (".screenrc", False),
    # other version control systems' user configuration (a review: each ran
    # the planted program on the host's next command)
    ".bazaar/plugins/x/__init__.py": (".bazaar", False),
    ".darcs/defaults": (".darcs", False),
    ".fossil": (".fossil", False),
    ".jjconfig.toml": (".jjconfig.toml", False),
    ".xsession": (".xsession", False),
    ".pam_environment": (".pam_environment", False),
    ".config/i3/config": (".config/i3", False),
    ".curlrc": (".curlrc", False),
    ".pdbrc": (".pdbrc", False),
    ".claude/CLAUDE.md": (".claude/CLAUDE.md", False),
    ".pyenv/shims/python": (".pyenv/shims", False),
    "go/bin/gopls": ("go/bin", False),
    # and what a white-box review of it found
    ".ssh/rc": (".ssh/rc", True),
    ".claude.json": (".claude.json", False),
    ".vscode-server/extensions/x/extension.js": (".vscode-server", False),
    ".npm-global/bin/tsc": (".npm-global/bin", False),
    ".inputrc": (".inputrc", False),
}

#: files also tried when they exist on the host before the run
HOME_EXISTING = (".gitconfig", ".config/git/config", ".bash_aliases", ".bashrc.d/x.sh",
                 ".local/bin/ls", ".cargo/config.toml", ".config/nvim/init.lua", ".vimrc")

HOME_CASES = [(name, False) for name in HOME_PLANTS] + [(name, True) for name in HOME_EXISTING]


@pytest.mark.parametrize(("name", "existing"), HOME_CASES,
                         ids=[f"{n}-{'existing' if e else 'new'}" for n, e in HOME_CASES])
def test_a_command_run_in_the_home_directory_cannot_leave_startup_files_there(
    fake_home: Path, name: str, existing: bool
) -> None:
    """Attack (from a review): `--cwd ~`. The command writes a file the
    user's next login, shell, git, python, cargo, editor, desktop session or
    cloud CLI runs or obeys. None of them is on the host after the run: an
    existing one could not be written, one kept missing stopped the run when
    made, and one created during the run is undone and reported."""
    entry, sentinel = HOME_PLANTS[name]
    target = fake_home / name
    if existing:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(HOST_VERSION)
    before = text_of(target)
    write = (f"mkdir -p {shlex.quote(str(target.parent))} && "
             f"printf 'planted\\n' > {shlex.quote(str(target))}")
    proc = sh(fake_home, recorded(write), env=_home_env(fake_home))
    status = control_status(fake_home, proc)
    assert undone(text_of(target), before), f"what the command wrote to ~/{name} is on the host"
    if existing or sentinel:
        assert status != 0, f"~/{name} was writable during the run"
    elif status == 0:
        assert reported(proc, entry), f"no shellgate: line names {entry}\n{output(proc)}"


#: startup scripts in a directory the home's table tripwires -> that directory
HOME_DIR_SCRIPTS = {
    ".gradle/init.d/x.gradle": ".gradle/init.d",
}


@pytest.mark.parametrize("name", list(HOME_DIR_SCRIPTS))
def test_a_home_startup_script_rewritten_at_the_same_size_and_mtime_is_reported(
    fake_home: Path, name: str
) -> None:
    """Attack (issue 37): an existing `~/.gradle/init.d` script rewritten
    in place at the same size, its mtime put back, printed nothing (the
    directory was watched by its entries' names and sizes); the next
    Gradle build ran it."""
    target = fake_home / name
    target.parent.mkdir(parents=True)
    target.write_text(padded("// the host's own\n", 200))
    new = padded('println "planted"\n', 200)
    before = target.stat()
    proc = sh(fake_home, recorded(rewrite_in_place(shlex.quote(name), new)),
              env=_home_env(fake_home))
    require(control_status(fake_home, proc) == 0, f"the command rewrote ~/{name}", proc)
    require_same_stat(target, before, new, proc)
    assert reported(proc, f"{fake_home}/{HOME_DIR_SCRIPTS[name]} was changed"), output(proc)


HOME_GIT_CONFIGS = (".gitconfig", ".config/git/config")


def _home_git_status(home: Path, repo: Path) -> None:
    """The user's next `git status`, with this home's global config."""
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, timeout=20,
                   check=False, env=_home_env(home))


@pytest.mark.parametrize("name", HOME_GIT_CONFIGS)
def test_a_command_run_in_the_home_directory_cannot_plant_a_global_git_config(
    fake_home: Path, git_ws: Path, tmp_path: Path, name: str
) -> None:
    """Attack (from a review): `--cwd ~` and a global git config with a
    core.fsmonitor: every repository's `git status` on the host runs it."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    write = f"mkdir -p {Path(name).parent} && {{fsm:{name}}}"
    proc = sh(fake_home, recorded(expand(write, marker)), env=_home_env(fake_home))
    control_status(fake_home, proc)
    _home_git_status(fake_home, git_ws)
    assert not marker.exists(), f"the host's git ran a core.fsmonitor from ~/{name}"


@pytest.mark.parametrize("name", HOME_GIT_CONFIGS)
def test_a_global_git_config_attack_would_run_code_without_the_sandbox(
    fake_home: Path, git_ws: Path, tmp_path: Path, name: str
) -> None:
    """Control for the test above, unsandboxed in a throwaway home."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    unsandboxed(fake_home, expand(f"mkdir -p {Path(name).parent} && {{fsm:{name}}}", marker),
                 env=_home_env(fake_home))
    _home_git_status(fake_home, git_ws)
    assert marker.exists()


@pytest.fixture(params=["under tmp", "under the user's home"])
def home_with_ssh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A home directory (passed as HOME) holding `.ssh`, 0700, as a real one
    does."""
    if request.param == "under tmp":
        home = tmp_path / "home"
    else:
        home = user_home() / f".shellgate-test-home-{uuid.uuid4().hex[:12]}"
    home.mkdir(mode=0o755)
    try:
        (home / ".ssh").mkdir(mode=0o700)
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


#: what `~/.ssh` holds besides the key (authorized_keys and config are also
#: entries of host-run-files.toml: blocked, and must not be bound back visible)
SSH_LAYOUTS = {
    "a key only": (),
    "a key, authorized_keys and config": ("authorized_keys", "config"),
}


@pytest.mark.mutates_home
@pytest.mark.parametrize("layout", list(SSH_LAYOUTS))
def test_a_run_in_the_home_directory_starts_and_keeps_ssh_hidden(
    home_with_ssh: Path, token: str, layout: str
) -> None:
    """Regression (from a review): `--cwd ~` with an existing `~/.ssh` did
    not start (exit 125). It starts, the command's own status comes back,
    and nothing in `~/.ssh` is readable inside."""
    home = home_with_ssh
    secrets = {}
    for name in ("id_x", *SSH_LAYOUTS[layout]):
        secrets[name] = f"-----FAKE {name} {token} {uuid.uuid4().hex}-----"
        fd = os.open(home / ".ssh" / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets[name])
    script = ("cat .ssh/id_x .ssh/authorized_keys .ssh/config > seen.txt 2>&1; "
              "echo ran > control.txt; exit 7")
    proc = sh(home, script, env=_home_env(home))
    assert proc.returncode == 7, f"the run did not start or lost the status\n{output(proc)}"
    consume_control(home, proc)
    seen = (home / "seen.txt").read_text() + output(proc)
    for name, secret in secrets.items():
        assert secret not in seen, f"~/.ssh/{name} was readable inside"


@pytest.mark.parametrize(("name", "target"), [
    (".gradle/init.gradle", "dotfiles/init.gradle"),
    (".gradle/init.d", "dotfiles/initd"),
])
def test_a_home_startup_file_kept_as_a_link_is_judged_by_what_it_leads_to(
    fake_home: Path, name: str, target: str
) -> None:
    """From a review: with dotfiles-style links (`~/.gradle/init.gradle ->
    ../dotfiles/init.gradle`), the file the link leads to was rewritten and
    nothing was reported: the link's text had not changed."""
    real = fake_home / target
    (fake_home / name).parent.mkdir(parents=True, exist_ok=True)
    if name.endswith(".d"):
        real.mkdir(parents=True)
        (real / "a.gradle").write_text("// the host's own\n")
        write = f"echo 'println \"PWN\"' > {shlex.quote(target)}/b.gradle"
    else:
        real.parent.mkdir(parents=True)
        real.write_text("// the host's own\n")
        write = f"echo 'println \"PWN\"' >> {shlex.quote(target)}"
    (fake_home / name).symlink_to(os.path.relpath(real, (fake_home / name).parent))
    proc = sh(fake_home, recorded(write), env=_home_env(fake_home))
    require(control_status(fake_home, proc) == 0, f"the command wrote what ~/{name} leads to", proc)
    require("PWN" in (real.read_text() if real.is_file() else (real / "b.gradle").read_text()),
            "the file the link leads to was changed", proc)
    assert reported(proc, f"{fake_home}/{name}"), output(proc)


#: directories read-only by default in home mode -> a file the host runs or
#: reads there by itself
HOME_DEFAULT_DIRS = {
    ".config": "starship.toml",
    ".config/alacritty": "alacritty.toml",
    ".local/share": "nvim/site/plugin/x.lua",
    ".local/state": "x/history",
    ".nvm": "nvm.sh",
    ".rustup": "toolchains/x/bin/cargo",
    ".asdf": "shims/python",
    ".volta": "bin/node",
}


@pytest.mark.parametrize("directory", list(HOME_DEFAULT_DIRS))
def test_home_mode_keeps_the_config_data_and_version_manager_directories_read_only(
        fake_home: Path, directory: str) -> None:
    """From a review: in home mode `~/.config/tmux/tmux.conf` was writable
    (while `~/.tmux.conf` was blocked), and so were prompt, editor,
    terminal and package-manager configs, plugin directories and version
    managers' roots: a list of names keeps missing the long tail. The
    directories that hold them are read-only when the home is writable;
    the control writes beside them."""
    (fake_home / directory).mkdir(parents=True)
    target = fake_home / directory / HOME_DEFAULT_DIRS[directory]
    write = (f"mkdir -p {shlex.quote(str(target.parent))} && "
             f"printf 'planted\\n' > {shlex.quote(str(target))}")
    proc = sh(fake_home, f"echo ran > notes.txt && {recorded(write)}",
              env=_home_env(fake_home))
    assert control_status(fake_home, proc) != 0
    assert (fake_home / "notes.txt").read_text() == "ran\n"
    assert not target.exists()


def test_a_path_granted_below_a_read_only_home_directory_is_writable_and_only_it(
        fake_home: Path) -> None:
    """`--allow-write ~/.config/app` in home mode widens that path only: the
    rest of `~/.config` stays read-only, and what the table protects inside
    the granted path (a repository's hooks) stays protected."""
    app = fake_home / ".config" / "app"
    app.mkdir(parents=True)
    assert host_git(app, "init", "-q").returncode == 0
    script = ("echo x > .config/app/settings.ini; echo $? > control.txt; "
              "echo x > .config/other.ini; echo $? >> control.txt; "
              "echo x > .config/app/.git/hooks/pre-commit; echo $? >> control.txt")
    proc = sh(fake_home, script, options=("--allow-write", str(app)),
              env=_home_env(fake_home))
    granted, other, hook = consume_control(fake_home, proc).split()
    assert granted == "0" and (app / "settings.ini").read_text() == "x\n"
    assert other != "0" and not (fake_home / ".config" / "other.ini").exists()
    assert hook != "0" and not (app / ".git" / "hooks" / "pre-commit").exists()


def test_home_mode_keeps_a_linked_config_directory_and_its_target_read_only(
        fake_home: Path) -> None:
    """From a review: with `~/.config -> dotfiles/config`, shellgate's own
    pin of the link's target (the parent of `~/.config/shellgate`) was a
    writable mount deeper than the read-only one, and the whole of it was
    writable: a planted `core.fsmonitor` in `~/.config/git/config` ran on
    the host's next `git status`. Renaming the target's parent away and
    making a fresh one is refused too."""
    real = fake_home / "dotfiles" / "config"
    (real / "git").mkdir(parents=True)
    (real / "git" / "config").write_text("[core]\n")
    (fake_home / ".config").symlink_to("dotfiles/config")
    script = ("echo x >> .config/git/config; echo $? > control.txt; "
              "echo x > dotfiles/config/new.ini; echo $? >> control.txt; "
              "mv dotfiles dotfiles-old; echo $? >> control.txt; "
              "mkdir -p dotfiles/config/autostart; echo $? >> control.txt")
    proc = sh(fake_home, script, env=_home_env(fake_home))
    statuses = consume_control(fake_home, proc).split()
    require(len(statuses) == 4, "the command ran every step", proc)
    assert statuses[:3] == [s for s in statuses[:3] if s != "0"], statuses
    assert (real / "git" / "config").read_text() == "[core]\n"
    assert not (real / "new.ini").exists() and (fake_home / "dotfiles" / "config").is_dir()
    assert not (fake_home / "dotfiles-old").exists()
