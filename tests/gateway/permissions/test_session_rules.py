"""Deny rules where no analysis looks: the session makes Read and Edit deny
rules part of the sandbox's policy and of every file tool's check, and
Grep leaves bare-name ones out of its search (real sandbox, real tools)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gateway.messages import ToolResultMessage, ToolUse
from gateway.permissions import CliPermissions, load_permissions
from gateway.session import Session

pytestmark = pytest.mark.sandbox


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("SECRET-KEY\n")
    (workspace / "certs").mkdir()
    (workspace / "certs" / "server.pem").write_text("PEM-SECRET\n")
    (workspace / "certs" / "notes.md").write_text("PEM notes\n")
    return workspace


def _session(project: Path, tmp_path: Path, *deny: str) -> Session:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    permissions = load_permissions(str(project), str(home),
                                   CliPermissions(disallowed_tools=deny), managed_dirs=[])
    return Session.open(str(project), permissions=permissions, home=str(home),
                        results_dir=str(tmp_path / "results"))


def _run(session: Session, tool: str, data: dict[str, Any]) -> ToolResultMessage:
    return asyncio.run(session.run(ToolUse("toolu_s", tool, data)))


def test_a_read_deny_of_a_directory_hides_it_from_commands_too(
        project: Path, tmp_path: Path) -> None:
    session = _session(project, tmp_path, "Read(./secrets/**)")
    # `ls` is not refused by a rule (it names the directory, not a file in it):
    # the sandbox shows it empty
    result = _run(session, "Bash", {"command": "ls secrets; cat secrets/key.txt; true"})
    assert "SECRET-KEY" not in result.text
    read = _run(session, "Read", {"file_path": str(project / "secrets" / "key.txt")})
    assert read.is_error and "SECRET-KEY" not in read.text


def test_glob_and_grep_leave_out_files_a_bare_name_deny_rule_names(
        project: Path, tmp_path: Path) -> None:
    session = _session(project, tmp_path, "Read(*.pem)")
    found = _run(session, "Glob", {"pattern": "**/*"})
    assert "notes.md" in found.text and "server.pem" not in found.text
    grep = _run(session, "Grep", {"pattern": "PEM", "output_mode": "content"})
    assert "PEM notes" in grep.text and "PEM-SECRET" not in grep.text, grep.text


def test_an_edit_deny_rule_holds_for_write_and_for_commands(project: Path, tmp_path: Path) -> None:
    session = _session(project, tmp_path, "Edit(./certs/**)")
    result = _run(session, "Write", {"file_path": str(project / "certs" / "new.md"),
                                     "content": "x"})
    assert result.is_error and "Edit(./certs/**)" in result.text
    assert not (project / "certs" / "new.md").exists()
    session.context.approver = _yes
    _run(session, "Bash", {"command": "echo x > certs/notes.md"})
    assert (project / "certs" / "notes.md").read_text() == "PEM notes\n"  # the sandbox held it


async def _yes(request: Any) -> bool:
    return True


def test_rules_and_mode_from_settings_reach_the_pipeline(project: Path, tmp_path: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(touch:*)"], "defaultMode": "plan"}}))
    session = _session(project, tmp_path)
    result = _run(session, "Bash", {"command": "touch made"})
    assert result.is_error and "plan mode" in result.text.lower()
    assert not (project / "made").exists()
