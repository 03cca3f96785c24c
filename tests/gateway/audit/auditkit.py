"""Helpers for the audit tests: a clock that moves on its own, the events
of whole calls, and the tools of an attacker who edits the log."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gateway.audit import FileAudit

T0 = datetime(2025, 5, 1, 10, 0, tzinfo=UTC)
KEY = b"correct horse battery staple"


class Clock:
    """Each reading is a millisecond after the last (distinct ``ts``)."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now

    def set(self, moment: datetime) -> None:
        self.now = moment


def emit_call(audit: FileAudit, n: int, *, tool: str = "Bash",
              tool_input: dict[str, Any] | None = None, decision: str = "allow",
              source: str = "default", rule: str | None = None, checks: tuple[int, ...] = (),
              session: str = "sess0001aaaa", exit_code: int = 0, reason: str = "read-only") -> None:
    """The events of one call, as the pipeline sends them."""
    ids = {"session_id": session, "call_id": f"call{n:04d}", "tool_use_id": f"toolu_{n:04d}"}
    audit.emit("tool.requested", **ids, tool=tool,
               input=tool_input if tool_input is not None else {"command": f"echo {n}"})
    audit.emit("tool.validated", **ids, ok=True, error=None)
    audit.emit("permission.decided", **ids, tool=tool, decision=decision, source=source,
               rule=rule, reason=reason, checks=list(checks), mode="default",
               hard_limit=False, subject=[])
    if decision == "allow":
        audit.emit("sandbox.started", **ids, backend="bwrap", profile="workspace-write")
        audit.emit("tool.completed", **ids, tool=tool, outcome="ok" if exit_code == 0
                   else "error", is_error=exit_code != 0, exit_code=exit_code,
                   duration_ms=12.5, bytes=42, truncated=False)


def write_log(location: Path, events: int = 8, *, key: bytes | None = None,
              clock: Clock | None = None) -> FileAudit:
    audit = FileAudit(location, key=key, clock=clock or Clock())
    for n in range(events):
        audit.emit("tool.requested", session_id="s1", call_id=f"c{n}", tool="Bash",
                   input={"command": f"echo {n}"})
    return audit


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def link(raw: bytes, kind: str, key: bytes | None) -> str:
    if kind == "sha256":
        return hashlib.sha256(raw).hexdigest()
    assert key is not None
    return hmac.new(key, raw, hashlib.sha256).hexdigest()


def reseal(raw: bytes, before: bytes, *, kind: str, key: bytes | None = None,
           value: str | None = None, **changes: Any) -> bytes:
    """An attacker's rewrite of one line: fields changed, then ``chain``
    and ``prev`` recomputed over ``before`` (``value`` forces the link)."""
    record = json.loads(raw)
    record.update(changes)
    record.pop("chain")
    record.pop("prev")
    record["chain"] = kind
    record["prev"] = value if value is not None else link(before, "sha256" if kind == "sha256"
                                                           else "hmac", key)
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()


def rechain(lines: list[bytes], start: int, *, kind: str, key: bytes | None = None,
            labelled: str | None = None) -> list[bytes]:
    """An attacker recomputing every link from ``start`` on (0-based):
    with ``kind`` (sha256, or hmac under ``key``), labelled ``labelled``."""
    out = list(lines)
    for i in range(start, len(out)):
        prev = link(out[i - 1], kind, key)
        out[i] = reseal(out[i], out[i - 1], kind=labelled or
                        ("sha256" if kind == "sha256" else "hmac-sha256"), value=prev)
    return out
