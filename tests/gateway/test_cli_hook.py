"""`shellgate hook` as Claude Code runs it: a new process per call, Claude
Code's PreToolUse JSON on stdin, one answer on stdout, exit 0 on every path
— each failure caused for real; and `shellgate hook install|uninstall`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.sandbox  # the file tools' policy is the sandbox's plan


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "SHELLGATE_AUDIT_LOG": str(tmp_path / "audit")}
    env.pop("CLAUDE_PROJECT_DIR", None)  # a test run inside Claude Code has one
    return {**env, **extra}


def _hook(payload: Any, env: dict[str, str], code: str | None = None,
          raw: bytes | None = None) -> tuple[int, dict[str, Any] | None]:
    argv = ([sys.executable, "-c", code] if code is not None
            else [sys.executable, "-m", "gateway", "hook"])
    data = raw if raw is not None else json.dumps(payload).encode()
    done = subprocess.run(argv, input=data, capture_output=True, timeout=90, env=env,
                          check=False)
    out = done.stdout.decode().strip()
    return done.returncode, (json.loads(out) if out else None)


def _call(tool: str, tool_input: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01"}


def _decision(answer: dict[str, Any] | None) -> str | None:
    return None if answer is None else answer["hookSpecificOutput"]["permissionDecision"]


def _reason(answer: dict[str, Any] | None) -> str:
    assert answer is not None
    reason: str = answer["hookSpecificOutput"]["permissionDecisionReason"]
    return reason


def _cases(ws: Path, home: Path) -> list[tuple[str, dict[str, Any], str | None]]:
    return [
        ("Bash", {"command": "git status; ls -la"}, "allow"),
        ("Bash", {"command": "cat README.md | wc -l"}, "allow"),
        ("Bash", {"command": "npm test"}, None),            # Claude Code decides
        ("Bash", {"command": "touch new.txt"}, None),
        ("Bash", {"command": "cat ~/.ssh/id_rsa"}, "deny"),
        ("Bash", {"command": "rm -rf ~"}, "deny"),
        ("Read", {"file_path": str(ws / "README.md")}, "allow"),
        ("Read", {"file_path": str(home / ".ssh" / "id_rsa")}, "deny"),
        ("Read", {"file_path": "/etc/hostname"}, None),     # outside the project
        ("Edit", {"file_path": str(ws / "README.md"), "old_string": "hello",
                  "new_string": "bye"}, None),
        ("Write", {"file_path": str(home / ".aws" / "credentials"), "content": "x"}, "deny"),
        ("Glob", {"pattern": "**/*.md"}, "allow"),
        ("Grep", {"pattern": "hello"}, "allow"),
        # a public address (a name is resolved first: see test_cli_hook_unsandboxed)
        ("WebFetch", {"url": "https://93.184.215.14/", "prompt": "p"}, None),
        ("mcp__srv__tool", {"x": 1}, None),                 # not ours to judge
    ]


def test_each_tools_call_gets_the_answer_a_claude_code_user_relies_on(
        workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    home = Path(env["HOME"])
    for tool, data, expected in _cases(workspace, home):
        code, answer = _hook(_call(tool, data, workspace), env)
        assert code == 0
        assert _decision(answer) == expected, (tool, data, answer)
        if expected == "deny":
            assert "shellgate:" in _reason(answer)
    # it writes the audit log
    log = "".join(p.read_text() for p in (tmp_path / "audit").rglob("*.jsonl"))
    assert '"permission.decided"' in log and '"toolu_01"' in log


def test_a_shellgate_deny_rule_is_passed_on_with_its_rule(workspace: Path,
                                                          tmp_path: Path) -> None:
    env = _env(tmp_path)
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(git push:*)"], "allow": ["Bash(ls:*)"]}}))
    _, answer = _hook(_call("Bash", {"command": "git push origin main"}, workspace), env)
    assert _decision(answer) == "deny"
    assert "Bash(git push:*)" in _reason(answer)
    # an allow rule is Claude Code's to apply: the hook gives no decision for it
    _, answer = _hook(_call("Bash", {"command": "ls -la /etc"}, workspace), env)
    assert _decision(answer) is None


def test_git_reads_are_not_allowed_in_a_repository_whose_config_runs_programs(
        workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    plain = _hook(_call("Bash", {"command": "git status"}, workspace), env)[1]
    assert _decision(plain) == "allow"
    subprocess.run(["git", "-C", str(workspace), "config", "core.fsmonitor", "touch /tmp/x"],
                   check=True)
    _, answer = _hook(_call("Bash", {"command": "git status"}, workspace), env)
    assert _decision(answer) is None


def _failing_answer(body: str) -> str:
    """A ``python -c`` program running the hook with its judgement replaced
    by ``body``."""
    return ("import os, signal, sys, time\nimport gateway.cli.hook as h\n"
            f"def failing(payload):\n    {body}\n"
            "h.answer = failing\nfrom gateway.cli import main\nsys.exit(main(['hook']))")


FAILURES = [
    # (what is broken, how it is caused, the decision, for a call on a secret)
    ("bad input", {"raw": b"{not json"}, "ask"),
    ("not an object", {"raw": b"[1]"}, "ask"),
    ("no tool_input", {"payload": {"tool_name": "Bash", "cwd": "/"}}, "ask"),
    ("an import failure", {"code": "import sys; sys.modules['gateway.session'] = None\n"
                           "from gateway.cli import main; sys.exit(main(['hook']))"}, "deny"),
    ("an unwritable audit log", {"env": {"SHELLGATE_AUDIT_LOG": "/proc/1/nope/audit"}}, "deny"),
    # the judgement ends in ways no handler in its own process can answer
    # for (from a review: each of these printed nothing, or exited non-0,
    # and Claude Code ran the call)
    ("the judging process killed (the OOM killer)", {"code": _failing_answer(
        "os.kill(os.getpid(), signal.SIGKILL)")}, "deny"),
    ("a crash in C code", {"code": _failing_answer("os.kill(os.getpid(), signal.SIGSEGV)")},
     "deny"),
    ("an exit that skips every handler", {"code": _failing_answer("os._exit(3)")}, "deny"),
    ("a hang no alarm reaches", {"code": _failing_answer(
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM}); time.sleep(60)"),
        "env": {"SHELLGATE_HOOK_TIMEOUT": "2"}}, "deny"),
    # a bug in a stage is a failure, not invalid input (it gave no decision)
    ("a stage that raises", {"code": "import gateway.tools.bash as b\n"
                             "def boom(*a, **k): raise RuntimeError('bug')\n"
                             "b.BashTool.check_permissions = boom\n"
                             "from gateway.cli import main; raise SystemExit(main(['hook']))"},
     "deny"),
]


@pytest.mark.parametrize(("case", "how", "expected"), FAILURES, ids=[f[0] for f in FAILURES])
def test_every_failure_still_prints_a_fail_closed_answer_and_exits_0(
        workspace: Path, tmp_path: Path, case: str, how: dict[str, Any], expected: str) -> None:
    env = _env(tmp_path, **how.get("env", {}))
    payload = how.get("payload", _call("Bash", {"command": "cat ~/.ssh/id_rsa"}, workspace))
    code, answer = _hook(payload, env, how.get("code"), how.get("raw"))
    assert code == 0
    assert _decision(answer) == expected
    assert "could not judge" in _reason(answer)


def test_what_the_judgement_prints_never_reaches_claude_code(workspace: Path,
                                                            tmp_path: Path) -> None:
    # from a review: a stray print before the answer made stdout unparsable,
    # which Claude Code reads as no objection
    code = _failing_answer("print('noise'); sys.stdout.flush(); return h.decision('deny', 'x')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=90,
                          env=_env(tmp_path), check=False,
                          input=json.dumps(_call("Bash", {"command": "ls"}, workspace)).encode())
    assert done.returncode == 0
    assert _decision(json.loads(done.stdout)) == "deny"


def test_a_reason_stdout_cannot_encode_is_still_printed(workspace: Path,
                                                        tmp_path: Path) -> None:
    # from a review: with a stdout that is not UTF-8, a reason naming
    # ~/.ssh/文 raised in the write, nothing was printed, and the call ran
    env = _env(tmp_path, PYTHONIOENCODING="ascii")
    for tool, data in (("Bash", {"command": "cat ~/.ssh/文 ~/.ssh/id_rsa"}),
                       ("Read", {"file_path": str(Path(env["HOME"]) / ".ssh" / "\ud800")})):
        code, answer = _hook(_call(tool, data, workspace), env)
        assert code == 0 and _decision(answer) == "deny", (tool, answer)


def test_a_hang_is_answered_at_the_deadline(workspace: Path, tmp_path: Path) -> None:
    # a settings file that is a FIFO: reading it blocks for ever
    (workspace / ".claude").mkdir()
    os.mkfifo(workspace / ".claude" / "settings.json")
    env = _env(tmp_path, SHELLGATE_HOOK_TIMEOUT="2")
    for command, expected in (("ls", "ask"), ("cat ~/.aws/credentials", "deny")):
        code, answer = _hook(_call("Bash", {"command": command}, workspace), env)
        assert code == 0 and _decision(answer) == expected
        assert "deadline" in _reason(answer)


def _settings(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.mark.parametrize("existing", [
    None,
    {"permissions": {"allow": ["Bash(ls:*)"]}},
    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "~/bin/mine.sh"}]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "fmt"}]}]}},
])
def test_install_adds_the_hook_once_and_uninstall_leaves_the_rest_as_it_was(
        workspace: Path, tmp_path: Path, existing: dict[str, Any] | None) -> None:
    env = _env(tmp_path)
    path = workspace / ".claude" / "settings.json"
    if existing is not None:
        path.parent.mkdir()
        path.write_text(json.dumps(existing, indent=4) + "\n")
    run = [sys.executable, "-m", "gateway", "hook"]
    for _ in range(2):  # idempotent
        done = subprocess.run([*run, "install", "--project"], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    data = _settings(path)
    ours = [h for g in data["hooks"]["PreToolUse"] for h in g["hooks"]
            if h["command"].endswith("shellgate hook")]
    assert len(ours) == 1
    if existing is not None:
        assert path.read_text().startswith("{\n    \"")  # its indentation kept
        for key in existing:
            if key != "hooks":
                assert data[key] == existing[key]
    for _ in range(2):
        done = subprocess.run([*run, "uninstall"], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    assert _settings(path) == (existing or {})


def test_install_never_rewrites_a_file_that_is_not_json(workspace: Path,
                                                        tmp_path: Path) -> None:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"permissions": {"allow": ["Bash"],}}  // a comment\n')
    before = path.read_text()
    done = subprocess.run([sys.executable, "-m", "gateway", "hook", "install"], cwd=workspace,
                          env=_env(tmp_path), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    assert path.read_text() == before
    assert not stat.S_ISLNK(path.lstat().st_mode)


def _answered(tmp_path: Path) -> list[dict[str, Any]]:
    events = []
    for path in sorted((tmp_path / "audit").glob("*.jsonl")):
        events += [json.loads(line) for line in path.read_text().splitlines() if line]
    return [e for e in events if e.get("event") == "hook.answered"]


def test_every_answer_the_hook_gives_is_in_the_audit_log_a_fallback_one_too(
        workspace: Path, tmp_path: Path) -> None:
    """The README promises every answer in the audit log. The hook's own
    answer (narrower than the gateway's decision) is logged with it; one
    the guard gave alone — here past a deadline too short for any
    judgement — waits beside the log and is logged, marked late, by the
    next call that judges."""
    env = _env(tmp_path)
    code, said = _hook(_call("Bash", {"command": "cat README.md"}, workspace), env)
    assert code == 0 and _decision(said) == "allow"
    [first] = _answered(tmp_path)
    assert (first["decision"], first["tool_name"]) == ("allow", "Bash")
    late_call = {**_call("Bash", {"command": "ls"}, workspace), "tool_use_id": "toolu_late"}
    code, said = _hook(late_call, {**env, "SHELLGATE_HOOK_TIMEOUT": "0.001"})
    assert code == 0 and _decision(said) == "ask"  # the fallback
    assert len(_answered(tmp_path)) == 1  # not logged yet: nothing judged
    _hook(_call("Bash", {"command": "npm test"}, workspace), env)
    answered = _answered(tmp_path)
    late = [e for e in answered if e.get("recorded_late")]
    assert [e["tool_use_id"] for e in late] == ["toolu_late"], answered
    assert late[0]["decision"] == "ask" and "deadline" in late[0]["reason"]
    assert answered[-1]["decision"] == "none"  # npm test: Claude Code decides


def test_an_answer_given_while_the_log_cannot_be_written_is_logged_once_it_can(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: with the log's directory unwritable (here a file
    where the directory should be), the judgement failed, the guard
    answered alone — and its answer, meant to wait beside the log, was
    lost. It waits in the user's private runtime directory instead, and
    the first call after the log is writable again logs it, marked late."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = _env(tmp_path, XDG_RUNTIME_DIR=str(runtime))
    (tmp_path / "audit").write_text("not a directory\n")
    broken = {**_call("Bash", {"command": "ls"}, workspace), "tool_use_id": "toolu_broken"}
    code, said = _hook(broken, env)
    assert code == 0 and _decision(said) == "ask"  # the guard's fallback
    (tmp_path / "audit").unlink()
    _hook(_call("Bash", {"command": "cat README.md"}, workspace), env)
    late = [e for e in _answered(tmp_path) if e.get("recorded_late")]
    assert [e["tool_use_id"] for e in late] == ["toolu_broken"], _answered(tmp_path)


def test_a_session_in_a_directory_every_user_shares_asks_and_says_why(tmp_path: Path) -> None:
    """The sandbox refuses /tmp as a writable root (other users' files are
    in it): a call there is asked about, and the reason names the refusal,
    not an internal error."""
    code, answer = _hook(_call("Write", {"file_path": "/tmp/x.txt", "content": "x"},
                               Path("/tmp")), _env(tmp_path))
    assert code == 0 and _decision(answer) == "ask"
    assert "every user shares" in _reason(answer)
    assert "internal error" not in _reason(answer)
