"""`shellgate audit` end to end through the real command line: the table,
JSON lines, filters, the summary, verify's exit status, and log text that
never drives the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from auditkit import KEY, Clock, emit_call, lines_of, write_lines

from gateway.audit import FileAudit
from gateway.audit.lines import MAX_LINE_BYTES
from gateway.cli import main

HOSTILE = "echo \x1b]52;c;ZXZpbA==\x07 [bold red]pwned[/bold red] \u202eexe.txt"


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHELLGATE_AUDIT_KEY", raising=False)
    monkeypatch.delenv("SHELLGATE_AUDIT_LOG", raising=False)
    # the table as a wide terminal shows it, wherever the suite runs (with
    # no terminal, rich would squeeze it to 80 columns)
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def log(tmp_path: Path) -> Path:
    root = tmp_path / "audit"
    audit = FileAudit(root, clock=Clock())
    emit_call(audit, 1, tool_input={"command": "git status"})
    emit_call(audit, 2, tool_input={"command": "rm -rf build"}, decision="deny",
              source="project", rule="Bash(rm:*)", checks=(12,), reason="destructive")
    emit_call(audit, 3, tool="Write", tool_input={"file_path": "/w/a.py", "content": "x"},
              decision="ask", source="default", reason="writes outside")
    emit_call(audit, 4, tool_input={"command": HOSTILE}, decision="deny", source="analyzer",
              reason=HOSTILE)
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["audit", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_table_shows_one_row_per_decision_with_its_input_and_outcome(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, str(log))
    assert status == 0
    for text in ("git status", "allow", "ok (exit 0)", "rm -rf build", "Bash(rm:*)",
                 "destructive", "/w/a.py", "ask", "sess0001"):
        assert text in out


def test_json_prints_the_matching_events_as_lines(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, str(log), "--json", "--decision", "deny", "--tool", "bash")
    assert status == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert {r["call_id"] for r in records} == {"call0002", "call0004"}
    assert {r["event"] for r in records} == {"tool.requested", "tool.validated",
                                             "permission.decided"}


@pytest.mark.parametrize(("options", "shown", "hidden"), [
    (["--decision", "ask"], "/w/a.py", "git status"),
    (["--rule", "Bash(rm:*)"], "rm -rf build", "git status"),
    (["--tool", "Write"], "/w/a.py", "rm -rf build"),
    (["--session", "nobody"], "no decisions match", "git status"),
    (["--since", "2999-01-01"], "no decisions match", "git status"),
])
def test_the_filters_narrow_the_table(log: Path, capsys: pytest.CaptureFixture[str],
                                      options: list[str], shown: str, hidden: str) -> None:
    status, out, _ = _run(capsys, str(log), *options)
    assert status == 0 and shown in out and hidden not in out


def test_the_summary_is_tables_or_one_json_object(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "summary", str(log))
    assert status == 0 and "denied commands" in out and "rm -rf" in out
    status, out, _ = _run(capsys, "summary", str(log), "--json")
    summary = json.loads(out)
    assert summary["by_decision"] == {"deny": 2, "allow": 1, "ask": 1}
    assert summary["by_check"] == {"12": 1}


def test_verify_prints_the_head_and_exits_0(log: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "verify", str(log))
    assert status == 0 and out.startswith("ok: 14 lines in 1 file")
    head = out.split("head: ")[1].split()[0]
    status, out, _ = _run(capsys, "verify", str(log), "--expect-head", head, "--json")
    assert status == 0 and json.loads(out)["head"] == head


def test_verify_reports_the_broken_line_and_exits_1(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = next(log.glob("*.jsonl"))
    lines = lines_of(path)
    lines[5] = lines[5].replace(b"rm -rf build", b"ls")
    write_lines(path, lines)
    status, out, _ = _run(capsys, "verify", str(log))
    assert status == 1
    assert out.splitlines()[0].startswith(f"{path}:7: prev does not match line 6")
    status, out, _ = _run(capsys, "verify", str(log), "--json")
    assert status == 1 and json.loads(out)["problems"][0]["line"] == 7


def test_verify_of_a_keyed_log_without_the_key_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "k.jsonl"
    audit = FileAudit(path, key=KEY)
    emit_call(audit, 1)
    status, out, _ = _run(capsys, "verify", str(path))
    assert status == 2 and "needs SHELLGATE_AUDIT_KEY" in out
    monkeypatch.setenv("SHELLGATE_AUDIT_KEY", KEY.decode())
    assert _run(capsys, "verify", str(path))[0] == 0


def test_without_a_path_the_log_in_use_is_read(
        log: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_AUDIT_LOG", str(log))
    status, out, _ = _run(capsys, "verify")
    assert status == 0 and "14 lines" in out


@pytest.mark.parametrize(("argv", "says"), [
    (["/no/such/log"], "no audit log at /no/such/log"),
    (["verify", "X", "--decision", "deny"], "do not apply"),
    (["summary", "X", "--expect-head", "ab"], "--expect-head goes with verify"),
    (["X", "--since", "yesterday"], "--since 'yesterday'"),
])
def test_usage_errors_exit_2_with_one_line(
        argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, *argv)
    assert status == 2 and says in err and err.count("\n") == 1


def test_an_empty_default_location_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    status, _, err = _run(capsys)
    assert status == 2 and "no audit log at" in err


@pytest.mark.parametrize("argv", [["LOG"], ["summary", "LOG"], ["LOG", "--json"]])
def test_log_text_never_reaches_the_terminal_as_control_or_markup(
        log: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    argv = [str(log) if word == "LOG" else word for word in argv]
    status, out, _ = _run(capsys, *argv)
    assert status == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    if "--json" in argv:
        assert "\\u202e" in out and "\\u001b" in out
        assert any(json.loads(line).get("input", {}).get("command") == HOSTILE
                   for line in out.splitlines())
    elif "summary" not in argv:
        # shown as typed (rich wraps the cell between "[bold" and "red]")
        assert "\\x1b]52;c;ZXZpbA==\\x07" in out and "red]pwned[/bold red]" in out


def test_a_malformed_line_is_skipped_with_a_note_on_stderr(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = next(log.glob("*.jsonl"))
    with path.open("ab") as handle:
        handle.write(b"\x1b[2Jgarbage\n")
    status, out, err = _run(capsys, str(log))
    assert status == 0 and "git status" in out
    assert ":15: skipped: not a JSON line" in err


def _reader(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gateway", *argv], capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.parametrize("verb", [["audit"], ["audit", "verify"]])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_log_that_is_no_regular_file_is_refused_at_once(
        tmp_path: Path, verb: list[str], kind: str) -> None:
    """From a review: given a FIFO both readers waited for ever; given
    /dev/zero they died of MemoryError. Each says in one line what it was
    given, at once."""
    if kind == "fifo":
        target = tmp_path / "audit.jsonl"
        os.mkfifo(target)
    else:
        target = Path("/dev/zero")
    done = _reader([*verb, str(target)])
    assert done.returncode != 0
    assert "not a regular file" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_an_over_long_line_is_reported_and_breaks_the_chain_without_being_held(
        log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line past the cap is never read whole: the table notes it and
    verify reports it — and the line after it, whose link cannot match."""
    [current] = sorted(log.glob("*.jsonl"))
    lines = current.read_bytes().splitlines(keepends=True)
    current.write_bytes(lines[0] + b"x" * (MAX_LINE_BYTES + 10) + b"\n" + b"".join(lines[1:]))
    status, out, _ = _run(capsys, "verify", str(log))
    assert status == 1
    assert "longer than" in out
    status, out, err = _run(capsys, str(log))
    assert status == 0 and "longer than" in err + out
