"""Read's text: a file's lines numbered like ``cat -n``, within a line
count and a byte budget, each line cut past MAX_LINE_CHARS — in memory
bounded however long a line or a file is — and the file's hash and line
count for the read record, within the first SCAN_BYTES.

Also :class:`Shown`, what a Read of any kind (text, image, PDF, notebook)
shows and what it saw."""

from __future__ import annotations

import codecs
import hashlib
import io
import itertools
import os
from collections.abc import Iterator
from typing import Any, BinaryIO, Literal

from values import valueclass

from ..messages import ImageBlock, TextBlock
from .filetext import Encoding

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_TEXT_BYTES = 256 * 1024

EMPTY_NOTE = "<system-reminder>The file exists but is empty.</system-reminder>"


@valueclass
class Shown:
    """What a Read shows (text and images, in order), and what it saw of
    the file for the read record: the content's hash (empty when the file
    is too large to hash) and whether all of it was shown."""

    blocks: tuple[TextBlock | ImageBlock, ...]
    digest: str
    complete: bool


@valueclass
class Window:
    """The lines shown and why the showing stopped."""

    first: int
    lines: list[str]
    stop: Literal["end", "limit", "bytes"]
    cut: int


#: how much of a line is held at once: a 1 GiB minified file is one line
PIECE_CHARS = 64 * 1024


def _lines(text: io.TextIOBase, codec: str) -> Iterator[tuple[str, int, int]]:
    """Each line as (its first PIECE_CHARS characters without the line
    ending, its length in characters, its size in the file's bytes), in
    memory bounded by PIECE_CHARS however long the line."""
    while piece := text.readline(PIECE_CHARS):
        head, chars, size = piece, 0, 0
        while True:
            chars += len(piece)
            size += len(piece.encode(codec, "replace"))
            if piece.endswith("\n"):
                break
            piece = text.readline(PIECE_CHARS)
            if not piece:
                break
        ending = len(piece) - len(piece.removesuffix("\n").removesuffix("\r"))
        yield head.removesuffix("\n").removesuffix("\r"), chars - ending, size


def _window(stream: BinaryIO, encoding: Encoding, first: int, limit: int) -> Window:
    """Lines ``first``.. (1-based) from ``stream`` (at the text's start),
    at most ``limit`` of them and MAX_TEXT_BYTES of the file's bytes."""
    text = io.TextIOWrapper(stream, encoding=encoding.codec, errors="replace", newline="\n")
    shown: list[str] = []
    used = cut = 0
    stop: Literal["end", "limit", "bytes"] = "end"
    try:
        for line, length, size in itertools.islice(_lines(text, encoding.codec), first - 1, None):
            if len(shown) == limit or (shown and used + size > MAX_TEXT_BYTES):
                stop = "limit" if len(shown) == limit else "bytes"
                break
            used += size
            long = length > MAX_LINE_CHARS
            cut += long
            shown.append(f"{line[:MAX_LINE_CHARS]}… [line cut: {length} characters, "
                         f"{MAX_LINE_CHARS} shown]" if long else line)
    finally:
        text.detach()
    return Window(first, shown, stop, cut)


#: how much of a file a Read looks at (the hash, the line count, skipping to
#: an offset). Reproducer of the bound (from a review): `truncate -s 8T
#: log.txt` in the sandbox, then Read log.txt limit 5: the whole-file hash
#: would have read for hours, past any cancellation.
SCAN_BYTES = 64 << 20


class Capped(io.RawIOBase):
    """A file seen through its first ``limit`` bytes (and never past the
    size it had when opened: a file that keeps growing still ends)."""

    def __init__(self, raw: BinaryIO, limit: int) -> None:
        self.raw, self.limit = raw, limit

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def readinto(self, buffer: Any) -> int:
        left = self.limit - self.raw.tell()
        if left <= 0:
            return 0
        view = memoryview(buffer).cast("B")[:left]
        data = self.raw.read(len(view))
        view[: len(data)] = data
        return len(data)


def _scan(stream: BinaryIO, encoding: Encoding) -> tuple[str, int]:
    """The file's sha256 (byte-order mark included) and its number of
    lines, in one pass over what ``stream`` shows (see :class:`Capped`).
    In UTF-8 a 0x0A byte is a newline and nothing else; other codecs are
    decoded to count."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder(encoding.codec)("replace")
    newlines, tail = 0, ""
    skip = len(encoding.bom)
    while chunk := stream.read(1 << 20):
        digest.update(chunk)
        body, skip = chunk[skip:], 0
        if encoding.codec == "utf-8":
            newlines += body.count(b"\n")
            tail = body[-1:].decode("latin-1") or tail
        else:
            text = decoder.decode(body)
            newlines += text.count("\n")
            tail = text[-1:] or tail
    return digest.hexdigest(), newlines + (1 if tail not in ("", "\n") else 0)


def _format(window: Window, total: int, limit: int | None) -> str:
    """Numbered lines like ``cat -n``, and what was left out."""
    if total == 0:
        return EMPTY_NOTE
    if not window.lines:
        return (f"<system-reminder>The file exists but is shorter than the offset given "
                f"({window.first}): it has {total} lines.</system-reminder>")
    last = window.first + len(window.lines) - 1
    parts = ["\n".join(f"{n:>6}\t{line}" for n, line in enumerate(window.lines, window.first))]
    if window.stop != "end":
        why = (f"the {limit or MAX_LINES}-line limit" if window.stop == "limit"
               else f"the {MAX_TEXT_BYTES // 1024} KiB a Read returns")
        parts.append(f"[Showing lines {window.first}-{last} of {total}, stopped at {why}. To "
                     f"read on, call Read with offset={last + 1} (and a limit).]")
    if window.cut:
        parts.append(f"[{window.cut} line(s) longer than {MAX_LINE_CHARS} characters were cut; "
                     "see such a line whole with Bash (e.g. sed -n 'Np' file | cut -c2001-4000).]")
    return "\n\n".join(parts)


def read_text(stream: BinaryIO, st: os.stat_result, encoding: Encoding, offset: int | None,
              limit: int | None) -> Shown:
    """Lines ``offset``.. of the open file ``stream``, at most ``limit``."""
    capped = io.BufferedReader(Capped(stream, min(st.st_size, SCAN_BYTES)))
    capped.seek(0)
    digest, total = _scan(capped, encoding)
    capped.seek(len(encoding.bom))
    window = _window(capped, encoding, offset or 1, limit or MAX_LINES)
    whole = st.st_size <= SCAN_BYTES
    complete = whole and window.first == 1 and window.stop == "end" and not window.cut
    text = _format(window, total, limit)
    if not whole:
        text += (f"\n\n[Only the first {SCAN_BYTES >> 20} MiB of this {st.st_size}-byte file "
                 "are read: line counts are of that part; look further with Bash (tail, sed -n).]")
    # beyond the scan, the hash is unknown (""): Edit and Write judge such a
    # file by its size and modification time alone
    return Shown((TextBlock(text),), digest if whole else "", complete)
