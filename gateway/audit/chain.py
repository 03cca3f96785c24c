"""The hash chain: how one line is sealed to the line before it.

Each line is one compact JSON object whose last two keys are ``chain`` (the
kind of link) and ``prev`` (the link)::

    {"ts":"2025-05-01T10:00:00.000001Z","event":"tool.requested",...,
     "chain":"sha256","prev":"<64 hex>"}

``prev`` is computed over the previous line's exact bytes (without its
newline): its SHA-256, or — when the writer holds ``SHELLGATE_AUDIT_KEY`` —
its HMAC-SHA256 under that key, and then ``chain`` is ``"hmac-sha256"``. The
first line ever has ``prev`` = 64 zeros (:data:`GENESIS`).

What each kind stops: a plain chain makes an edit, a deletion or an
insertion in the middle of the log visible, unless the attacker recomputes
every later link (anyone can: SHA-256 needs no secret). An HMAC chain cannot
be recomputed without the key. The kind is written on every line, so
verification knows what to recompute — and a line that says ``sha256``
after lines that said ``hmac-sha256`` is a break in itself (a keyed log must
never quietly become unkeyed: that is exactly what an attacker without the
key would do).

Hashing is over bytes, so the line is rendered here, once, and the same
bytes are hashed by the next writer: a renderer that re-serialised a parsed
line (key order, spacing, escapes) would break every link.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from ..errors import GatewayError
from .events import IDS

__all__ = [
    "GENESIS",
    "HMAC_SHA256",
    "KEY_ENV",
    "SHA256",
    "AuditError",
    "audit_key",
    "digest",
    "parse_line",
    "seal",
    "utc_stamp",
]


class AuditError(GatewayError):
    """The audit log could not be written (or read): the sink raises it and
    the pipeline runs nothing — an action that cannot be recorded is not
    taken (fail closed)."""


GENESIS: Final = "0" * 64
SHA256: Final = "sha256"
HMAC_SHA256: Final = "hmac-sha256"
KINDS: Final = (SHA256, HMAC_SHA256)
#: the environment variable the key is taken from (by the caller)
KEY_ENV: Final = "SHELLGATE_AUDIT_KEY"


def audit_key(env: Mapping[str, str]) -> bytes | None:
    """The HMAC key from ``SHELLGATE_AUDIT_KEY`` (its UTF-8 bytes), or None
    when unset or empty. Writers and ``shellgate audit verify`` must read it
    the same way, so both use this."""
    value = env.get(KEY_ENV, "")
    return value.encode("utf-8") if value else None


def digest(raw: bytes, kind: str, key: bytes | None) -> str:
    """The link over one line's bytes: hex SHA-256, or hex HMAC-SHA256."""
    if kind == SHA256:
        return hashlib.sha256(raw).hexdigest()
    if kind == HMAC_SHA256:
        if key is None:
            raise AuditError(f"an {HMAC_SHA256} link needs {KEY_ENV}")
        return hmac.new(key, raw, hashlib.sha256).hexdigest()
    raise AuditError(f"unknown chain kind {kind!r}")


def utc_stamp(moment: datetime) -> str:
    """``2025-05-01T10:00:00.000001Z``: always microseconds, always UTC (a
    fixed width sorts as text, and no reader has to guess a zone)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


#: keys the chain owns: a field of that name from the caller is renamed
#: (``prev_``), never allowed to stand in for the link
RESERVED: Final = frozenset({"ts", "event", "chain", "prev"})


def seal(event: str, fields: Mapping[str, Any], *, ts: str, last_line: bytes | None,
         key: bytes | None) -> bytes:
    """One line (without its newline) for ``event``: ``ts``, ``event``, the
    ids present, the other fields in their order, then ``chain`` and
    ``prev`` linking it to ``last_line`` (None: the first line ever).
    ``fields`` must already be JSON-able (see :func:`.redact.scrub`)."""
    record: dict[str, Any] = {"ts": ts, "event": event}
    for name in IDS:
        if fields.get(name) is not None:
            record[name] = fields[name]
    for name, value in fields.items():
        if name in IDS:
            continue
        safe = name
        while safe in RESERVED or safe in record:
            safe += "_"
        record[safe] = value
    kind = HMAC_SHA256 if key is not None else SHA256
    record["chain"] = kind
    record["prev"] = GENESIS if last_line is None else digest(last_line, kind, key)
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8")



def parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """One line read back: its object, or None and what is wrong with it
    (the line came from a file anyone with access may have edited: nothing
    in it is trusted to be well formed)."""
    if not raw.strip():
        return None, "an empty line"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    try:
        value = json.loads(text)
    except RecursionError:
        return None, "nested too deeply"
    except ValueError:
        return None, "not a JSON line"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, None
