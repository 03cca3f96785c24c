"""The sink: where the log goes, what one line looks like, days, locking,
several writers at once, and failing closed."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from auditkit import T0, Clock, emit_call, lines_of, link

from gateway.audit import AuditError, FileAudit, audit_location, verify
from gateway.errors import GatewayError


@pytest.mark.parametrize(("flag", "env", "expected"), [
    ("/srv/a.jsonl", {"SHELLGATE_AUDIT_LOG": "/x", "XDG_STATE_HOME": "/s"}, "/srv/a.jsonl"),
    (None, {"SHELLGATE_AUDIT_LOG": "/x/log", "XDG_STATE_HOME": "/s"}, "/x/log"),
    (None, {"SHELLGATE_AUDIT_LOG": "", "XDG_STATE_HOME": "/s"}, "/s/shellgate/audit"),
    (None, {"HOME": "/home/u"}, "/home/u/.local/state/shellgate/audit"),
    (None, {"HOME": "/home/u", "XDG_STATE_HOME": "relative"},
     "/home/u/.local/state/shellgate/audit"),
])
def test_the_location_is_the_flag_then_the_environment_then_xdg(
        flag: str | None, env: dict[str, str], expected: str) -> None:
    assert audit_location(flag, env) == Path(expected)


def test_a_line_has_ts_and_event_first_the_ids_then_the_fields_then_the_link(
        tmp_path: Path) -> None:
    audit = FileAudit(tmp_path / "a.jsonl", clock=Clock())
    audit.emit("permission.decided", tool="Bash", tool_use_id="toolu_1", call_id="c1",
               session_id="s1", decision="deny", checks=(3, 7), prev="forged", ts="forged")
    audit.emit("settings.loaded", session_id="s1", call_id=None, sources=["user"],
               problems=[])
    first, second = lines_of(tmp_path / "a.jsonl")
    record = json.loads(first)
    assert list(record) == ["ts", "event", "session_id", "call_id", "tool_use_id", "tool",
                            "decision", "checks", "prev_", "ts_", "chain", "prev"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", record["ts"])
    assert record["prev"] == "0" * 64 and record["chain"] == "sha256"
    assert first.startswith(b'{"ts":') and b", " not in first  # compact
    assert list(json.loads(second))[:3] == ["ts", "event", "session_id"]  # no call_id: null
    assert json.loads(second)["prev"] == link(first, "sha256", None)


def test_every_string_is_redacted_before_it_is_written(tmp_path: Path) -> None:
    audit = FileAudit(tmp_path / "a.jsonl")
    audit.emit("tool.requested", tool="Bash",
               input={"command": "curl -u x https://bob:hunter2@h -H 'Authorization: Bearer t0k'"},
               env={"GITHUB_TOKEN": "ghp_plain"})
    data = (tmp_path / "a.jsonl").read_text()
    assert "hunter2" not in data and "t0k" not in data and "ghp_plain" not in data


def test_the_directory_is_private_and_the_files_too(tmp_path: Path) -> None:
    root = tmp_path / "state" / "audit"
    audit = FileAudit(root)
    assert audit.root == root
    audit.emit("tool.requested")
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for path in root.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    names = sorted(p.name for p in root.iterdir())
    assert names[0] == ".lock" and len(names) == 2 and names[1].endswith(".jsonl")


def test_a_jsonl_path_is_one_file_that_never_rotates(tmp_path: Path) -> None:
    clock = Clock()
    audit = FileAudit(tmp_path / "one.jsonl", clock=clock)
    audit.emit("a")
    clock.set(T0 + timedelta(days=3))
    audit.emit("b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.jsonl"]
    assert verify([tmp_path / "one.jsonl"]).status == 0


def test_each_day_has_its_file_and_its_first_line_links_to_the_day_before(
        tmp_path: Path) -> None:
    clock = Clock()
    audit = FileAudit(tmp_path, clock=clock)
    audit.emit("day.one")
    clock.set(T0 + timedelta(days=1))
    audit.emit("day.two")
    one, two = sorted(tmp_path.glob("*.jsonl"))
    assert (one.name, two.name) == ("2025-05-01.jsonl", "2025-05-02.jsonl")
    assert json.loads(lines_of(two)[0])["prev"] == link(lines_of(one)[-1], "sha256", None)


def test_a_writer_whose_clock_is_behind_appends_to_the_newest_day(tmp_path: Path) -> None:
    clock = Clock(T0 + timedelta(days=1))
    FileAudit(tmp_path, clock=clock).emit("from.the.future")
    late = FileAudit(tmp_path, clock=Clock(T0))
    late.emit("from.the.past")
    assert [p.name for p in tmp_path.glob("*.jsonl")] == ["2025-05-02.jsonl"]
    assert verify(sorted(tmp_path.glob("*.jsonl"))).status == 0


def test_an_empty_newest_file_is_skipped_for_the_link(tmp_path: Path) -> None:
    clock = Clock()
    audit = FileAudit(tmp_path, clock=clock)
    audit.emit("day.one")
    (tmp_path / "2025-05-02.jsonl").touch(mode=0o600)  # a crash right after creating it
    clock.set(T0 + timedelta(days=1))
    audit.emit("day.two")
    assert verify(sorted(tmp_path.glob("*.jsonl"))).status == 0


def test_a_partial_line_in_yesterdays_file_is_linked_as_it_is(tmp_path: Path) -> None:
    clock = Clock()
    audit = FileAudit(tmp_path, clock=clock)
    audit.emit("day.one")
    with (tmp_path / "2025-05-01.jsonl").open("ab") as handle:
        handle.write(b'{"ts":"cut')
    clock.set(T0 + timedelta(days=1))
    audit.emit("day.two")
    result = verify(sorted(tmp_path.glob("*.jsonl")))
    assert [(p.path.name, p.line) for p in result.problems] == [("2025-05-01.jsonl", 2)]


_WRITER = """
import sys, threading
from gateway.audit import FileAudit
audit = FileAudit(sys.argv[1])
def run(t):
    for n in range(int(sys.argv[3])):
        audit.emit("tool.requested", session_id=sys.argv[2], call_id=f"{t}-{n}", tool="Bash",
                   input={"command": "echo " + "x" * n})
