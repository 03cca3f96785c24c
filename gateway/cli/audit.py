"""``shellgate audit [summary|verify] [FILE|DIR ...]``: the decisions as a
table (or ``--json`` lines of the matching events), counts (``summary``),
or a check of the hash chain (``verify``).

Without FILE|DIR: the log in use (``$SHELLGATE_AUDIT_LOG``, else
``$XDG_STATE_HOME/shellgate/audit/``). A file literally named ``summary``
or ``verify`` is given as ``./summary``.

``verify`` also checks that the log ends at the head its writer recorded
in the state directory (a cut tail still chains); ``--no-head`` skips that,
for a log copied or rotated elsewhere.

Exit status: 0 done (``verify``: the chain holds); 1 ``verify`` found a
break (the recorded head not where the log ends, or none recorded); 2
usage errors, a missing or unreadable log, and a keyed chain verified
without ``SHELLGATE_AUDIT_KEY``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from values import replace

from ..audit import (
    AuditError,
    Entry,
    Filter,
    Problem,
    audit_key,
    audit_location,
    check_head,
    decision_rows,
    heads_dir,
    is_daily_name,
    log_files,
    parse_since,
    print_rows,
    print_summary,
    print_verification,
    read_entries,
    safe_json,
    safe_text,
    select,
    summarize,
    verification_json,
    verify,
)
from ..errors import UsageError

_ACTIONS = ("summary", "verify")
#: malformed lines listed on stderr before "and N more"
_SHOWN_PROBLEMS = 5


def main(args: argparse.Namespace) -> int:
    words: list[str] = list(args.args)
    action = words.pop(0) if words and words[0] in _ACTIONS else None
    flt = _filter(args)
    if action == "verify" and flt != Filter():
        raise UsageError("verify checks every line: --decision, --tool, --since, --session "
                         "and --rule do not apply")
    if action != "verify" and args.expect_head:
        raise UsageError("--expect-head goes with verify")
    if action != "verify" and args.no_head:
        raise UsageError("--no-head goes with verify")
    locations = _locations(words)
    files = _files(locations)
    try:
        if action == "verify":
            return _verify(locations, files, args)
        records = _records(files)
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    chosen = select(records, flt)
    if action == "summary":
        summary = summarize(chosen)
        if args.json:
            print(safe_json(summary.to_json()))
        else:
            print_summary(summary)
        return 0
    if args.json:
        for record in chosen:
            print(safe_json(record))
    else:
        print_rows(decision_rows(chosen, flt))
    return 0


def _filter(args: argparse.Namespace) -> Filter:
    since = None
    if args.since:
        try:
            since = parse_since(args.since)
        except ValueError:
            raise UsageError(f"--since {args.since!r}: give an ISO date or time "
                             "(2025-05-01, 2025-05-01T14:00Z) or 30m, 2h, 7d") from None
    return Filter(decision=args.decision, tool=args.tool, since=since, session=args.session,
                  rule=args.rule)


def _locations(words: list[str]) -> list[Path]:
    if words:
        return [Path(word) for word in words]
    default = audit_location(None, os.environ)
    if not default.exists():
        raise UsageError(f"no audit log at {default} (nothing recorded yet? give FILE|DIR "
                         "or set SHELLGATE_AUDIT_LOG)")
    return [default]


def _files(paths: list[Path]) -> list[Path]:
    try:
        return log_files(paths)
    except AuditError as exc:
        raise UsageError(str(exc)) from None


def _records(files: list[Path]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    bad: list[Entry] = []
    for entry in read_entries(files):
        if entry.record is not None:
            records.append(entry.record)
        else:
            bad.append(entry)
    for entry in bad[:_SHOWN_PROBLEMS]:
        print(safe_text(f"shellgate: {entry.path}:{entry.line}: skipped: {entry.problem}"),
              file=sys.stderr)
    if len(bad) > _SHOWN_PROBLEMS:
        print(f"shellgate: … and {len(bad) - _SHOWN_PROBLEMS} more malformed lines skipped "
              "(shellgate audit verify shows them all)", file=sys.stderr)
    return records


def _verify(locations: list[Path], files: list[Path], args: argparse.Namespace) -> int:
    result = verify(files, key=audit_key(os.environ), expect_head=args.expect_head)
    if not args.no_head:
        # Lines cut off the end still chain: the log must end where its
        # writer last recorded, in the state directory no command can reach
        # (gateway/audit/heads.py).
        heads = heads_dir(os.environ)
        problems, notes = list(result.problems), list(result.notes)
        for location in locations:
            found = check_head(location, heads, daily=is_daily_name(location.name))
            problems += (Problem(location, None, p) for p in found.problems)
            notes += found.notes
        result = replace(result, problems=tuple(problems), notes=tuple(notes))
    if args.json:
        print(safe_json(verification_json(result)))
    else:
        print_verification(result)
    return result.status
