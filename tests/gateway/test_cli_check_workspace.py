"""`shellgate check` gathers the facts of the workspace the analyzer cannot
(it does no I/O): in a repository whose configuration runs programs, git's
reads ask (under `shellgate hook` the command runs unsandboxed, and
`git status` there runs the repository's core.fsmonitor); where a dotenv
file lies, a command reading the whole tree asks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SHELLGATE = str(Path(sys.executable).with_name("shellgate"))


def _check(cwd: Path, command: str) -> dict[str, object]:
    proc = subprocess.run([SHELLGATE, "check", "--json", "--cwd", str(cwd), command],
                          capture_output=True, text=True, timeout=60, check=True)
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_git_reads_in_a_hostile_repository_ask(tmp_path: Path) -> None:
    repo = tmp_path / "cloned"
    marker = tmp_path / "FSMONITOR-RAN"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"],
                   check=True)
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=False)
    assert marker.exists(), "control: git status runs the repository's fsmonitor"
    for command in ("git status", "git diff", "git log --oneline"):
        result = _check(repo, command)
        assert result["decision"] == "ask", result
        assert "core.fsmonitor" in str(result["reason"])
    assert _check(repo, "ls")["decision"] == "allow"


def test_git_reads_in_a_plain_repository_stay_allowed(tmp_path: Path) -> None:
    repo = tmp_path / "plain"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert _check(repo, "git status")["decision"] == "allow"


def test_a_tree_read_reaching_a_dotenv_file_asks_and_one_missing_it_is_allowed(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("KEY = 1\n")
    grep = subprocess.run(["grep", "-rn", "KEY", "."], cwd=project, capture_output=True,
                          text=True, check=False)
    assert _check(project, "grep -rn KEY .")["decision"] == "allow"
    (project / "config").mkdir()
    (project / "config" / ".env").write_text("API_KEY=secret\n")
    grep = subprocess.run(["grep", "-rn", "KEY", "."], cwd=project, capture_output=True,
                          text=True, check=False)
    assert "API_KEY=secret" in grep.stdout, "control: grep -r prints the dotenv file"
    # the walk is cached between runs: the file added since is still seen
    result = _check(project, "grep -rn KEY .")
    assert result["decision"] == "ask", result
    assert str(project / "config" / ".env") in str(result["reason"])
    for command in ("grep -rn KEY src", "grep -rn --exclude='.env*' KEY .",
                    "find . -name '*.py' -exec cat {} +"):
        assert _check(project, command)["decision"] == "allow", command
    assert _check(project, "find . -type f -exec cat {} +")["decision"] == "ask"


def test_a_tree_read_through_a_link_to_another_directory_asks(tmp_path: Path) -> None:
    """From a review: a repository may carry `src/shared -> ../../other`;
    `grep -r KEY src/shared` then reads another project's .env."""
    other = tmp_path / "other"
    other.mkdir()
    (other / ".env").write_text("API_KEY=secret\n")
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "shared").symlink_to(other)
    grep = subprocess.run(["grep", "-r", "KEY", "src/shared"], cwd=project, capture_output=True,
                          text=True, check=False)
    assert "API_KEY=secret" in grep.stdout, "control: grep follows the link it is given"
    assert _check(project, "grep -r KEY src/shared")["decision"] == "ask"
    assert _check(project, "grep -r KEY src")["decision"] == "allow"  # -r does not follow links
    assert _check(project, "grep -R KEY src")["decision"] == "ask"


def _add_dotenv(project: Path) -> None:
    (project / ".env").write_text("KEY=secret\n")


def _add_link_out(project: Path) -> None:
    (project / "src" / "up").symlink_to(project.parent)


def _add_file_link_out(project: Path) -> None:
    (project / "src" / "notes.txt").symlink_to(project.parent / "outside.txt")


def _add_fsmonitor(project: Path) -> None:
    subprocess.run(["git", "config", "-f", str(project / ".git" / "config"),
                    "core.fsmonitor", "./watch"], check=True)


# (command, what changes between two identical lines): the same command, the
# same line of input, must be judged against the files as they are now
CHANGED_MEANWHILE = [
    pytest.param("grep -r KEY .", _add_dotenv, id="a dotenv file"),
    pytest.param("cat src/up/outside.txt", _add_link_out, id="a link out of the project"),
    pytest.param("git status", _add_fsmonitor, id="a repository's core.fsmonitor"),
    pytest.param("find src -exec cat {} +", _add_file_link_out, id="a link to a file outside"),
]


