"""Where findings go: one JSON line each in ``tests/corpus/fuzz_findings.jsonl``
(in a checkout; ``./fuzz_findings.jsonl`` elsewhere), which the test suite
replays (tests/fuzz/test_findings.py) — a finding, once fixed, stays fixed.

A line: ``property``, ``command`` (what was analyzed), ``example`` (the
property's input, to replay it), ``verdict``, ``trace`` (what went wrong,
an excerpt), ``seed`` and ``round_seed`` (to regenerate it), ``mode``,
``found`` (UTC time), ``after_seconds`` (into the run), and ``fixed`` —
empty until a fix names its commit.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import FuzzError
from .properties import Failure

_CHECKOUT_CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
FILE_NAME = "fuzz_findings.jsonl"


def default_path() -> Path:
    """The checkout's corpus file when there is one, else the working directory's."""
    if _CHECKOUT_CORPUS.is_dir():
        return _CHECKOUT_CORPUS / FILE_NAME
    return Path.cwd() / FILE_NAME


def check_writable(path: Path) -> None:
    """Said before the run, in one line: findings must have somewhere to go."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.close(fd)
    except OSError as exc:
        raise FuzzError(f"cannot write findings to {path}: {exc.strerror or exc}") from None
    if path.stat().st_size == 0:
        path.unlink()  # made only to try; a run that finds nothing leaves nothing


def load(path: Path) -> list[dict[str, Any]]:
    """The saved findings (a line that does not parse is skipped, not fatal)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text("utf-8", "replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("property"), str):
            out.append(entry)
    return out


def to_record(failure: Failure, *, seed: int, round_seed: int, mode: str) -> dict[str, Any]:
    return {"property": failure.property, "command": failure.command,
            "example": failure.example, "verdict": failure.verdict, "trace": failure.trace,
            "seed": seed, "round_seed": round_seed, "mode": mode,
            "found": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "signature": failure.signature, "fixed": ""}


def save(path: Path, record: dict[str, Any]) -> bool:
    """Append ``record`` unless the same property already failed on the same
    command; True when it was new. One write per line (O_APPEND), so two
    fuzzers sharing the file never interleave within a line."""
    key = (record["property"], record["command"])
    if any((e["property"], e.get("command")) == key for e in load(path)):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record) + "\n"  # ASCII: lone surrogates survive
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("ascii"))
    finally:
        os.close(fd)
    return True
