"""Hooks as Claude Code runs them: real scripts on the host, their JSON on
stdin, exit codes and JSON answers, timeouts that kill the whole tree."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from pathlib import Path

import psutil
import pytest

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision
from gateway.hooks import (
    ConfiguredHooks,
    HookCommand,
    combine,
    interpret,
    matcher_matches,
    parse_hooks,
    run_hook,
)
from gateway.messages import TextBlock, ToolResultMessage


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def pre(command: str, timeout: float = 10, matcher: str = "") -> HookCommand:
    return HookCommand("PreToolUse", command, matcher, timeout, "userSettings", "test")


def run(hook: HookCommand, payload: dict[str, object] | None = None,
        cwd: str = "/") -> tuple[Decision | None, str, object]:
    done = asyncio.run(run_hook(hook, payload or {}, cwd=cwd, env=dict(os.environ)))
    v = interpret(done)
    return v.decision, v.reason, v


ANSWERS = [
    # (what the script does, decision, a word of the reason or error)
    ("exit 0", None, ""),
    ("echo 'not json at all'; exit 0", None, ""),
    ("echo blocked by policy >&2; exit 2", Decision.DENY, "blocked by policy"),
    ("exit 2", Decision.DENY, "nothing on stderr"),
    ("""echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "no pushes"}}'""",
     Decision.DENY, "no pushes"),
    ("""echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'""", Decision.ALLOW, ""),
    ("""echo '{"hookSpecificOutput": {"permissionDecision": "ask",
        "permissionDecisionReason": "a person should look"}}'""", Decision.ASK, "person"),
    ("""echo '{"decision": "block", "reason": "legacy block"}'""", Decision.DENY, "legacy"),
    ("""echo '{"decision": "approve"}'""", Decision.ALLOW, ""),
    # it meant to decide and said it unreadably: a person decides
    ("""echo '{"hookSpecificOutput": {"permissionDecision": "DENY!"}}'""", Decision.ASK,
     "could not be read"),
    # another event's answer decides nothing here
    ("""echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "permissionDecision": "allow"}}'""", None, ""),
]


@pytest.mark.parametrize(("body", "decision", "word"), ANSWERS)
def test_a_pre_tool_hook_answers_by_exit_code_and_json(
        tmp_path: Path, body: str, decision: Decision | None, word: str) -> None:
    got, reason, _ = run(pre(script(tmp_path, "h.sh", body + "\n")))
    assert got is decision
    assert word in reason


ERRORS = [
    ("echo oops >&2; exit 1", "exited 1: oops"),
    ("exit 127", "exited 127"),
    ("echo '{\"broken\": '", "not JSON"),
    ("echo '[1, 2]'", "not JSON") ,
]


@pytest.mark.parametrize(("body", "error"), ERRORS)
def test_a_failing_or_garbled_hook_is_a_non_blocking_error(
        tmp_path: Path, body: str, error: str) -> None:
    got, _, verdict = run(pre(script(tmp_path, "h.sh", body + "\n")))
    assert got is None
    assert error in (getattr(verdict, "error", "") or "") or body.startswith("echo '[")


def test_a_hook_that_prints_a_json_list_decides_nothing(tmp_path: Path) -> None:
    got, _, verdict = run(pre(script(tmp_path, "h.sh", "echo '[1, 2]'\n")))
    assert got is None and getattr(verdict, "error", None) is None