@pytest.mark.parametrize(("command", "change"), CHANGED_MEANWHILE)
def test_a_jsonl_stream_sees_what_changed_while_it_runs(
        tmp_path: Path, command: str, change: Callable[[Path], None]) -> None:
    """From a review: facts kept for the whole stream let a .env (or a
    diff.external) added meanwhile pass. The analyses are kept by their
    inputs, facts included, and so are their lines: a repeated command is
    answered from what was kept only when the facts are the same."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (tmp_path / "outside.txt").write_text("x\n")
    with subprocess.Popen([SHELLGATE, "check", "--jsonl", "--cwd", str(project)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        line = json.dumps({"command": command}) + "\n"
        answers = []
        for step in range(3):
            if step == 2:
                change(project)
            proc.stdin.write(line)
            proc.stdin.flush()
            answers.append(proc.stdout.readline())
        proc.stdin.close()
    assert answers[0] == answers[1]
    assert json.loads(answers[0])["decision"] == "allow"
    assert json.loads(answers[2])["decision"] != "allow", answers[2]


def test_a_read_through_a_link_to_a_directory_is_judged_where_it_leads(tmp_path: Path) -> None:
    """From a review: `up -> ..` in a project inside the home; `cat
    up/.ssh/id_rsa` printed the key, allowed."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    project = home / "proj"
    project.mkdir()
    (project / "up").symlink_to("..")
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.run([SHELLGATE, "check", "--json", "--cwd", str(project),
                           "cat up/.ssh/id_rsa"], capture_output=True, text=True, env=env,
                          timeout=60, check=True)
    assert json.loads(proc.stdout)["decision"] == "deny"


@pytest.mark.parametrize("command", ["cat gl/*", "cat */ofile", "cat gl/?file", "head gl/[o]*"])
def test_a_glob_whose_file_is_a_link_out_of_the_project_asks(tmp_path: Path,
                                                             command: str) -> None:
    """From a review: the glob's text `gl/*` stayed inside; its file gl/ofile
    was a link to a file outside the project, read unasked."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("OUTSIDE\n")
    project = tmp_path / "project"
    (project / "gl").mkdir(parents=True)
    (project / "gl" / "ofile").symlink_to(outside / "o.txt")
    (project / "gl" / "plain").write_text("in\n")
    assert _check(project, command)["decision"] == "ask"
    assert _check(project, "cat gl/p*")["decision"] == "allow"  # the control: no link there


# (command, whether it reads through a link to a file it meets below its
# root) — each checked against the installed tool in the test below
FILE_LINK_READERS = [
    ("find sub -exec cat {} +", True),
    ("find sub -print0 | xargs -0 cat", True),
    ("find sub -name '*.txt' -exec head {} +", True),
    ("grep -R KEY sub", True),
    ("rg -L KEY sub", True),
    ("grep -r KEY sub", False),
    ("rg KEY sub", False),
]


@pytest.mark.parametrize(("command", "follows"), FILE_LINK_READERS)
def test_a_tree_read_through_a_link_to_a_secret_file_is_never_allowed(
        tmp_path: Path, command: str, follows: bool) -> None:
    """From a review: `find sub -exec cat {} +`, with sub/k.txt ->
    ~/.ssh/id_rsa, was allowed and printed the key (the workspace search
    recorded only links to directories). The control runs the command for
    real: it prints the key exactly when the tool reads through the link."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY-MATERIAL\n")
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "a.txt").write_text("KEY plain\n")
    (project / "sub" / "k.txt").symlink_to(home / ".ssh" / "id_rsa")
    ran = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True,
                         timeout=60, check=False)
    assert ("KEY-MATERIAL" in ran.stdout) is follows, ran
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.run([SHELLGATE, "check", "--json", "--cwd", str(project), command],
                          capture_output=True, text=True, env=env, timeout=60, check=True)
    verdict = json.loads(proc.stdout)
    if follows:
        assert verdict["decision"] == "deny", verdict["reason"]
        assert "id_rsa" in verdict["reason"]
    else:
        assert verdict["decision"] == "allow", verdict["reason"]


