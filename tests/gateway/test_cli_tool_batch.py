"""`shellgate tool --batch`: calls one after another through one session,
from a new process — what one call leaves, the next sees; and `shellgate
trust`, which lets a workspace run its repository's own hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _shellgate(*args: str, cwd: Path, stdin: bytes = b"",
               home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELLGATE_AUDIT_LOG": str(cwd.parent / "audit")}
    if home is not None:
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    done = subprocess.run([sys.executable, "-m", "gateway", *args],
                          capture_output=True, input=stdin, timeout=120, check=False, env=env,
                          cwd=cwd)
    return subprocess.CompletedProcess(done.args, done.returncode,
                                       done.stdout.decode("utf-8", "replace"),
                                       done.stderr.decode("utf-8", "replace"))


def _batch(calls: list[dict[str, object]], cwd: Path, *extra: str,
           home: Path | None = None) -> list[dict[str, object]]:
    lines = "\n".join(json.dumps(c) for c in calls).encode()
    done = _shellgate("tool", "--batch", "-", "--json", "--cwd", str(cwd), *extra, cwd=cwd,
                      stdin=lines, home=home)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _text(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return "\n".join(str(b.get("text", "")) for b in content)


@pytest.mark.sandbox
def test_a_batch_runs_in_one_session_so_a_cd_holds_for_the_next_call(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inner.txt").write_text("inside\n")
    results = _batch([{"name": "Bash", "input": {"command": "cd sub"}},
                      {"name": "Bash", "input": {"command": "cat inner.txt"}}], workspace)
    assert len(results) == 2 and "inside" in _text(results[1])


@pytest.mark.sandbox
def test_a_background_task_a_batch_started_ends_with_the_batch(workspace: Path) -> None:
    import psutil

    results = _batch([{"name": "Bash", "input": {"command": "sleep 347.25",
                                                 "run_in_background": True}},
                      {"name": "Bash", "input": {"command": "sleep 1; echo later"}}], workspace)
    assert "TaskOutput" in _text(results[0]) and "later" in _text(results[1])
    left = [p for p in psutil.process_iter(["cmdline"])
            if p.info["cmdline"] == ["sleep", "347.25"]]
    assert not left


def test_plan_mode_holds_across_a_batch(workspace: Path) -> None:
    results = _batch([{"name": "EnterPlanMode", "input": {}},
                      {"name": "Write", "input": {"file_path": str(workspace / "x.txt"),
                                                  "content": "x"}},
                      {"name": "TodoWrite", "input": {"todos": [
                          {"content": "plan", "status": "in_progress",
                           "activeForm": "Planning"}]}}], workspace)
    assert [r["is_error"] for r in results] == [False, True, False]
    assert "plan mode" in _text(results[1]).lower()
    assert not (workspace / "x.txt").exists()


@pytest.mark.parametrize(("stdin", "error"), [
    (b"", "no calls"),
    (b"not json\n", "line 1 is not valid JSON"),
    (b'{"input": {}}\n', "\"name\""),
    (b'{"name": "Bash", "input": []}\n', "\"input\" must be a JSON object"),
    (b'{"name": "Bash", "input": {}, "x": 1}\n', "unknown keys"),
    (b"\xff\n", "not valid UTF-8"),
])
def test_a_malformed_batch_is_one_line_and_runs_nothing(workspace: Path, stdin: bytes,
                                                        error: str) -> None:
    done = _shellgate("tool", "--batch", "-", "--cwd", str(workspace), cwd=workspace,
                      stdin=stdin)
    assert done.returncode == 2 and error in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_batch_and_a_single_call_do_not_mix(workspace: Path) -> None:
    done = _shellgate("tool", "Bash", "--batch", "-", "--cwd", str(workspace), cwd=workspace)
    assert done.returncode == 2 and "--batch takes its calls" in done.stderr


def test_trust_records_a_workspace_outside_it_and_its_hooks_then_run(
        workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    marker = tmp_path / "hook-ran"
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}}))
    read = [{"name": "Read", "input": {"file_path": str(workspace / "README.md")}}]
    lines = "\n".join(json.dumps(c) for c in read).encode()
    first = _shellgate("tool", "--batch", "-", "--cwd", str(workspace), cwd=workspace,
                       stdin=lines, home=home)
    assert first.returncode == 0 and "not trusted" in first.stderr and not marker.exists()
    done = _shellgate("trust", str(workspace), cwd=workspace, home=home)
    assert done.returncode == 0 and "trusted" in done.stdout
    assert json.loads((home / ".config" / "shellgate" / "trusted.json").read_text()) == {
        "trusted": [str(workspace.resolve())]}
    listed = _shellgate("trust", "--list", cwd=workspace, home=home)
    assert listed.stdout.splitlines() == [str(workspace.resolve())]
    _shellgate("tool", "--batch", "-", "--cwd", str(workspace), cwd=workspace, stdin=lines,
               home=home)
    assert marker.exists()
    removed = _shellgate("trust", "--remove", str(workspace), cwd=workspace, home=home)
    assert "no longer trusted" in removed.stdout
    assert _shellgate("trust", "--list", cwd=workspace, home=home).stdout == ""


@pytest.mark.sandbox
def test_a_hooks_continue_false_stops_the_rest_of_the_batch(workspace: Path,
                                                            tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PostToolUse": [{
        "matcher": "Read", "hooks": [{"type": "command", "command": "cat > /dev/null; echo "
                                      "'{\"continue\": false, \"stopReason\": \"enough\"}'"}]}]}}))
    results = _batch([{"name": "Read", "input": {"file_path": str(workspace / "README.md")}},
                      {"name": "Bash", "input": {"command": "echo still-running"}}],
                     workspace, home=home)
    assert "enough" in _text(results[0])
    assert results[1]["is_error"] and "stopped by a hook" in _text(results[1])
    assert "still-running" not in _text(results[1])