def test_a_hook_reads_claude_codes_json_on_stdin_with_the_project_dir_in_its_env(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_AUDIT_KEY", "k" * 32)
    out = tmp_path / "seen.json"
    env_out = tmp_path / "env.txt"
    hook = HookCommand("PreToolUse", script(
        tmp_path, "h.sh", f'cat > {out}\nenv > {env_out}\n'), source="userSettings")
    session = _session(tmp_path)
    hooks = ConfiguredHooks([hook], project_dir=str(tmp_path), mode="acceptEdits")
    ctx = ToolContext(session, "toolu_1")
    outcome = asyncio.run(hooks.pre_tool_use("Bash", {"command": "ls"}, ctx))
    assert outcome.decision is None
    seen = json.loads(out.read_text())
    assert seen == {"session_id": session.session_id, "transcript_path": "",
                    "cwd": session.cwd, "permission_mode": "acceptEdits",
                    "hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_use_id": "toolu_1", "tool_input": {"command": "ls"}}
    env = env_out.read_text()
    assert f"CLAUDE_PROJECT_DIR={tmp_path}\n" in env
    assert f"SHELLGATE_PROJECT_DIR={tmp_path}\n" in env
    assert "SHELLGATE_AUDIT_KEY" not in env
    ran = [e for e in session.audit.events if e["event"] == "hook.ran"]  # type: ignore[attr-defined]
    assert len(ran) == 1 and ran[0]["exit_code"] == 0 and ran[0]["call_id"] == ctx.call_id


def test_a_hung_hook_is_killed_with_its_whole_tree_at_its_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # a child in the group and a grandchild that left it (setsid)
    body = (f"sleep 300 & echo $! >> {pids}\n"
            f"setsid sleep 301 & echo $! >> {pids}\n"
            "sleep 302\n")
    started = time.monotonic()
    got, _, verdict = run(pre(script(tmp_path, "h.sh", body), timeout=1.0))
    took = time.monotonic() - started
    assert got is None and "timed out" in (getattr(verdict, "error", "") or "")
    assert took < 8
    time.sleep(0.2)
    left = [int(p) for p in pids.read_text().split()]
    assert len(left) == 2
    assert not [p for p in left if psutil.pid_exists(p)
                and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def test_a_hook_that_never_reads_stdin_or_prints_forever_still_ends(tmp_path: Path) -> None:
    big = {"tool_input": {"content": "x" * 2_000_000}}
    hook = pre(script(tmp_path, "h.sh", "head -c 3000000 /dev/zero\nexit 0\n"), timeout=20)
    done = asyncio.run(run_hook(hook, big, cwd="/", env=dict(os.environ)))
    assert done.exit_code == 0 and len(done.stdout) == 1 << 20


def test_matching_hooks_run_in_parallel(tmp_path: Path) -> None:
    hooks = [pre(script(tmp_path, f"h{i}.sh", f"sleep 1\necho {i} > /dev/null\n"))
             for i in range(3)]
    session = _session(tmp_path)
    engine = ConfiguredHooks(hooks, project_dir=str(tmp_path))
    started = time.monotonic()
    asyncio.run(engine.pre_tool_use("Read", {}, ToolContext(session, "t")))
    assert time.monotonic() - started < 2.5


def test_across_hooks_the_strictest_decision_wins(tmp_path: Path) -> None:
    allow = script(tmp_path, "a.sh",
                   """echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'\n""")
    deny = script(tmp_path, "d.sh", "echo nope >&2; exit 2\n")
    ask = script(tmp_path, "q.sh",
                 """echo '{"hookSpecificOutput": {"permissionDecision": "ask"}}'\n""")
    session = _session(tmp_path)
    engine = ConfiguredHooks([pre(allow), pre(deny), pre(ask)], project_dir=str(tmp_path))
    outcome = asyncio.run(engine.pre_tool_use("Bash", {}, ToolContext(session, "t")))
    assert outcome.decision is Decision.DENY and outcome.reason == "nope"
    engine = ConfiguredHooks([pre(allow), pre(ask)], project_dir=str(tmp_path))
    outcome = asyncio.run(engine.pre_tool_use("Bash", {}, ToolContext(session, "t")))
    assert outcome.decision is Decision.ASK


def test_two_hooks_rewriting_the_input_differently_leave_it_to_a_person(
        tmp_path: Path) -> None:
    one = script(tmp_path, "1.sh", """echo '{"hookSpecificOutput": {"updatedInput":
                 {"command": "ls -1"}, "permissionDecision": "allow"}}'\n""")
    two = script(tmp_path, "2.sh", """echo '{"hookSpecificOutput": {"updatedInput":
                 {"command": "ls -a"}}}'\n""")
    session = _session(tmp_path)
    engine = ConfiguredHooks([pre(one)], project_dir=str(tmp_path))
    alone = asyncio.run(engine.pre_tool_use("Bash", {"command": "ls"}, ToolContext(session, "t")))
    assert alone.updated_input == {"command": "ls -1"}
    engine = ConfiguredHooks([pre(one), pre(two)], project_dir=str(tmp_path))
    both = asyncio.run(engine.pre_tool_use("Bash", {"command": "ls"}, ToolContext(session, "t")))
    assert both.updated_input is None and both.decision is Decision.ASK


def test_a_post_hook_blocks_with_feedback_for_the_model(tmp_path: Path) -> None:
    seen = tmp_path / "post.json"
    body = (f"cat > {seen}\n"
            """echo '{"decision": "block", "reason": "run the formatter",
            "hookSpecificOutput": {"hookEventName": "PostToolUse",
            "additionalContext": "style: black"}}'\n""")
    hook = HookCommand("PostToolUse", script(tmp_path, "p.sh", body))
    failure = HookCommand("PostToolUseFailure", script(tmp_path, "f.sh", "exit 2\n"))
    session = _session(tmp_path)
    engine = ConfiguredHooks([hook, failure], project_dir=str(tmp_path))
    ok = ToolResultMessage("t", (TextBlock("wrote it"),))
    outcome = asyncio.run(engine.post_tool_use("Write", {"file_path": "/x"}, ok,
                                               ToolContext(session, "t")))
    assert outcome.feedback == "run the formatter" and outcome.context == "style: black"
    assert json.loads(seen.read_text())["tool_response"] == {"content": "wrote it",
                                                             "is_error": False}
    failed = ToolResultMessage("t", (TextBlock("boom"),), is_error=True)
    outcome = asyncio.run(engine.post_tool_use("Write", {}, failed, ToolContext(session, "t")))
    assert outcome.feedback.startswith("blocked by a hook")


def test_continue_false_asks_the_session_to_stop(tmp_path: Path) -> None:
    hook = pre(script(tmp_path, "s.sh",
                      """echo '{"continue": false, "stopReason": "quota reached"}'\n"""))
    session = _session(tmp_path)
    outcome = asyncio.run(ConfiguredHooks([hook], project_dir=str(tmp_path)).pre_tool_use(
        "Bash", {}, ToolContext(session, "t")))
    assert outcome.stop == "quota reached"


MATCHERS = [
    ("", "Bash", True), ("*", "mcp__x__y", True), ("Bash", "Bash", True),
    ("Bash", "BashOutput", False), ("Edit|Write", "Write", True), ("Edit|Write", "Read", False),
    ("Notebook.*", "NotebookEdit", True), ("mcp__memory__.*", "mcp__memory__save", True),
    ("mcp__memory__.*", "mcp__files__read", False), ("bash", "Bash", False),
    ("[unclosed", "[unclosed", False),
]


@pytest.mark.parametrize(("matcher", "tool", "expected"), MATCHERS)
def test_a_matcher_is_a_name_a_list_or_a_pattern(matcher: str, tool: str,
                                                 expected: bool) -> None:
    assert matcher_matches(matcher, tool) is expected


BAD_CONFIG = [
    ([], "must be an object"),
    ({"PreToolUse": "x"}, "list of matcher groups"),
    ({"OnBoot": []}, "not an event"),
    ({"PreToolUse": [{"matcher": "[x", "hooks": []}]}, "not a valid pattern"),
    ({"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "?"}]}]}, "only 'command'"),
    ({"PreToolUse": [{"hooks": [{"command": ""}]}]}, "non-empty string"),
    ({"PreToolUse": [{"hooks": [{"command": "x", "timeout": -1}]}]}, "positive number"),
    ({"Stop": [{"matcher": "Bash", "hooks": [{"command": "x"}]}]}, "no tool to match"),
]


@pytest.mark.parametrize(("value", "problem"), BAD_CONFIG)
def test_a_mistake_in_the_hooks_key_costs_its_entry_and_is_said(value: object,
                                                                problem: str) -> None:
    _, problems = parse_hooks(value, source="userSettings", origin="f")
    assert any(problem in p for p in problems), problems


def test_the_hooks_key_is_read_with_timeouts_and_sources() -> None:
    hooks, problems = parse_hooks({"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "timeout": 5},
                                      {"command": "b", "timeout": 1e9}]}],
        "PostToolUse": [{"hooks": [{"command": "c"}]}]}, source="projectSettings", origin="f")
    assert problems == ()
    assert [(h.event, h.command, h.matcher, h.timeout_s, h.source) for h in hooks] == [
        ("PreToolUse", "a", "Bash", 5.0, "projectSettings"),
        ("PreToolUse", "b", "Bash", 3600.0, "projectSettings"),
        ("PostToolUse", "c", "", 60.0, "projectSettings")]


def test_combining_no_verdicts_decides_nothing() -> None:
    assert combine([]).decision is None


def _session(tmp_path: Path) -> SessionContext:
    from gateway.session import make_context

    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return make_context(str(ws), home=str(tmp_path), results_dir=str(tmp_path))