threads = [threading.Thread(target=run, args=(t,)) for t in range(3)]
for t in threads: t.start()
for t in threads: t.join()
"""


def test_processes_and_threads_writing_at_once_keep_one_chain(tmp_path: Path) -> None:
    root = tmp_path / "audit"
    per_thread, processes = 30, 4
    children = [subprocess.Popen([sys.executable, "-c", _WRITER, str(root), f"p{i}",
                                  str(per_thread)]) for i in range(processes)]
    local = FileAudit(root)

    def here(t: int) -> None:
        for n in range(per_thread):
            local.emit("tool.requested", session_id="parent", call_id=f"{t}-{n}")

    threads = [threading.Thread(target=here, args=(t,)) for t in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(child.wait(timeout=60) == 0 for child in children)
    files = sorted(root.glob("*.jsonl"))
    result = verify(files)
    assert result.status == 0, [str(p) for p in result.problems]
    assert result.lines == (processes + 1) * 3 * per_thread


def test_a_directory_that_cannot_be_made_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(AuditError) as caught:
        FileAudit(tmp_path / "file" / "audit")
    assert isinstance(caught.value, GatewayError)
    assert "\n" not in str(caught.value)


def test_a_full_disk_fails_closed(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    (tmp_path / "full.jsonl").symlink_to("/dev/full")
    audit = FileAudit(tmp_path / "full.jsonl")
    with pytest.raises(AuditError, match="No space left on device"):
        audit.emit("tool.requested", tool="Bash")


def test_a_daily_file_replaced_by_a_symlink_is_refused(tmp_path: Path) -> None:
    clock = Clock()
    audit = FileAudit(tmp_path, clock=clock)
    target = tmp_path.parent / f"{tmp_path.name}-victim"
    target.write_text("")
    (tmp_path / "2025-05-01.jsonl").symlink_to(target)
    with pytest.raises(AuditError):
        audit.emit("tool.requested")
    assert target.read_text() == ""


def test_a_log_directory_removed_under_a_running_session_is_made_again(tmp_path: Path) -> None:
    root = tmp_path / "audit"
    audit = FileAudit(root, clock=Clock())
    emit_call(audit, 1)
    for path in root.iterdir():
        path.unlink()
    root.rmdir()
    emit_call(audit, 2)
    assert verify(sorted(root.glob("*.jsonl"))).status == 0


def test_the_sink_prints_nothing(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    audit = FileAudit(tmp_path / "a.jsonl", key=b"k")
    for n in range(3):
        emit_call(audit, n)
    assert capfd.readouterr() == ("", "")


def test_a_writer_that_holds_the_lock_too_long_fails_the_others_closed(tmp_path: Path) -> None:
    import fcntl

    audit = FileAudit(tmp_path, lock_timeout=0.2)
    audit.emit("first")
    with (tmp_path / ".lock").open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a writer stopped mid-append
        with pytest.raises(AuditError, match="locked by another writer"):
            audit.emit("second")
    audit.emit("third")
    assert verify(sorted(tmp_path.glob("*.jsonl"))).lines == 2
