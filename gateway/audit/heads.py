"""The chain's recorded head: where the log ended after the last append.

A hash chain shows an edit, a deletion or an insertion in the middle of the
log, but not lines cut off its end: what is left still chains. So after
every append the writer records the head — the file the last line is in,
that file's size, the SHA-256 of the last line — in the state directory
(``$XDG_STATE_HOME/shellgate/audit-heads/<key>.json``, one per log, keyed by
the log's real path). That directory is hidden from every sandboxed command
(sandbox/owndirs.py), wherever the log itself is; the record is replaced
whole (a temporary file renamed over it) under the log's own lock, so two
writers never record an older head over a newer one.

``shellgate audit verify`` checks by default that the log ends exactly at
its recorded head (:func:`check_head`): a cut tail, a truncated or deleted
last file, and lines appended by anything that does not record the head (a
forged line chained by hand) are breaks. A log with lines and no recorded
head is a break too (fail closed: the head may have been what was removed,
or the log may be another's); ``--no-head`` checks the chain alone, for a
log copied or rotated elsewhere.

What it does not cover: a writer that can write the state directory as well
— the user's own processes outside the sandbox, such as the commands
Claude Code runs on the host under ``shellgate hook``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from values import valueclass

from ..pathnames import state_dir
from .chain import AuditError

__all__ = ["Head", "HeadCheck", "check_head", "head_file", "heads_dir", "read_head",
           "record_head"]

#: the state directory's subdirectory holding the heads
HEADS: Final = "audit-heads"
#: a head record is small; a larger file is not one
_MAX_BYTES: Final = 4096
#: stale records (of logs that are gone) looked at when a new one is made
_PRUNE_AT_MOST: Final = 512


def heads_dir(env: Mapping[str, str]) -> Path:
    """``audit-heads/`` in the state directory of ``env``."""
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(state_dir(env, home)) / HEADS


def head_file(heads: Path, location: Path) -> Path:
    """The record for the log at ``location`` (a real path)."""
    key = hashlib.sha256(str(location).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return heads / f"{key}.json"


@valueclass
class Head:
    """Where the log ended after its last append."""

    #: the log's real path (a directory of daily files, or one .jsonl file)
    log: str
    #: the name of the file the last line is in
    file: str
    #: that file's size in bytes, the last line's newline included
    size: int
    #: SHA-256 of the last line's bytes (without its newline)
    sha256: str


def record_head(heads: Path, head: Head) -> None:
    """Replace the log's record with ``head``. Called under the log's lock.
    Raises :class:`AuditError`: a head that cannot be recorded leaves a cut
    of what follows unseen (fail closed)."""
    target = head_file(heads, Path(head.log))
    data = json.dumps({"log": head.log, "file": head.file, "size": head.size,
                       "sha256": head.sha256}, separators=(",", ":")).encode()
    temp = heads / f".{target.stem}.{os.getpid()}.tmp"
    try:
        if not heads.is_dir():
            heads.mkdir(mode=0o700, parents=True, exist_ok=True)
        new = not target.exists()
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise AuditError(f"cannot record the audit log's head in {heads}: "
                         f"{exc.strerror or exc}") from None
    if new:
        _prune(heads, keep=target)


def _prune(heads: Path, keep: Path) -> None:
    """Records of logs that no longer exist (a test's, a moved log's) go
    when a new one is made, so they do not pile up. Safe: a log whose
    record is gone and that has lines fails verification."""
    with contextlib.suppress(OSError):
        for entry in list(os.scandir(heads))[:_PRUNE_AT_MOST]:
            if not entry.name.endswith(".json") or entry.path == str(keep):
                continue
            head = _read(Path(entry.path))
            if head is not None and not os.path.lexists(head.log):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def read_head(heads: Path, location: Path) -> Head | None:
    """The recorded head of the log at ``location``, or None."""
    return _read(head_file(heads, location))


def _read(path: Path) -> Head | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
        value = json.loads(raw) if len(raw) <= _MAX_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    log, file, size, digest = (value.get(k) for k in ("log", "file", "size", "sha256"))
    if not (isinstance(log, str) and isinstance(file, str) and "/" not in file
            and isinstance(size, int) and size > 0 and isinstance(digest, str)):
        return None
    return Head(log=log, file=file, size=size, sha256=digest)


@valueclass
class HeadCheck:
    """What comparing a log with its recorded head found."""

    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def check_head(location: Path, heads: Path, *, daily: bool) -> HeadCheck:
    """Does the log at ``location`` (a directory of daily files, or one
    file) end exactly at its recorded head? ``daily``: ``location`` is
    named as a daily file; given alone, it is held to its directory's head."""
    real = Path(os.path.realpath(location))
    head = read_head(heads, real)
    directory = real if real.is_dir() else None
    if head is None and real.is_file() and daily:
        head, directory = read_head(heads, real.parent), real.parent
        if head is not None and head.file != real.name:
            if head.file > real.name:
                return HeadCheck(notes=(f"the recorded head is in {head.file}, a later file "
                                        "not given",))
            return HeadCheck(problems=(f"{real.name} goes on past the recorded head, which is "
                                       f"in the earlier {head.file}: lines were added by hand, "
                                       "or by a writer that does not record the head",))
    if head is None:
        if not _has_lines(real):
            return HeadCheck()
        return HeadCheck(problems=(
            f"no head is recorded for {real} (in {heads}): lines may have been cut off its "
            "end, or it was written by another user or environment; --no-head checks the "
            "chain alone (a log copied elsewhere)",))
    where = real / head.file if real.is_dir() else real
    return HeadCheck(problems=tuple(_ends_at(where, head, directory)))


def _ends_at(path: Path, head: Head, directory: Path | None) -> list[str]:
    """Why the file ``path`` (in the log's ``directory`` of daily files, if
    it is one) does not end at ``head``."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return [f"{path.name}, the file holding the recorded head, is missing: the newest "
                "lines were deleted"]
    if size < head.size:
        return [f"{path.name} ends {head.size - size} bytes before the recorded head: lines "
                "were cut off the end of the log"]
    problems = []
    if _line_ending_at(path, head.size) != head.sha256:
        problems.append(f"the line at the recorded head in {path.name} is not the one "
                        "recorded: the log's end was rewritten")
    if size > head.size:
        problems.append(f"{path.name} goes on {size - head.size} bytes past the recorded head: "
                        "lines were added by hand, or by a writer that does not record the head")
    if directory is not None:
        later = sorted(p.name for p in directory.glob("*.jsonl")
                       if p.name > path.name and _has_lines(p))
        if later:
            problems.append(f"{later[0]} comes after the file holding the recorded head: "
                            "lines were added by hand, or by a writer that does not record "
                            "the head")
    return problems


def _line_ending_at(path: Path, size: int) -> str | None:
    """SHA-256 of the line whose newline is the byte at ``size - 1``."""
    try:
        with open(path, "rb") as fh:
            start = max(0, size - 1 - (1 << 20))
            fh.seek(start)
            block = fh.read(size - start)
    except OSError:
        return None
    if not block.endswith(b"\n"):
        return None
    line = block[:-1]
    cut = line.rfind(b"\n")
    if cut < 0 and start > 0:
        return None  # a line longer than a MiB: no writer makes one
    return hashlib.sha256(line[cut + 1:]).hexdigest()


def _has_lines(path: Path) -> bool:
    """Does the log (a file, or a directory's ``*.jsonl`` files) hold anything?"""
    try:
        if path.is_dir():
            return any(p.stat().st_size > 0 for p in path.glob("*.jsonl") if p.is_file())
        return path.stat().st_size > 0
    except OSError:
        return False
