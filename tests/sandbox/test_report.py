"""The ``shellgate:`` lines of a run (sandbox.report): how it ended, then
every report and problem, each line inert on a terminal."""

from __future__ import annotations

import time
from pathlib import Path

import pyte
import pytest

from sandbox import TERMINAL_RESET, ExecResult, RunFailed, load_profile, report_lines, run, shown


def _result(**fields: object) -> ExecResult:
    base: dict[str, object] = {"exit_code": 0, "signal": None, "stdout": b"", "stderr": b"",
                               "timed_out": False, "truncated": False, "duration": 1.25}
    return ExecResult(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "expected"), [
    ("plain /path/x.pth", "plain /path/x.pth"),
    ("a\rb", "a\\x0db"),
    ("erase\x1b[2K", "erase\\x1b[2K"),
    ("osc\x1b]0;title", "osc\\x1b]0;title"),
    ("line\nforged", "line\\x0aforged"),
    ("tab\tand del\x7f", "tab\\x09and del\\x7f"),
    ("c1 csi \x9b", "c1 csi \\x9b"),
    ("not utf-8 \udcff", "not utf-8 \\xff"),
    ("bidi \u202egnp.txt", "bidi \\u202egnp.txt"),
    ("line separator \u2028", "line separator \\u2028"),
    ("zero width \u200b", "zero width \\u200b"),
    ("kept: é ü 日本", "kept: é ü 日本"),
])
def test_a_line_is_made_inert_character_by_character(text: str, expected: str) -> None:
    assert shown(text) == expected


@pytest.mark.parametrize(("fields", "first"), [
    ({"timed_out": True, "killed_reason": "wall timeout of 1s"},
     "timed out after 1.2s; process tree killed"),
    ({"exit_code": 137, "killed_reason": "memory limit of 96 MiB reached"},
     "killed: memory limit of 96 MiB reached"),
    ({"exit_code": None, "signal": 9}, None),
    ({"exit_code": 3}, None),
])
def test_the_reports_follow_how_the_run_ended_on_every_ending(
        fields: dict[str, object], first: str | None) -> None:
    result = _result(**fields, reports=("CLAUDE.md was changed\x1b]0;",),
                     problems=("cannot check x",))
    lines = report_lines(result)
    assert lines[-2:] == ("CLAUDE.md was changed\\x1b]0;", "warning: cannot check x")
    assert lines[:-2] == ((first,) if first else ())
    assert report_lines(result, ending=False) == lines[-2:]


def test_the_terminal_reset_ends_whatever_sequence_the_output_left_open() -> None:
    for unfinished in ("\x1b]0;title", "\x1b[", "\x1bP", "\x1b[8m"):
        screen = pyte.Screen(80, 4)
        screen.set_mode(pyte.modes.LNM)
        pyte.Stream(screen).feed(f"done{unfinished}{TERMINAL_RESET}\nshellgate: seen\n")
        assert "shellgate: seen" in [line.rstrip() for line in screen.display], unfinished


@pytest.mark.sandbox
def test_a_run_shellgate_fails_in_keeps_what_the_guards_found(tmp_path: Path) -> None:
    """A bug of shellgate's once the command started (here: the output
    listener raising) stops the command, still runs the post-run guards,
    and raises RunFailed carrying their reports."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "CLAUDE.md").write_text("mine\n")

    def broken(_stream: str, _data: bytes) -> None:
        raise RuntimeError("listener bug")

    script = "echo obey >> CLAUDE.md; echo out; sleep 5; touch late"
    with pytest.raises(RunFailed) as caught:
        run(["sh", "-c", script], load_profile(None), cwd=str(workspace), on_output=broken)
    assert "obey" in (workspace / "CLAUDE.md").read_text()  # the control: it ran
    assert "listener bug" in str(caught.value)
    assert f"{workspace / 'CLAUDE.md'} was changed during the run: review it" in \
        caught.value.result.reports
    time.sleep(0.5)
    assert not (workspace / "late").exists()  # the command was stopped