def test_a_tree_read_through_a_link_to_a_file_inside_the_project_stays_allowed(
        tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "a.txt").write_text("x\n")
    (project / "sub" / "b.txt").symlink_to("a.txt")
    (tmp_path / "out.txt").write_text("y\n")
    assert _check(project, "find sub -exec cat {} +")["decision"] == "allow"
    (project / "sub" / "c.txt").symlink_to(tmp_path / "out.txt")
    asked = _check(project, "find sub -exec cat {} +")
    assert asked["decision"] == "ask"
    assert "outside the working directory" in str(asked["reason"])


def _secret_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY-MATERIAL\n")
    return home, {**os.environ, "HOME": str(home)}


def _verdict(project: Path, command: str, env: dict[str, str]) -> dict[str, object]:
    proc = subprocess.run([SHELLGATE, "check", "--json", "--cwd", str(project), command],
                          capture_output=True, text=True, env=env, timeout=60, check=True)
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def _leaks(project: Path, command: str) -> bool:
    ran = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True,
                         timeout=60, check=False)
    return "KEY-MATERIAL" in ran.stdout


@pytest.mark.parametrize("command", [
    "cat sub/[[:alpha:]].txt", "cat sub/[^a]*", "head -n 5 sub/[[:alnum:]]*",
    "grep '' sub/[^a]*", "cat sub/[[=k=]]*",
])
def test_a_glob_python_reads_otherwise_than_bash_is_not_allowed(
        tmp_path: Path, command: str) -> None:
    """From a review: Python's glob reads `[^a]` as a literal `^` and knows
    no `[[:alpha:]]`; such a glob matched nothing when its files' links
    were looked up, and a link to the key among them went unseen."""
    home, env = _secret_home(tmp_path)
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "a.txt").write_text("x\n")
    (project / "sub" / "k.txt").symlink_to(home / ".ssh" / "id_rsa")
    assert _leaks(project, command)  # the control: bash expands it to the link
    assert _verdict(project, command, env)["decision"] != "allow"


@pytest.mark.parametrize("template", [
    "cd sub && find {t} -exec cat {{}} +", "cd sub && cat {t}/x", "cd sub && grep -R '' {t}",
    "cd sub && cat {t}/*",
])
def test_a_link_into_the_reading_process_is_not_resolved_in_the_gateways(
        tmp_path: Path, template: str) -> None:
    """From a review: t/x -> /proc/self/cwd/y leads where the reader runs
    (sub/y, a link to the key); resolved in the gateway, in the project, it
    led to a harmless y and the read was allowed."""
    home, env = _secret_home(tmp_path)
    project = tmp_path / "proj"
    (project / "t").mkdir(parents=True)
    (project / "sub").mkdir()
    (project / "y").write_text("harmless\n")
    (project / "t" / "x").symlink_to("/proc/self/cwd/y")
    (project / "sub" / "y").symlink_to(home / ".ssh" / "id_rsa")
    command = template.format(t=project / "t")
    assert _leaks(project, command)
    done = subprocess.run([SHELLGATE, "check", "--json", "--cwd", str(project), command],
                          capture_output=True, text=True, env=env, timeout=60, check=True,
                          cwd=project)
    assert json.loads(done.stdout)["decision"] != "allow"


def test_a_directory_too_deep_for_the_search_is_not_taken_as_searched(tmp_path: Path) -> None:
    """From a review: a directory whose absolute path passes PATH_MAX was
    dropped by the search as if empty; `find longe -exec cat {} +` (its
    relative path fits) read a link to the key there, allowed."""
    home, env = _secret_home(tmp_path)
    project = tmp_path / "proj"
    deep = project / "longe"
    deep.mkdir(parents=True)
    fd = os.open(deep, os.O_RDONLY)
    try:
        # longe/ + 20 names of 200 + one of 60 + /k: 4,088 characters, under
        # PATH_MAX (4,096) for the reader, over it from /
        for name in [*["d" * 200] * 20, "e" * 60]:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.symlink(home / ".ssh" / "id_rsa", "k", dir_fd=fd)
    finally:
        os.close(fd)
    command = "find longe -exec cat {} +"
    assert _leaks(project, command)
    assert _verdict(project, command, env)["decision"] != "allow"
    assert _verdict(project, "grep -r KEY longe", env)["decision"] != "allow"
