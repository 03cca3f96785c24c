"""Showing the log to a person: rich tables, JSON lines, verification text.

Every string that came from the log is attacker-influenced — a model chose
the command, and a command can hold ``\\x1b]52;c;…`` (set the clipboard),
``\\x1b[1A\\x1b[2K`` (rewrite the line above) or ``[bold red]`` (rich
markup). So log text reaches the terminal only through :func:`safe_text`
(controls and invisible format characters shown as escapes) inside
``rich.text.Text`` objects, which rich never parses for markup; JSON output
goes through :func:`safe_json`. rich is imported inside the functions: the
sink, loaded by every session, must not pay for it.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from regexes import regex

from .query import DecisionRow, Summary
from .verify import Verification

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

__all__ = ["print_rows", "print_summary", "print_verification", "safe_json", "safe_text",
           "verification_json"]

#: C0 and C1 controls (newline and tab too: one table cell, one line) and DEL
_CONTROLS = regex(r"[\x00-\x1f\x7f-\x9f]")
_NAMED: Final = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
#: characters that JSON output leaves raw but a terminal may obey or hide:
#: DEL and C1 controls, and the invisible format characters (bidi overrides)
_JSON_UNSAFE = regex(r"[\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2028\u2029"
                          r"\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]")


def safe_text(text: str) -> str:
    """Text as it may reach a terminal: each control character made visible
    (``\\x1b``), never obeyed; likewise the format characters (bidi
    overrides, zero-width ones, line separators) that make text read
    otherwise than it runs."""
    text = _CONTROLS.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cf", "Zl", "Zp")
                   else c for c in text)


def safe_json(value: Any) -> str:
    """One compact JSON line, readable (UTF-8 kept) yet inert: JSON already
    escapes C0 controls; the rest that a terminal could obey is escaped as
    ``\\uXXXX`` too — still the same JSON value."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _console() -> Console:
    from rich.console import Console  # noqa: PLC0415

    # written to a pipe or a file, a table is not squeezed into 80 columns
    wide = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    return Console(file=sys.stdout, highlight=False, markup=False, emoji=False,
                   width=200 if wide else None)


#: columns whose values are short and read badly broken in two
_NO_WRAP: Final = frozenset({"time (UTC)", "session", "tool", "decision", "checks", "count",
                             "outcome"})


def _table(title: str, *columns: str) -> Table:
    from rich.table import Table  # noqa: PLC0415

    table = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold", no_wrap=column in _NO_WRAP)
    return table


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _cells(*values: str) -> list[Any]:
    from rich.text import Text  # noqa: PLC0415

    return [Text(safe_text(value)) for value in values]


def _short_time(ts: str) -> str:
    return ts.replace("T", " ")[:19] if len(ts) >= 19 else ts


def print_rows(rows: Sequence[DecisionRow]) -> None:
    """The decisions, one row each."""
    console = _console()
    if not rows:
        console.print("no decisions match")
        return
    table = _table("decisions", "time (UTC)", "session", "tool", "input", "decision",
                   "source", "rule", "checks", "reason", "outcome")
    for row in rows:
        table.add_row(*_cells(_short_time(row.ts), row.session[:8], row.tool, row.subject,
                              row.decision, row.source, row.rule, ",".join(row.checks),
                              row.reason, row.outcome))
    console.print(table)


def print_summary(summary: Summary, malformed: int = 0) -> None:
    console = _console()
    span = f"{summary.first} … {summary.last}" if summary.first else "no events"
    console.print(f"{_plural(summary.events, 'event')}, {_plural(summary.calls, 'call')}, "
                  f"{_plural(summary.sessions, 'session')}; {safe_text(span)}"
                  + (f"; {malformed} malformed lines" if malformed else ""))
    for title, column, counts in (
            ("decisions", "decision", summary.by_decision),
            ("tools", "tool", summary.by_tool),
            ("checks that fired", "check", tuple((f"#{c}", n) for c, n in summary.by_check)),
            ("denied commands", "command prefix", summary.denied_commands)):
        if counts:
            table = _table(title, column, "count")
            for label, count in counts:
                table.add_row(*_cells(label, str(count)))
            console.print(table)
    if summary.by_rule:
        table = _table("rules", "rule", "source", "count")
        for (rule, source), count in summary.by_rule:
            table.add_row(*_cells(rule or "(no rule)", source, str(count)))
        console.print(table)


def verification_json(result: Verification) -> dict[str, Any]:
    return {
        "ok": result.ok, "status": result.status, "lines": result.lines,
        "files": [str(p) for p in result.files],
        "head": result.head, "head_kind": result.head_kind,
        "from_genesis": result.from_genesis, "needs_key": result.needs_key,
        "keyed_from": None if result.keyed_from is None else
        f"{result.keyed_from[0]}:{result.keyed_from[1]}",
        "problems": [{"file": str(p.path), "line": p.line, "reason": p.reason}
                     for p in result.problems],
        "notes": list(result.notes),
    }


def print_verification(result: Verification) -> None:
    """``FILE:LINE: reason`` per break, then one verdict line; the head on
    success, for the user to record somewhere the log's writer cannot reach."""
    out = sys.stdout
    for problem in result.problems:
        print(safe_text(str(problem)), file=out)
    files = f"{_plural(result.lines, 'line')} in {_plural(len(result.files), 'file')}"
    if result.problems:
        print(f"broken: {_plural(len(result.problems), 'problem')} ({files})", file=out)
    elif result.needs_key:
        where = result.keyed_from
        at = f" from {where[0]}:{where[1]}" if where else ""
        print(f"cannot verify: the chain is keyed (hmac-sha256{safe_text(at)}) and needs "
              f"SHELLGATE_AUDIT_KEY ({files})", file=out)
    elif result.lines == 0:
        print(f"ok: nothing to verify ({files})", file=out)
    else:
        kind = "hmac-sha256 (keyed)" if result.keyed_from else "sha256 (unkeyed)"
        start = "from the first line ever" if result.from_genesis else \
            "from an earlier line not given"
        print(f"ok: {files}, chain {kind}, {start}", file=out)
        if result.head:
            print(f"head: {result.head}", file=out)
    for note in result.notes:
        print(f"note: {safe_text(note)}", file=out)
