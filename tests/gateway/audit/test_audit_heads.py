"""The chain's recorded head: `shellgate audit verify` fails a log that no
longer ends where its writer last recorded — lines cut off the end still
chain, so the chain alone said ok."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from auditkit import T0, Clock, lines_of, link, write_lines

from gateway.audit import FileAudit, heads_dir, read_head
from gateway.cli import main


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The state directory (and with it the recorded heads) of this test."""
    monkeypatch.delenv("SHELLGATE_AUDIT_KEY", raising=False)
    monkeypatch.delenv("SHELLGATE_AUDIT_LOG", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def _verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(["audit", "verify", *argv])
    out, _ = capsys.readouterr()
    return status, out


def _daily(tmp_path: Path, days: int = 2, per_day: int = 4) -> Path:
    """A directory log of ``days`` daily files."""
    root = tmp_path / "audit"
    clock = Clock()
    audit = FileAudit(root, clock=clock)
    for day in range(days):
        clock.set(T0 + timedelta(days=day))
        for n in range(per_day):
            audit.emit("tool.requested", session_id="s1", call_id=f"d{day}-{n}", tool="Bash",
                       input={"command": f"echo {n}"})
    return root


def _single(tmp_path: Path) -> Path:
    path = tmp_path / "log.jsonl"
    audit = FileAudit(path, clock=Clock())
    for n in range(6):
        audit.emit("tool.requested", session_id="s1", call_id=f"c{n}", input={"n": n})
    return path


def _newest(log: Path) -> Path:
    return log if log.is_file() else sorted(log.glob("*.jsonl"))[-1]


def _cut_last_line(log: Path) -> None:
    path = _newest(log)
    write_lines(path, lines_of(path)[:-1])


def _truncate_mid_line(log: Path) -> None:
    path = _newest(log)
    os.truncate(path, path.stat().st_size - 10)


def _delete_newest_day(log: Path) -> None:
    _newest(log).unlink()


def _append_forged_line(log: Path) -> None:
    """A line chained by hand to the last one: the chain still holds."""
    path = _newest(log)
    lines = lines_of(path)
    record = {"ts": "2025-05-02T10:00:00.000000Z", "event": "tool.requested", "chain": "sha256",
              "prev": link(lines[-1], "sha256", None)}
    write_lines(path, [*lines, json.dumps(record, separators=(",", ":")).encode()])


def _rewrite_last_line(log: Path) -> None:
    """The last line replaced by one that chains to the line before it."""
    path = _newest(log)
    lines = lines_of(path)
    record = json.loads(lines[-1])
    record["input"] = {"command": "ls"}
    write_lines(path, [*lines[:-1], json.dumps(record, separators=(",", ":")).encode()])


CUTS: dict[str, Callable[[Path], None]] = {
    "the last line cut off": _cut_last_line,
    "the file truncated in its last line": _truncate_mid_line,
    "a line chained by hand appended": _append_forged_line,
    "the last line rewritten": _rewrite_last_line,
}


@pytest.mark.parametrize("make", [_daily, _single], ids=["daily files", "one file"])
@pytest.mark.parametrize("cut", list(CUTS), ids=list(CUTS))
def test_a_log_changed_at_its_end_fails_verify_though_its_chain_may_hold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], Path],
        cut: str) -> None:
    log = make(tmp_path)
    assert _verify(capsys, str(log))[0] == 0  # control: intact, it verifies
    CUTS[cut](log)
    status, out = _verify(capsys, str(log))
    assert status == 1, out
    assert "recorded head" in out


