"""shellgate's own directories — the audit log, the chain's recorded head,
the saved permission answers, the user's shellgate settings, the cache —
are out of every sandboxed command's reach, the home directory as the
workspace (`shellgate run --cwd ~`) included: a command that could read
the log saw every call, one that could write it cut its own calls out of
it, and one that could write an answers file granted itself rules. A cut
made anyway (outside any sandbox) fails `shellgate audit verify`."""

from __future__ import annotations

import os
import shlex
import subprocess
import uuid
from pathlib import Path

import pytest
from escape_kit import SHELLGATE, consume_control, output, require, sh

from gateway.audit import verify

pytestmark = pytest.mark.sandbox

#: shellgate's files in a home directory with no XDG variables set
OWN_FILES = {
    "the audit log": ".local/state/shellgate/audit/2025-05-01.jsonl",
    "the recorded head": ".local/state/shellgate/audit-heads/0123.json",
    "a saved answers file": ".local/state/shellgate/answers/0123.json",
    "the trust file": ".config/shellgate/trusted.json",
    "the cache": ".cache/shellgate/fuzz/entry",
}


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
                        "SHELLGATE_AUDIT_LOG", "SHELLGATE_AUDIT_KEY")}
    return {**env, "HOME": str(home), **extra}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home directory holding shellgate's files, each with a secret token."""
    home = tmp_path / "home"
    for rel in OWN_FILES.values():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"sgown-{uuid.uuid4().hex[:12]}\n")
    return home


@pytest.mark.parametrize("what", list(OWN_FILES), ids=list(OWN_FILES))
def test_with_the_home_as_workspace_a_command_neither_reads_nor_changes_shellgates_files(
        home: Path, what: str) -> None:
    target = home / OWN_FILES[what]
    before = target.read_text()
    quoted, parent = shlex.quote(str(target)), shlex.quote(str(target.parent))
    proc = sh(home, f"echo ran > control.txt; cat {quoted}; ls -A {parent}; "
              f"echo forged >> {quoted}; : > {quoted}; rm -f {quoted}", env=_env(home))
    consume_control(home, proc)
    assert target.read_text() == before
    assert before.strip() not in output(proc)
    assert target.name not in proc.stdout.decode()


def test_a_command_cannot_rename_the_state_directorys_parents_away_and_plant_a_new_one(
        home: Path) -> None:
    """`mv .local .local2` would take the hidden directory with it; a new
    `.local/state/shellgate` in its place would hold a forged log and head."""
    log = home / OWN_FILES["the audit log"]
    before = log.read_text()
    proc = sh(home, "echo ran > control.txt; mv .local .local2; mv .local/state .local/s2; "
              "mkdir -p .local/state/shellgate/audit && echo forged > "
              f"{shlex.quote(OWN_FILES['the audit log'])}", env=_env(home))
    consume_control(home, proc)
    assert not (home / ".local2").exists() and not (home / ".local" / "s2").exists()
    assert log.read_text() == before


def test_a_workspace_inside_shellgates_state_directory_is_refused(home: Path) -> None:
    inside = home / ".local/state/shellgate/work"
    inside.mkdir()
    proc = sh(inside, "echo ran > control.txt", env=_env(home))
    assert proc.returncode == 125
    assert "inside shellgate's own directory" in output(proc)
    assert not (inside / "control.txt").exists()
    sibling = home / "work"  # control: the same run beside it works
    sibling.mkdir()
    consume_control(sibling, sh(sibling, "echo ran > control.txt", env=_env(home)))


def test_an_audit_log_named_by_the_environment_is_hidden_too(
        workspace: Path, outside: Path, token: str) -> None:
    log = outside / "audit"
    log.mkdir()
    (log / "2025-05-01.jsonl").write_text(token + "\n")
    script = f"cat {shlex.quote(str(log))}/*.jsonl > control.txt; echo ran >> control.txt"
    seen = consume_control(workspace, sh(workspace, script, env=_env(workspace.parent)))
    require(token in seen, "without SHELLGATE_AUDIT_LOG the directory is readable")
    proc = sh(workspace, script, env=_env(workspace.parent, SHELLGATE_AUDIT_LOG=str(log)))
    seen = consume_control(workspace, proc)
    require("ran" in seen, "the command ran", proc)
    assert token not in seen


