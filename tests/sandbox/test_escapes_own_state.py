"""shellgate's own directories — the audit log, the chain's recorded head,
the saved permission answers, the user's shellgate settings, the cache —
are out of every sandboxed command's reach, the home directory as the
workspace (`shellgate run --cwd ~`) included: a command that could read
the log saw every call, one that could write it cut its own calls out of
it, and one that could write an answers file granted itself rules."""

from __future__ import annotations

import os
import shlex
import uuid
from pathlib import Path

import pytest
from escape_kit import consume_control, output, require, sh

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
