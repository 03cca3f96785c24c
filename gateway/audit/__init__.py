"""The audit log: every decision of every tool call, one JSON line each,
hash-chained so that an edit, a deletion or an insertion shows.

Writing: :class:`FileAudit` (the :class:`~gateway.context.AuditSink` the
session installs; fail closed — :class:`AuditError` when a line could not
be written). Every string is redacted and bounded first (:func:`scrub`).
Reading: :func:`log_files`, :func:`read_entries`, :func:`select`,
:func:`decision_rows`, :func:`summarize`, :func:`verify`, and the
``print_*`` renderers behind ``shellgate audit``.

The vocabulary is in :mod:`gateway.audit.events`, the chain's format in
:mod:`gateway.audit.chain`, the threat each rule stops next to the rule.
"""

from .chain import (
    GENESIS,
    HMAC_SHA256,
    KEY_ENV,
    SHA256,
    AuditError,
    audit_key,
    digest,
    parse_line,
    seal,
)
from .events import (
    DECISIONS,
    EVENTS,
    IDS,
    INTERNAL_ERROR,
    PERMISSION_DECIDED,
    SANDBOX_REPORTED,
    SANDBOX_STARTED,
    SETTINGS_LOADED,
    TOOL_COMPLETED,
    TOOL_REQUESTED,
    TOOL_VALIDATED,
)
from .heads import Head, HeadCheck, check_head, heads_dir, read_head, record_head
from .query import (
    DecisionRow,
    Entry,
    Filter,
    Summary,
    command_prefix,
    decision_rows,
    input_summary,
    log_files,
    parse_since,
    read_entries,
    select,
    summarize,
    text_of,
)
from .redact import MASK, MAX_CHARS, is_secret_name, redact_text, scrub
from .render import (
    print_rows,
    print_summary,
    print_verification,
    safe_json,
    safe_text,
    verification_json,
)
from .sink import LOG_ENV, FileAudit, audit_location, daily_name, is_daily_name
from .verify import Problem, Verification, verify

__all__ = [
    "DECISIONS",
    "EVENTS",
    "GENESIS",
    "HMAC_SHA256",
    "IDS",
    "INTERNAL_ERROR",
    "KEY_ENV",
    "LOG_ENV",
    "MASK",
    "MAX_CHARS",
    "PERMISSION_DECIDED",
    "SANDBOX_REPORTED",
    "SANDBOX_STARTED",
    "SETTINGS_LOADED",
    "SHA256",
    "TOOL_COMPLETED",
    "TOOL_REQUESTED",
    "TOOL_VALIDATED",
    "AuditError",
    "DecisionRow",
    "Entry",
    "FileAudit",
    "Filter",
    "Head",
    "HeadCheck",
    "Problem",
    "Summary",
    "Verification",
    "audit_key",
    "audit_location",
    "check_head",
    "command_prefix",
    "daily_name",
    "decision_rows",
    "digest",
    "heads_dir",
    "input_summary",
    "is_daily_name",
    "is_secret_name",
    "log_files",
    "parse_line",
    "parse_since",
    "print_rows",
    "print_summary",
    "print_verification",
    "read_entries",
    "read_head",
    "record_head",
    "redact_text",
    "safe_json",
    "safe_text",
    "scrub",
    "seal",
    "select",
    "summarize",
    "text_of",
    "verification_json",
    "verify",
]