def test_the_last_lines_cut_off_still_chain_without_the_head(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Why the head: the chain alone says ok to a cut tail."""
    log = _daily(tmp_path)
    _cut_last_line(log)
    status, out = _verify(capsys, str(log), "--no-head")
    assert status == 0, out


def test_deleting_the_newest_day_fails_verify(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _daily(tmp_path, days=3)
    _delete_newest_day(log)
    status, out = _verify(capsys, str(log))
    assert status == 1
    assert "the file holding the recorded head, is missing" in out


def test_the_log_in_use_is_checked_against_its_head_by_default(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, _state: Path) -> None:
    log = _state / "shellgate" / "audit"
    audit = FileAudit(log, clock=Clock())
    for n in range(3):
        audit.emit("tool.requested", call_id=f"c{n}")
    assert _verify(capsys)[0] == 0
    _cut_last_line(log)
    status, out = _verify(capsys)
    assert status == 1 and "cut off the end" in out


def test_a_log_with_lines_and_no_recorded_head_fails_and_no_head_checks_the_chain_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _daily(tmp_path)
    copy = tmp_path / "copied"
    copy.mkdir()
    for path in log.glob("*.jsonl"):
        (copy / path.name).write_bytes(path.read_bytes())
    status, out = _verify(capsys, str(copy))
    assert status == 1 and "no head is recorded" in out and "--no-head" in out
    assert _verify(capsys, str(copy), "--no-head")[0] == 0


def test_an_empty_log_needs_no_head(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert _verify(capsys, str(tmp_path / "empty"))[0] == 0


def test_a_daily_file_given_alone_is_held_to_its_directorys_head(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _daily(tmp_path, days=2)
    first, last = sorted(log.glob("*.jsonl"))
    assert _verify(capsys, str(last))[0] == 0
    status, out = _verify(capsys, str(first))
    assert status == 0 and "a later file not given" in out
    _cut_last_line(log)
    assert _verify(capsys, str(last))[0] == 1


def test_the_head_is_recorded_in_the_state_directory_not_beside_the_log(
        tmp_path: Path, _state: Path) -> None:
    log = _daily(tmp_path, days=1)
    head = read_head(heads_dir(os.environ), Path(os.path.realpath(log)))
    assert head is not None
    newest = _newest(log)
    assert (head.file, head.size) == (newest.name, newest.stat().st_size)
    assert heads_dir(os.environ) == _state / "shellgate" / "audit-heads"
    assert [p.name for p in log.iterdir() if not p.name.endswith(".jsonl")] == [".lock"]


def test_a_head_that_cannot_be_recorded_fails_the_append_closed(tmp_path: Path) -> None:
    from gateway.audit import AuditError

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    audit = FileAudit(tmp_path / "audit", heads=blocker / "heads")
    with pytest.raises(AuditError, match="cannot record the audit log's head"):
        audit.emit("tool.requested")


def test_records_of_logs_that_are_gone_are_pruned_when_a_new_one_is_made(
        tmp_path: Path) -> None:
    heads = tmp_path / "heads"
    FileAudit(tmp_path / "a", heads=heads).emit("x")
    (tmp_path / "a" / ".lock").unlink()
    for path in (tmp_path / "a").iterdir():
        path.unlink()
    (tmp_path / "a").rmdir()
    FileAudit(tmp_path / "b", heads=heads).emit("x")
    assert [read_head(heads, tmp_path / n) is not None for n in "ab"] == [False, True]


_WRITER = """
import sys, threading
from gateway.audit import FileAudit
audit = FileAudit(sys.argv[1])
def run(t):
    for n in range(20):
        audit.emit("tool.requested", session_id=sys.argv[2], call_id=f"{t}-{n}")
threads = [threading.Thread(target=run, args=(t,)) for t in range(3)]
for t in threads: t.start()
for t in threads: t.join()
"""


@pytest.mark.parametrize("name", ["audit", "log.jsonl"])
def test_writers_in_many_processes_and_threads_leave_the_head_at_the_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    log = tmp_path / name
    children = [subprocess.Popen([sys.executable, "-c", _WRITER, str(log), f"p{i}"],
                                 env=dict(os.environ)) for i in range(3)]
    local = FileAudit(log)
    threads = [threading.Thread(target=lambda: [local.emit("here") for _ in range(20)])
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(child.wait(timeout=60) == 0 for child in children)
    status, out = _verify(capsys, str(log))
    assert status == 0, out
    assert "220 lines" in out
