"""`shellgate tool` at a terminal (a real pseudo-terminal): a person answers
an ask, sees the whole call, and no model-given text drives the terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gateway.pathnames import answers_file

pytestmark = pytest.mark.sandbox


def _at_terminal(args: list[str], cwd: Path, answer: bytes | None) -> tuple[int, str]:
    """Run `shellgate tool ARGS` with a terminal on stdin, stdout and
    stderr; type ``answer`` once it asks. Returns the status and all that
    reached the terminal."""
    leader, follower = pty.openpty()
    env = {**os.environ, "SHELLGATE_AUDIT_LOG": str(cwd.parent / "audit"),
           "XDG_STATE_HOME": str(cwd.parent / "state")}
    proc = subprocess.Popen([sys.executable, "-m", "gateway", "tool", *args, "--cwd", str(cwd)],
                            stdin=follower, stdout=follower, stderr=follower, close_fds=True,
                            env=env)
    os.close(follower)
    seen, answered, deadline = b"", False, time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            seen += chunk
            if answer is not None and not answered and b"Allow this call once?" in seen:
                os.write(leader, answer)
                answered = True
        elif proc.poll() is not None:
            break
    status = proc.wait(timeout=30)
    os.close(leader)
    return status, seen.decode("utf-8", "replace")


def test_a_person_at_the_terminal_approves_an_ask_and_sees_the_whole_command(
        workspace: Path) -> None:
    tool_input = {"command": "touch approved", "description": "Run the unit tests"}
    status, screen = _at_terminal(["Bash", "--input", json.dumps(tool_input)], workspace, b"y\n")
    assert status == 0
    assert "command: touch approved" in screen  # the command itself, not only its description
    assert (workspace / "approved").exists()


def test_a_person_who_says_no_leaves_nothing_done(workspace: Path) -> None:
    status, screen = _at_terminal(["Bash", "--input", '{"command": "touch refused"}'],
                                  workspace, b"n\n")
    assert status == 0 and "Refused by the user" in screen
    assert not (workspace / "refused").exists()


def test_markup_and_control_characters_in_the_input_are_shown_never_obeyed(
        workspace: Path) -> None:
    tool_input = {"command": "touch x # [/] [bold]", "description": "ls[conceal] \x1b[8m"}
    status, screen = _at_terminal(["Bash", "--input", json.dumps(tool_input)], workspace, b"n\n")
    assert status == 0 and "Internal error" not in screen
    assert "[/] [bold]" in screen and "\\x1b[8m" in screen and "\x1b[8m" not in screen


def test_a_commands_escape_sequences_reach_the_terminal_made_visible(workspace: Path) -> None:
    (workspace / "evil.txt").write_text("\x1b]52;c;ZXZpbA==\x07\x1b[1A\x1b[2Kall tests passed\n")
    status, screen = _at_terminal(["Bash", "--input", '{"command": "cat evil.txt"}'],
                                  workspace, None)
    assert status == 0
    assert "\x1b]52" not in screen and "\\x1b]52;c;ZXZpbA==\\x07" in screen


def test_blank_lines_cannot_scroll_the_start_of_a_command_out_of_the_prompt(
        workspace: Path) -> None:
    command = "touch evil" + "\n" * 60 + "ls"
    status, screen = _at_terminal(["Bash", "--input", json.dumps({"command": command})],
                                  workspace, b"n\n")
    assert status == 0
    prompt = screen[screen.index("needs approval"):]
    assert "1 | touch evil" in prompt and "⟨59 blank lines⟩" in prompt and "61 | ls" in prompt
    assert prompt.count("\n") < 15


def test_always_saves_the_suggested_rule_and_the_next_session_needs_no_one(
        workspace: Path) -> None:
    status, screen = _at_terminal(["Bash", "--input", '{"command": "touch made"}'],
                                  workspace, b"a\n")
    assert status == 0 and "always" in screen and (workspace / "made").exists()
    env = {**os.environ, "SHELLGATE_AUDIT_LOG": str(workspace.parent / "audit"),
           "XDG_STATE_HOME": str(workspace.parent / "state")}
    saved = json.loads(Path(answers_file(str(workspace), env, "/nonexistent")).read_text())
    assert saved["permissions"]["allow"] == ["Bash(touch made)"]
    assert not (workspace / ".claude" / "settings.local.json").exists()
    (workspace / "made").unlink()
    done = subprocess.run([sys.executable, "-m", "gateway", "tool", "Bash", "--input",
                           '{"command": "touch made"}', "--cwd", str(workspace)],
                          capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode == 0 and (workspace / "made").exists(), done.stdout


def test_a_value_that_wraps_never_reaches_the_margin_where_the_gateway_speaks(
        workspace: Path) -> None:
    """From a review: a description of spaces, then `why: tests only`,
    wrapped onto a line of its own at the margin, where it read as the
    gateway's reason."""
    description = " " * 300 + "why: only the unit tests, nothing else"
    data = json.dumps({"command": "touch wrapped", "description": description})
    code, seen = _at_terminal(["Bash", "--input", data], workspace, b"n\n")
    assert code == 0
    lines = [line for line in seen.replace("\r", "").split("\n") if "only the unit tests" in line]
    assert lines and all(line.startswith("  ") for line in lines), lines
    assert not (workspace / "wrapped").exists()
