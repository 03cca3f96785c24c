"""Reading the log back: which files, which lines, which events, and what
they add up to (``shellgate audit`` and ``shellgate audit summary``).

A log is attacker-influenced text (a model chose the commands in it, and
anyone with access may have edited it): a malformed line is reported and
skipped, never a crash, and no field is assumed to have the type the
vocabulary promises.

Filters work on calls: ``--decision deny`` selects the calls that were
denied — their request, decision and completion alike — so a filtered
``--json`` still tells the whole story of each call. ``--tool`` matches a
call by its tool (case-insensitively); ``--session`` by the session id or
its start (the table shows a short one); ``--since`` by time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from regexes import regex
from values import field, valueclass

from .chain import AuditError, parse_line
from .events import PERMISSION_DECIDED, TOOL_COMPLETED, TOOL_REQUESTED
from .lines import MAX_LINE_BYTES, log_lines

__all__ = [
    "DecisionRow",
    "Entry",
    "Filter",
    "Summary",
    "command_prefix",
    "decision_rows",
    "input_summary",
    "log_files",
    "parse_since",
    "read_entries",
    "select",
    "summarize",
    "text_of",
]

#: how many top entries a summary keeps per table (``--json`` too)
TOP: Final = 20


def log_files(paths: Iterable[Path]) -> list[Path]:
    """The files to read, in order: a file as given, a directory as its
    ``*.jsonl`` files sorted by name (the daily files sort by date)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            try:
                files.extend(sorted(p for p in path.iterdir()
                                    if p.suffix == ".jsonl" and p.is_file()))
            except OSError as exc:
                raise AuditError(f"cannot read {path}: {exc.strerror or exc}") from None
        elif path.exists():
            files.append(path)
        else:
            raise AuditError(f"no audit log at {path}")
    return files


@valueclass
class Entry:
    """One line read back: its event, or what is wrong with it."""

    path: Path
    line: int
    record: dict[str, Any] | None
    problem: str | None = None


def read_entries(files: Sequence[Path]) -> Iterator[Entry]:
    for path in files:
        for number, raw, _complete in log_lines(path):
            if raw is None:
                yield Entry(path, number, None, f"longer than {MAX_LINE_BYTES} bytes; not read")
                continue
            record, problem = parse_line(raw)
            if record is not None and not isinstance(record.get("event"), str):
                record, problem = None, "no event name"
            yield Entry(path, number, record, problem)


_RELATIVE = regex(r"(\d+)\s*([smhdw])")
_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``30m``, ``2h``, ``7d`` (ago), or an ISO date or time; a time
    without a zone is local time, as a person at the terminal means it.
    Raises ValueError."""
    now = now or datetime.now(UTC)
    relative = _RELATIVE.fullmatch(text.strip().lower())
    if relative:
        return now - timedelta(**{_UNITS[relative.group(2)]: int(relative.group(1))})
    moment = datetime.fromisoformat(text.strip())
    return moment.astimezone(UTC)  # naive: taken as local time


def _when(record: Mapping[str, Any]) -> datetime | None:
    value = record.get("ts")
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def text_of(value: Any) -> str:
    """A field as text: a string as it is, a cut string as its head and an
    ellipsis, anything else as ``str()`` (a field may hold anything)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and value.get("cut") is True:
        return text_of(value.get("head", "")) + "…"
    return "" if value is None else str(value)


@valueclass
class Filter:
    decision: str | None = None
    tool: str | None = None
    since: datetime | None = None
    session: str | None = None
    rule: str | None = None


@valueclass(frozen=False, slots=False)
class _Call:
    tool: str | None = None
    decisions: set[str] = field(default_factory=set)
    rules: set[str] = field(default_factory=set)


def _calls(records: Sequence[Mapping[str, Any]]) -> dict[str, _Call]:
    calls: dict[str, _Call] = {}
    for record in records:
        call_id = record.get("call_id")
        if not isinstance(call_id, str):
            continue
        call = calls.setdefault(call_id, _Call())
        if call.tool is None and isinstance(record.get("tool"), str):
            call.tool = record["tool"]
        if record.get("event") == PERMISSION_DECIDED:
            call.decisions.add(text_of(record.get("decision")))
            if record.get("rule") is not None:
                call.rules.add(text_of(record.get("rule")))
    return calls


