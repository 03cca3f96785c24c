"""An audit log's lines, read back as a reader may trust them: from a
regular file only, one line at a time, none held past a cap.

From a review: `shellgate audit` and `audit verify` given a FIFO waited for
ever, given /dev/zero died of MemoryError, and held twice the longest line
in memory. A log shellgate writes is a regular file of lines far below the
cap (every field is cut at 4,096 characters); anything else is refused or
reported, never waited on or swallowed whole.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

from .chain import AuditError

__all__ = ["MAX_LINE_BYTES", "log_lines"]

#: a line longer than this is reported, not read (shellgate writes none)
MAX_LINE_BYTES: Final = 4 << 20


def log_lines(path: Path) -> Iterator[tuple[int, bytes | None, bool]]:
    """(number, the line without its newline — None past
    :data:`MAX_LINE_BYTES` — and whether the newline was there)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise AuditError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise AuditError(f"{path} is not a regular file (a FIFO, a device or a socket): "
                             "an audit log is one")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        try:
            yield from _numbered(handle)
        except OSError as exc:
            raise AuditError(f"cannot read {path}: {exc.strerror or exc}") from None


def _numbered(handle: BinaryIO) -> Iterator[tuple[int, bytes | None, bool]]:
    readline = handle.readline
    number = 0
    while True:
        chunk: bytes = readline(MAX_LINE_BYTES + 1)
        if not chunk:
            return
        number += 1
        if len(chunk) > MAX_LINE_BYTES:
            # the rest of the line is skipped a bounded piece at a time
            while chunk and not chunk.endswith(b"\n"):
                chunk = readline(MAX_LINE_BYTES)
            yield number, None, chunk.endswith(b"\n")
            continue
        complete = chunk.endswith(b"\n")
        yield number, chunk[:-1] if complete else chunk, complete
