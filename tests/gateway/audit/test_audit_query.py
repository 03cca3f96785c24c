"""Reading the log back: since, filters by call, the decision table's joins,
the summary's counts, and malformed lines that never crash a reader."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from auditkit import Clock, emit_call

from gateway.audit import (
    FileAudit,
    Filter,
    command_prefix,
    decision_rows,
    log_files,
    parse_since,
    read_entries,
    select,
    summarize,
)

NOW = datetime(2025, 5, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("30m", NOW - timedelta(minutes=30)),
    ("2h", NOW - timedelta(hours=2)),
    ("7d", NOW - timedelta(days=7)),
    ("1w", NOW - timedelta(weeks=1)),
    ("2025-05-01T10:00:00Z", datetime(2025, 5, 1, 10, 0, tzinfo=UTC)),
    ("2025-05-01T12:00:00+02:00", datetime(2025, 5, 1, 10, 0, tzinfo=UTC)),
])
def test_since_is_relative_or_an_iso_time(text: str, expected: datetime) -> None:
    assert parse_since(text, NOW) == expected


def test_since_without_a_zone_is_local_time() -> None:
    assert parse_since("2025-05-01") == datetime(2025, 5, 1).astimezone(UTC)


@pytest.mark.parametrize("text", ["yesterday", "5 parsecs", "2025-13-01", ""])
def test_since_that_is_no_time_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_since(text, NOW)


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    clock = Clock()
    audit = FileAudit(tmp_path / "a.jsonl", clock=clock)
    emit_call(audit, 1, tool_input={"command": "ls -la"})
    emit_call(audit, 2, tool_input={"command": "FOO=1 rm -rf /tmp/x"}, decision="deny",
              source="project", rule="Bash(rm:*)", checks=(9, 12), reason="destructive")
    clock.now += timedelta(hours=3)
    emit_call(audit, 3, tool="Read", tool_input={"file_path": "/etc/passwd"}, decision="ask",
              source="analyzer", checks=(12,), session="sess0002bbbb")
    emit_call(audit, 4, tool_input={"command": "rm -f y"}, decision="deny", source="project",
              rule="Bash(rm:*)", session="sess0002bbbb")
    audit.emit("permission.decided", tool="Bash", decision="deny", source="hook",
               subject=["git push --force origin main"])  # a decision with no request
    return [e.record for e in read_entries([tmp_path / "a.jsonl"]) if e.record is not None]


def _calls(records: list[dict[str, Any]]) -> set[str]:
    return {r["call_id"] for r in records if "call_id" in r}


@pytest.mark.parametrize(("flt", "calls"), [
    (Filter(), {"call0001", "call0002", "call0003", "call0004"}),
    (Filter(decision="deny"), {"call0002", "call0004"}),
    (Filter(decision="ask"), {"call0003"}),
    (Filter(tool="read"), {"call0003"}),
    (Filter(rule="Bash(rm:*)"), {"call0002", "call0004"}),
    (Filter(session="sess0002"), {"call0003", "call0004"}),
    (Filter(since=datetime(2025, 5, 1, 12, 0, tzinfo=UTC)), {"call0003", "call0004"}),
    (Filter(decision="deny", session="sess0001"), {"call0002"}),
])
def test_a_filter_selects_whole_calls(tmp_path: Path, flt: Filter, calls: set[str]) -> None:
    chosen = select(_records(tmp_path), flt)
    assert _calls(chosen) == calls
    if flt.decision:  # the request and the outcome come with the decision
        assert {r["event"] for r in chosen if r.get("call_id") == min(calls)} >= \
            {"tool.requested", "permission.decided"}


def test_a_decision_row_joins_the_request_and_the_outcome(tmp_path: Path) -> None:
    rows = decision_rows(_records(tmp_path))
    assert [(r.tool, r.subject, r.decision, r.outcome) for r in rows] == [
        ("Bash", "ls -la", "allow", "ok (exit 0)"),
        ("Bash", "FOO=1 rm -rf /tmp/x", "deny", ""),
        ("Read", "/etc/passwd", "ask", ""),
        ("Bash", "rm -f y", "deny", ""),
        ("Bash", "git push --force origin main", "deny", ""),
    ]
    assert rows[1].checks == ("9", "12") and rows[1].rule == "Bash(rm:*)"


def test_the_summary_counts_decisions_tools_rules_checks_and_denied_commands(
        tmp_path: Path) -> None:
    summary = summarize(_records(tmp_path))
    assert dict(summary.by_decision) == {"allow": 1, "deny": 3, "ask": 1}
    assert dict(summary.by_tool) == {"Bash": 4, "Read": 1}
    assert dict(summary.by_rule)[("Bash(rm:*)", "project")] == 2
    assert dict(summary.by_check) == {"12": 2, "9": 1}
    assert dict(summary.denied_commands) == {"rm -rf": 1, "rm -f": 1, "git push": 1}
    assert summary.sessions == 2 and summary.calls == 5
    assert summary.to_json()["by_rule"][0] == {"rule": "Bash(rm:*)", "source": "project",
                                               "count": 2}


@pytest.mark.parametrize(("command", "prefix"), [
    ("rm -rf /", "rm -rf"), ("A=1 B=2 curl -s x", "curl -s"), ("ls", "ls"), ("", ""),
])
def test_a_command_prefix_is_its_first_two_words_after_assignments(command: str,
                                                                    prefix: str) -> None:
    assert command_prefix(command) == prefix


def test_a_malformed_line_is_reported_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"event":"a"}\nnot json\n[1]\n\xff\xfe\n{"no":"event"}\n{"event":"b"}\n')
    entries = list(read_entries([path]))
    assert [e.record["event"] if e.record else e.problem for e in entries] == [
        "a", "not a JSON line", "a JSON list, not an object", "not UTF-8", "no event name", "b"]


def test_a_directory_is_read_as_its_jsonl_files_in_name_order(tmp_path: Path) -> None:
    for name in ("2025-05-02.jsonl", "2025-05-01.jsonl", "notes.txt"):
        (tmp_path / name).write_text("")
    assert [p.name for p in log_files([tmp_path])] == ["2025-05-01.jsonl", "2025-05-02.jsonl"]