def select(records: Sequence[dict[str, Any]], flt: Filter) -> list[dict[str, Any]]:
    """The records that pass ``flt`` (by call, see the module's doc)."""
    calls = _calls(records)
    chosen = []
    for record in records:
        call_id = record.get("call_id")
        call = calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            call = _Call(tool=record.get("tool") if isinstance(record.get("tool"), str) else None)
            if record.get("event") == PERMISSION_DECIDED:
                call.decisions.add(text_of(record.get("decision")))
                call.rules.add(text_of(record.get("rule")))
        if flt.session and not text_of(record.get("session_id")).startswith(flt.session):
            continue
        if flt.since is not None:
            moment = _when(record)
            if moment is None or moment < flt.since:
                continue
        if flt.tool and (call.tool or "").lower() != flt.tool.lower():
            continue
        if flt.decision and flt.decision not in call.decisions:
            continue
        if flt.rule and flt.rule not in call.rules:
            continue
        chosen.append(record)
    return chosen


# --- the decision table ----------------------------------------------------

#: the input field that says what a call is about, by preference
_SUBJECT_KEYS: Final = ("command", "file_path", "notebook_path", "path", "pattern", "url",
                        "query", "description")


def input_summary(value: Any, limit: int = 160) -> str:
    """What a call was about, in one short line: its command, file path,
    pattern or URL."""
    text = ""
    if isinstance(value, Mapping):
        for key in _SUBJECT_KEYS:
            if value.get(key) not in (None, ""):
                text = text_of(value[key])
                break
        else:
            text = next((text_of(v) for v in value.values() if isinstance(v, str)), "")
    else:
        text = text_of(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


@valueclass
class DecisionRow:
    ts: str
    session: str
    tool: str
    subject: str
    decision: str
    source: str
    rule: str
    checks: tuple[str, ...]
    reason: str
    outcome: str


def _by_call(records: Sequence[Mapping[str, Any]], event: str) -> dict[str, Mapping[str, Any]]:
    return {record["call_id"]: record for record in records
            if record.get("event") == event and isinstance(record.get("call_id"), str)}


def _outcome(record: Mapping[str, Any] | None) -> str:
    if record is None:
        return ""
    outcome = text_of(record.get("outcome"))
    code = record.get("exit_code")
    return f"{outcome} (exit {text_of(code)})" if code is not None else outcome


def decision_rows(records: Sequence[Mapping[str, Any]],
                  flt: Filter | None = None) -> list[DecisionRow]:
    """One row per ``permission.decided`` (of ``flt``'s decision and rule),
    joined by ``call_id`` to its request (what was asked) and completion."""
    flt = flt or Filter()
    requested = _by_call(records, TOOL_REQUESTED)
    completed = _by_call(records, TOOL_COMPLETED)
    rows = []
    for record in records:
        if record.get("event") != PERMISSION_DECIDED:
            continue
        decision, rule = text_of(record.get("decision")), text_of(record.get("rule"))
        if (flt.decision and decision != flt.decision) or (flt.rule and rule != flt.rule):
            continue
        call_id = text_of(record.get("call_id"))
        request = requested.get(call_id)
        subject = input_summary(request.get("input")) if request else ""
        if not subject and isinstance(record.get("subject"), list):
            subject = input_summary(" ".join(text_of(s) for s in record["subject"]))
        checks = record.get("checks")
        rows.append(DecisionRow(
            ts=text_of(record.get("ts")), session=text_of(record.get("session_id")),
            tool=text_of(record.get("tool")), subject=subject, decision=decision,
            source=text_of(record.get("source")), rule=rule,
            checks=tuple(text_of(c) for c in checks) if isinstance(checks, list) else (),
            reason=text_of(record.get("reason")), outcome=_outcome(completed.get(call_id))))
    return rows


# --- the summary -------------------------------------------------------------

@valueclass
class Summary:
    events: int
    calls: int
    sessions: int
    first: str | None
    last: str | None
    by_event: tuple[tuple[str, int], ...]
    by_decision: tuple[tuple[str, int], ...]
    by_tool: tuple[tuple[str, int], ...]
    #: ((rule or None, source), count)
    by_rule: tuple[tuple[tuple[str | None, str], int], ...]
    by_check: tuple[tuple[str, int], ...]
    denied_commands: tuple[tuple[str, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events, "calls": self.calls, "sessions": self.sessions,
            "first": self.first, "last": self.last,
            "by_event": dict(self.by_event), "by_decision": dict(self.by_decision),
            "by_tool": dict(self.by_tool),
            "by_rule": [{"rule": rule, "source": source, "count": count}
                        for (rule, source), count in self.by_rule],
            "by_check": dict(self.by_check), "denied_commands": dict(self.denied_commands),
        }


_ASSIGNMENT = regex(r"[A-Za-z_][A-Za-z0-9_]*=")


def command_prefix(command: str) -> str:
    """The first two words of a command, after its ``NAME=value``
    assignments (``FOO=1 rm -rf x`` is an ``rm -rf``)."""
    words = command.split()
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    return " ".join(words[:2])


def _order(label: Any) -> tuple[int, str]:
    text = str(label)
    return (int(text), "") if text.isdigit() else (1 << 30, text)  # check IDs by number


def _top(counter: Counter[Any]) -> tuple[tuple[Any, int], ...]:
    return tuple(sorted(counter.items(), key=lambda item: (-item[1], _order(item[0])))[:TOP])


def summarize(records: Sequence[Mapping[str, Any]]) -> Summary:
    requested = _by_call(records, TOOL_REQUESTED)
    by_event: Counter[str] = Counter()
    by_decision: Counter[str] = Counter()
    by_rule: Counter[tuple[str | None, str]] = Counter()
    by_check: Counter[str] = Counter()
    denied: Counter[str] = Counter()
    tools: dict[str, str] = {}
    sessions = set()
    stamps = []
    for record in records:
        event = text_of(record.get("event"))
        by_event[event] += 1
        if isinstance(record.get("session_id"), str):
            sessions.add(record["session_id"])
        if isinstance(record.get("ts"), str):
            stamps.append(record["ts"])
        call_id = record.get("call_id")
        call_key = call_id if isinstance(call_id, str) else f"#{len(tools)}"
        if isinstance(record.get("tool"), str) and (event == TOOL_REQUESTED
                                                    or call_key not in tools):
            tools[call_key] = record["tool"]
        if event != PERMISSION_DECIDED:
            continue
        decision = text_of(record.get("decision"))
        by_decision[decision] += 1
        rule = record.get("rule")
        by_rule[(None if rule is None else text_of(rule), text_of(record.get("source")))] += 1
        checks = record.get("checks")
        for check in checks if isinstance(checks, list) else ():
            by_check[text_of(check)] += 1
        if decision == "deny":
            prefix = _denied_prefix(record, requested.get(text_of(call_id)))
            if prefix:
                denied[prefix] += 1
    return Summary(
        events=len(records), calls=len(tools), sessions=len(sessions),
        first=min(stamps) if stamps else None, last=max(stamps) if stamps else None,
        by_event=_top(by_event), by_decision=_top(by_decision), by_tool=_top(Counter(
            tools.values())), by_rule=_top(by_rule), by_check=_top(by_check),
        denied_commands=_top(denied))


def _denied_prefix(decided: Mapping[str, Any], request: Mapping[str, Any] | None) -> str:
    """A denied Bash call's command prefix, from its request's input —
    else from what the decision judged (its ``subject``)."""
    if text_of(decided.get("tool")) != "Bash":
        return ""
    if request is not None and isinstance(request.get("input"), Mapping):
        command = text_of(request["input"].get("command"))
        if command:
            return command_prefix(command)
    subject = decided.get("subject")
    if isinstance(subject, list) and subject:
        return command_prefix(text_of(subject[0]))
    return ""
