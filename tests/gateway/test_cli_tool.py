"""`shellgate tool`: one call through the whole pipeline, from a new process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _tool(*args: str, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELLGATE_AUDIT_LOG": str(cwd.parent / "audit")}
    done = subprocess.run([sys.executable, "-m", "gateway", "tool", *args, "--cwd", str(cwd)],
                          capture_output=True, input=stdin, timeout=60, check=False, env=env)
    return subprocess.CompletedProcess(done.args, done.returncode,
                                       done.stdout.decode("utf-8", "replace"),
                                       done.stderr.decode("utf-8", "replace"))


@pytest.mark.sandbox
def test_a_tool_call_prints_its_result_and_exits_0(workspace: Path) -> None:
    done = _tool("Bash", "--input", '{"command": "cat README.md"}', cwd=workspace)
    assert done.returncode == 0 and done.stdout == "hello\n"


@pytest.mark.sandbox
def test_json_prints_the_raw_tool_result_as_one_line(workspace: Path) -> None:
    done = _tool("Bash", "--json", "--input", '{"command": "ls"}', cwd=workspace)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["type"] == "tool_result" and result["is_error"] is False
    assert result["content"] == [{"type": "text", "text": "README.md"}]


@pytest.mark.parametrize("args", [
    ["Nope", "--input", "{}"],
    ["Bash", "--input", '{"command": 5}'],
    ["Bash", "--input", '{"command": "touch x"}'],
])
def test_an_error_result_is_still_a_result_exit_0(workspace: Path, args: list[str]) -> None:
    done = _tool(*args, "--json", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["is_error"] is True
    assert not (workspace / "x").exists()  # an ask with nobody at a terminal is a denial


@pytest.mark.parametrize(("raw", "says"), [
    (b'{"command": ', "not valid JSON"),
    (b"[1]", "must be a JSON object"),
    (b"", "not valid JSON"),
    (b'{"command": "\xff\xfe"}', "not valid"),
    (b"[" * 100_000, "not valid JSON"),
])
def test_malformed_input_is_a_usage_error_on_one_line(
        workspace: Path, raw: bytes, says: str) -> None:
    done = _tool("Bash", "--input", "-", cwd=workspace, stdin=raw)
    assert done.returncode == 2
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_missing_working_directory_is_a_usage_error(tmp_path: Path) -> None:
    done = _tool("Read", "--input", "{}", cwd=tmp_path / "missing")
    assert done.returncode == 2 and "not a directory" in done.stderr
