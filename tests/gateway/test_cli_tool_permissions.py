"""`shellgate tool` with settings, the permission flags and the audit log:
what a user's `.claude/settings.json` means here, what a mistake in it
costs, and the trail every call leaves."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.context import SessionContext
from gateway.messages import ToolUse
from gateway.pipeline import Pipeline
from gateway.tools.write import WRITE


def _tool(cwd: Path, name: str, tool_input: dict[str, Any], *flags: str,
          home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELLGATE_AUDIT_LOG": str(cwd.parent / "audit"),
           "HOME": str(home or cwd.parent / "home")}
    os.makedirs(env["HOME"], exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "tool", name, "--input", json.dumps(tool_input),
         "--cwd", str(cwd), *flags], capture_output=True, timeout=90, check=False, env=env)
    return subprocess.CompletedProcess(done.args, done.returncode,
                                       done.stdout.decode("utf-8", "replace"),
                                       done.stderr.decode("utf-8", "replace"))


def _events(workspace: Path) -> list[dict[str, Any]]:
    files = sorted((workspace.parent / "audit").glob("*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def _settings(workspace: Path, data: object, name: str = ".claude/settings.json") -> None:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


@pytest.mark.sandbox
def test_a_project_allow_rule_runs_a_command_that_would_be_asked(workspace: Path) -> None:
    _settings(workspace, {"permissions": {"allow": ["Bash(touch:*)"]}})
    done = _tool(workspace, "Bash", {"command": "touch made"})
    assert done.returncode == 0 and (workspace / "made").exists(), done.stderr
    decided = [e for e in _events(workspace) if e["event"] == "permission.decided"][-1]
    assert decided["decision"] == "allow" and decided["rule"] == "Bash(touch:*)"
    assert decided["source"] == "projectSettings"


@pytest.mark.sandbox
def test_every_call_leaves_its_trail_and_the_chain_verifies(workspace: Path) -> None:
    _tool(workspace, "Bash", {"command": "cat README.md"})
    _tool(workspace, "Bash", {"command": "touch nope"})  # asked; headless: denied
    kinds = [e["event"] for e in _events(workspace)]
    assert kinds.count("permission.decided") == 2
    for kind in ("settings.loaded", "tool.requested", "tool.validated", "sandbox.started",
                 "tool.completed"):
        assert kind in kinds
    # verified as the writer's user: its head is in that home's state directory
    done = subprocess.run([sys.executable, "-m", "gateway", "audit", "verify",
                           str(workspace.parent / "audit")], capture_output=True, text=True,
                          timeout=60, check=False,
                          env={**os.environ, "HOME": str(workspace.parent / "home")})
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.sandbox
def test_the_audit_log_is_out_of_reach_of_commands_and_file_tools(workspace: Path) -> None:
    """From a review: the log was hidden from the file tools' plan only; a
    sandboxed `cat` read it (and the chain's last line, to forge the next)."""
    _tool(workspace, "Bash", {"command": "true"})
    log = next((workspace.parent / "audit").glob("*.jsonl"))
    allow = ["--allowedTools", f"Read(/{workspace.parent}/**)"]
    done = _tool(workspace, "Bash", {"command": f"cat {log}; ls -a {log.parent}"}, *allow)
    assert "tool.requested" not in done.stdout and ".lock" not in done.stdout
    assert "No such file" in done.stdout, done.stdout  # the control: the command did run
    read = _tool(workspace, "Read", {"file_path": str(log)}, *allow)
    assert "tool.requested" not in read.stdout and "hidden by the sandbox" in read.stdout


def test_a_deny_flag_refuses_and_names_the_command_line(workspace: Path) -> None:
    done = _tool(workspace, "Bash", {"command": "git push origin main"},
                 "--disallowedTools", "Bash(git push:*)")
    assert done.returncode == 0
    assert "Decided by: cliArg (rule Bash(git push:*))" in done.stdout


def test_plan_mode_refuses_a_write(workspace: Path) -> None:
    done = _tool(workspace, "Write", {"file_path": str(workspace / "new.txt"), "content": "x"},
                 "--permission-mode", "plan")
    assert "plan mode" in done.stdout.lower() and not (workspace / "new.txt").exists()


def test_a_settings_file_written_with_mistakes_is_reported_once_and_never_allows(
        workspace: Path) -> None:
    _settings(workspace, """{
  "permissions": {
    "allow": ["Bash(touch:*)", "Bash(ls", "Bsh(ls)", 7],
    "deny": "Bash(rm:*)",
    "defaultMode": "yolo",
    "colour": "blue"
  },
  "theme": "dark"
}""")
    _settings(workspace, "{ this is not json", ".claude/settings.local.json")
    done = _tool(workspace, "Write", {"file_path": str(workspace / "w.txt"), "content": "x"})
    problems = [line for line in done.stderr.splitlines() if line.startswith("shellgate: settings")]
    text = "\n".join(problems)
    for said in ("never closed", "'Bsh'", "must be a string", "taken as a list of one",
                 "'yolo' is not a mode", "colour", "settings.local.json:1:3: not valid JSON"):
        assert text.count(said) == 1, (said, text)
    assert "theme" not in text  # keys of other parts of Claude Code are kept quietly
    assert not (workspace / "w.txt").exists()  # still asked: headless, denied


@pytest.mark.parametrize(("flags", "said"), [
    (["--permission-mode", "yolo"], "--permission-mode 'yolo'"),
    (["--settings", "/nonexistent.json"], "--settings"),
    (["--audit-log", "INSIDE"], "where sandboxed commands may write"),
    (["--audit-log", "/proc/version/audit"], "audit log"),
])
def test_bad_flags_are_one_line_errors_and_nothing_runs(
        workspace: Path, flags: list[str], said: str) -> None:
    flags = [str(workspace / "log") if f == "INSIDE" else f for f in flags]
    done = _tool(workspace, "Bash", {"command": "touch ran"}, *flags)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (workspace / "ran").exists()


class _Broken:
    """A log that cannot take the decision (a full disk)."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def emit(self, event: str, **fields: Any) -> None:
        if event == "permission.decided":
            raise OSError(28, "No space left on device")
        self.events.append(event)


def test_when_the_decision_cannot_be_logged_the_call_fails_closed(
        session: SessionContext, workspace: Path) -> None:
    session.audit = sink = _Broken()
    target = workspace / "w.txt"
    use = ToolUse("toolu_w", "Write", {"file_path": str(target), "content": "x"})
    session.approver = None
    from gateway.permissions import RulesDecider, Source, merge, parse_settings_text

    allow = merge([parse_settings_text(b'{"permissions": {"allow": ["Write"]}}', "/u.json",
                                       Source.USER, "/")])
    result = asyncio.run(Pipeline(session, [WRITE], RulesDecider(allow)).run(use))
    assert result.is_error and "nothing was run" in result.text
    assert not target.exists() and "internal_error" in sink.events


def test_a_settings_file_inside_the_project_is_read_as_the_repositorys(workspace: Path) -> None:
    """From a review: a `--settings` file in the workspace was rewritten by a
    sandboxed command to bypassPermissions; the next session ran all."""
    team = workspace / "team-settings.json"
    team.write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions",
                                                "allow": ["Bash", "Bash(touch:*)"]}}))
    done = _tool(workspace, "Bash", {"command": "touch made && python3 -c 'print(1)'"},
                 "--settings", str(team))
    assert not (workspace / "made").exists() and "headless" in done.stdout, done.stdout
    assert "read as a repository's settings" in done.stderr
    alone = _tool(workspace, "Bash", {"command": "touch made"}, "--settings", str(team))
    assert (workspace / "made").exists(), alone.stdout  # its narrow rule still holds


@pytest.mark.sandbox
def test_the_audit_log_is_written_where_it_really_is_not_through_a_link(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: `--audit-log ws/logs/audit` with ws/logs a link let a
    command re-point the link and take the rest of the session's log."""
    real = tmp_path / "real-logs"
    real.mkdir()
    (workspace / "logs").symlink_to(real)
    done = _tool(workspace, "Bash", {"command": "mkdir -p evil && ln -sfn evil logs"},
                 "--allowedTools", "Bash", "--audit-log", str(workspace / "logs" / "audit"))
    assert done.returncode == 0 and (workspace / "logs").resolve() == workspace / "evil"
    assert not list((workspace / "evil").rglob("*.jsonl"))  # the control: the link moved
    events = [json.loads(line)["event"] for f in (real / "audit").glob("*.jsonl")
              for line in f.read_text().splitlines()]
    assert events[-1] == "tool.completed"


def test_an_audit_log_under_a_writable_root_of_the_sandbox_is_refused(
        workspace: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "state").mkdir(parents=True)
    settings = tmp_path / "user.json"
    settings.write_text(json.dumps({"sandbox": {"filesystem": {"allowWrite": [str(shared)]}}}))
    done = _tool(workspace, "Bash", {"command": "true"}, "--settings", str(settings),
                 "--audit-log", str(shared / "state" / "audit"))
    assert done.returncode == 2 and "where sandboxed commands may write" in done.stderr


@pytest.mark.sandbox
def test_a_repository_cannot_reopen_unsandboxed_commands_the_user_closed(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: the project's `allowUnsandboxedCommands: true`, being
    of higher precedence than the user's `false`, re-opened it: a call
    with dangerouslyDisableSandbox was asked about instead of refused. A
    closed switch wins from any source; the repository's `true` is said."""
    home = tmp_path / "home"
    _settings(home, {"sandbox": {"allowUnsandboxedCommands": False}})
    _settings(workspace, {"sandbox": {"allowUnsandboxedCommands": True}})
    done = _tool(workspace, "Bash", {"command": "true", "dangerouslyDisableSandbox": True},
                 home=home)
    decided = [e for e in _events(workspace) if e["event"] == "permission.decided"][-1]
    assert decided["decision"] == "deny", decided
    assert decided["rule"] == "sandbox.allowUnsandboxedCommands"
    assert "allowUnsandboxedCommands: a repository's settings cannot widen" in done.stderr