def _tool(workspace: Path, env: dict[str, str], command: str) -> None:
    subprocess.run([SHELLGATE, "tool", "Bash", "--input", f'{{"command": "{command}"}}',
                    "--cwd", str(workspace)], env=env, capture_output=True, check=False,
                   timeout=60, stdin=subprocess.DEVNULL)


def _verify(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SHELLGATE, "audit", "verify"], env=env, capture_output=True,
                          text=True, check=False, timeout=60)


def test_a_session_cut_out_of_the_end_of_the_log_fails_verify(
        workspace: Path, tmp_path: Path) -> None:
    """The cut a command could make before its state directory was hidden,
    made here on the host: what is left still chains, and verify said ok."""
    env = _env(tmp_path / "home", XDG_STATE_HOME=str(tmp_path / "state"))
    (tmp_path / "home").mkdir()
    _tool(workspace, env, "echo first")
    log = tmp_path / "state" / "shellgate" / "audit"
    kept = sum(len(p.read_bytes().splitlines()) for p in log.glob("*.jsonl"))
    _tool(workspace, env, "echo second")
    verified = _verify(env)
    require(verified.returncode == 0, "the intact log verifies")
    newest = sorted(log.glob("*.jsonl"))[-1]
    lines = newest.read_bytes().splitlines(keepends=True)
    require(len(lines) > kept, "the second session wrote lines")
    newest.write_bytes(b"".join(lines[:kept]))  # the second session cut off
    require(verify(sorted(log.glob("*.jsonl"))).status == 0, "what is left still chains")
    cut = _verify(env)
    assert cut.returncode == 1, cut.stdout + cut.stderr
    assert "cut off the end" in cut.stdout


def test_the_default_state_directory_stays_hidden_when_the_environment_names_another(
        home: Path, tmp_path: Path) -> None:
    """From a review: with XDG_STATE_HOME elsewhere only that one was
    hidden; ~/.local/state/shellgate — the log the user's usual sessions
    write — was readable, and in home mode cut and re-headed."""
    target = home / OWN_FILES["the audit log"]
    before = target.read_text()
    quoted = shlex.quote(str(target))
    proc = sh(home, f"echo ran > control.txt; cat {quoted}; : > {quoted}",
              env=_env(home, XDG_STATE_HOME=str(tmp_path / "elsewhere")))
    consume_control(home, proc)
    assert target.read_text() == before
    assert before.strip() not in output(proc)


def test_a_tool_session_with_the_default_log_runs_its_commands(tmp_path: Path) -> None:
    """From a review: the default audit log lies inside the hidden state
    directory; both were mounted, and bubblewrap failed every `shellgate
    tool Bash` call of a fresh home."""
    home = tmp_path / "fresh-home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([SHELLGATE, "tool", "Bash", "--input", '{"command": "echo sg-ran"}'],
                          cwd=work, env=_env(home), capture_output=True, timeout=120,
                          check=False)
    assert b"sg-ran" in done.stdout, done.stdout + done.stderr


def test_a_log_another_verb_wrote_with_audit_log_is_hidden_from_later_runs(
        workspace: Path, outside: Path) -> None:
    """From a review: `shellgate tool ... --audit-log /var/tmp/logs/a.jsonl`
    wrote there, and a later `shellgate run` read every call. The log's head
    is recorded in the state directory, which names it."""
    home = workspace.parent / "h"
    home.mkdir()
    log = outside / "agent.jsonl"
    subprocess.run([SHELLGATE, "tool", "Bash", "--input", '{"command": "echo sg-secret-call"}',
                    "--cwd", str(workspace), "--audit-log", str(log)], env=_env(home),
                   capture_output=True, check=False, timeout=60, stdin=subprocess.DEVNULL)
    require(log.is_file() and "sg-secret-call" in log.read_text(), "the session wrote its log")
    proc = sh(workspace, f"cat {shlex.quote(str(log))} > control.txt; echo ran >> control.txt",
              env=_env(home))
    seen = consume_control(workspace, proc)
    require("ran" in seen, "the command ran", proc)
    assert "sg-secret-call" not in seen
