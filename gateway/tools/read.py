"""Read: a text file's lines numbered like ``cat -n``, or an image, from
where the sandbox's policy lets a sandboxed ``cat`` read — and nothing
that is not a regular file (a FIFO would hang the gateway, a device or
``/proc`` shows this process's view, not the sandbox's)."""

from __future__ import annotations

import asyncio
import codecs
import hashlib
import io
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal

from pydantic import Field

from ..context import ReadRecord, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid
from ..messages import ImageBlock, ProgressCallback, TextBlock, ToolResult, ToolResultMessage
from .base import ReadOnlyTool, SearchOrRead, Subject, build_tool
from .bash_output import image_type, whole_image
from .filetext import (
    SNIFF_BYTES,
    Code,
    Encoding,
    FileInput,
    Refusal,
    check_path,
    detect_encoding,
    not_regular,
    open_regular,
    os_error,
    pin,
    recheck,
)
from .paths import Resolved, in_working_dirs, read_right, resolve

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_TEXT_BYTES = 256 * 1024
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: how many directory entries a "did you mean" looks through
SUGGEST_SCAN = 10_000

EMPTY_NOTE = "<system-reminder>The file exists but is empty.</system-reminder>"
UNCHANGED_NOTE = ("File unchanged since your last read (same offset and limit, same size and "
                  "modification time): the content in that earlier result is still current; "
                  "refer to it instead of reading again.")


class ReadInput(FileInput):
    file_path: str = Field(description="The absolute path to the file to read")
    offset: int | None = Field(default=None, ge=1, description="The line number to start "
                               "reading from (1-based). Only provide if the file is too large "
                               "to read at once")
    limit: int | None = Field(default=None, ge=1, description="The number of lines to read. "
                              "Only provide if the file is too large to read at once")


@dataclass(frozen=True, slots=True)
class ReadOutput:
    """What a Read returns: text (numbered lines or a note) or an image."""

    text: str = ""
    image: ImageBlock | None = None


@dataclass(frozen=True, slots=True)
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


def _not_a_file(display: str, kind: str) -> str:
    if kind == "a directory":
        return f"{display} is a directory, not a file: list it with Bash (ls) or Glob."
    return (f"{display} is {kind}, not a regular file: Read opens regular files only (reading "
            "this one could block, or show the gateway's view instead of the sandbox's).")


def _same_stem(target: Resolved, ctx: ToolContext) -> str | None:
    """A readable file beside a missing one, with its stem and another
    extension (``app.js`` asked for, ``app.ts`` there)."""
    parent, name = os.path.split(target.real)
    stem = os.path.splitext(name)[0]
    try:
        with os.scandir(parent) as entries:
            names = sorted(e.name for e in itertools.islice(entries, SUGGEST_SCAN)
                           if e.name != name and os.path.splitext(e.name)[0] == stem
                           and e.is_file())
    except OSError:
        return None
    for other in names:
        shown = os.path.join(os.path.dirname(target.display), other)
        if read_right(resolve(shown, ctx), ctx) is None:
            return shown
    return None


def _missing(target: Resolved, ctx: ToolContext) -> str:
    message = f"File does not exist: {target.display}."
    other = _same_stem(target, ctx)
    if other is not None:
        message += f" Did you mean {other}?"
    return f"{message} The working directory is {ctx.session.cwd}."


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


def _in_results(target: Resolved, ctx: ToolContext) -> bool:
    """In this session's persisted results (never when there is no such
    directory: an empty path would resolve to the process's cwd)."""
    if not ctx.session.results_dir:
        return False
    results = os.path.realpath(ctx.session.results_dir)
    return os.path.commonpath((target.real, results)) == results


def _outcome(text: str = "", image: ImageBlock | None = None) -> ToolResult:
    return ToolResult(ReadOutput(text, image))


def _error(message: str) -> ToolResult:
    return ToolResult(message, is_error=True)


def _remember(ctx: ToolContext, target: Resolved, digest: str, st: os.stat_result,
              data: ReadInput, complete: bool) -> None:
    """Record what was read. ``offset`` is always set (1 by default): a
    record Edit or Write left has None there, and must not pass for a
    Read's in the unchanged check (the model never saw that content)."""
    ctx.session.record_read(target.real, ReadRecord(digest, st.st_mtime_ns, st.st_size,
                                                    data.offset or 1, data.limit, complete,
                                                    st.st_ctime_ns, st.st_ino))


def _unchanged(ctx: ToolContext, target: Resolved, st: os.stat_result, data: ReadInput) -> bool:
    record = ctx.session.last_read(target.real)
    return (record is not None and (record.offset, record.limit) == (data.offset or 1, data.limit)
            and (record.mtime_ns, record.size) == (st.st_mtime_ns, st.st_size))


def _read_image(stream: BinaryIO, st: os.stat_result, media: str, data: ReadInput,
                target: Resolved, ctx: ToolContext) -> ToolResult:
    stream.seek(0)
    blob = stream.read(MAX_IMAGE_BYTES + 1)
    if len(blob) > MAX_IMAGE_BYTES:
        return _error(f"{target.display} is a {media} image of {st.st_size} bytes, over the "
                      f"{MAX_IMAGE_BYTES // (1 << 20)} MiB Read shows: make a smaller copy "
                      "(with Bash) and read that.")
    if whole_image(blob) != media:
        # the magic alone is no image: a broken one on the wire makes the
        # API refuse the whole conversation
        return _error(f"{target.display} starts like a {media} image but is not a whole "
                      f"one ({st.st_size} bytes); look into it with Bash (file, xxd | head).")
    _remember(ctx, target, hashlib.sha256(blob).hexdigest(), st, data, True)
    return _outcome(image=ImageBlock(media, blob))


def read_open(stream: BinaryIO, data: ReadInput, target: Resolved,
              ctx: ToolContext) -> ToolResult:
    """Read the open regular file ``stream`` as ``data`` asks."""
    st = os.fstat(stream.fileno())
    if _unchanged(ctx, target, st, data):
        return _outcome(UNCHANGED_NOTE)
    head = stream.read(SNIFF_BYTES)
    media = image_type(head)
    if media is not None:
        return _read_image(stream, st, media, data, target, ctx)
    encoding = detect_encoding(head, whole=st.st_size <= SNIFF_BYTES)
    if encoding is None:
        return _error(f"{target.display} is a binary file ({st.st_size} bytes), not text: Read "
                      "shows text and PNG, JPEG, GIF or WEBP images. Look into it with Bash if "
                      "you must (file, xxd | head).")
    capped = io.BufferedReader(Capped(stream, min(st.st_size, SCAN_BYTES)))
    capped.seek(0)
    digest, total = _scan(capped, encoding)
    capped.seek(len(encoding.bom))
    window = _window(capped, encoding, data.offset or 1, data.limit or MAX_LINES)
    whole = st.st_size <= SCAN_BYTES
    complete = whole and window.first == 1 and window.stop == "end" and not window.cut
    # beyond the scan, the hash is unknown (""): Edit and Write judge such a
    # file by its size and modification time alone
    _remember(ctx, target, digest if whole else "", st, data, complete)
    text = _format(window, total, data.limit)
    if not whole:
        text += (f"\n\n[Only the first {SCAN_BYTES >> 20} MiB of this {st.st_size}-byte file "
                 "are read: line counts are of that part; look further with Bash (tail, sed -n).]")
    return _outcome(text)


def _validate(data: ReadInput, ctx: ToolContext) -> Validation:
    target = check_path(data, ctx, read_right)
    if isinstance(target, Validation):
        return target
    try:  # a stat, never an open: opening a FIFO waits for a writer
        st = os.stat(target.real)
    except FileNotFoundError:
        return invalid(_missing(target, ctx), Code.MISSING)
    except OSError as exc:
        return invalid(os_error(exc, target.display), Code.OS_ERROR)
    kind = not_regular(st.st_mode)
    if kind is not None:
        return invalid(_not_a_file(target.display, kind), Code.NOT_A_FILE)
    return VALID


def _call(data: ReadInput, ctx: ToolContext) -> ToolResult:
    target = recheck(data, ctx, read_right)
    if isinstance(target, str):
        return _error(target)
    try:
        fd = open_regular(target.real)
    except Refusal as refusal:
        return _error(refusal.message)
    except FileNotFoundError:
        return _error(_missing(target, ctx))
    except OSError as exc:
        return _error(os_error(exc, target.display))
    with os.fdopen(fd, "rb") as stream:
        return read_open(stream, data, target, ctx)


_PROMPT = f"""\
Reads a file from the local filesystem.
- file_path must be an absolute path.
- By default it returns up to {MAX_LINES} lines from the start; for a long file give offset \
(the 1-based line to start at) and limit (how many lines).
- Lines come numbered like cat -n: spaces, the line number and a tab, then the line. The \
prefix is not part of the file: never copy it into an Edit.
- Lines over {MAX_LINE_CHARS} characters are cut, and one call returns at most \
{MAX_TEXT_BYTES // 1024} KiB; the result says where to go on with offset.
- PNG, JPEG, GIF and WEBP images (up to {MAX_IMAGE_BYTES // (1 << 20)} MiB) are shown as \
images; other binary files are refused.
- A directory is refused: list it with Bash (ls) or Glob. Devices, FIFOs, sockets and \
/proc, /sys, /dev are refused: read those with Bash.
- Reading again a file unchanged since your last read of the same lines returns a short \
note instead of the content.
- Read a file before you Edit or Write it. Paths the sandbox hides are refused; dotenv files \
need a person's approval; files outside the working directories ask."""


class ReadTool(ReadOnlyTool[ReadInput]):
    name = "Read"
    input_model = ReadInput
    #: Read bounds itself (lines, bytes, image size); a result persisted to a
    #: file would only be read back with Read, which would persist it again
    max_result_size_chars = 10**9

    def description(self, data: ReadInput | None = None) -> str:
        return "Read a text file (numbered lines) or an image"

    def prompt(self) -> str:
        return _PROMPT

    def activity_description(self, data: ReadInput, cwd: str = "") -> str:
        return f"Reading {data.shown_path(cwd)}"

    def summary(self, data: ReadInput, cwd: str = "") -> str:
        return data.shown_path(cwd)

    def is_search_or_read(self, data: ReadInput, ctx: ToolContext) -> SearchOrRead:
        return SearchOrRead(is_read=True)

    def permission_matcher(self, data: ReadInput, ctx: ToolContext) -> Subject:
        # the path as named and where it leads: an allow rule must hold
        # for both, a deny for either (`ln -s ~/.aws/credentials notes`)
        target = pin(data, ctx)
        return Subject("path", tuple(dict.fromkeys((target.display, target.real))), "read")

    async def validate_input(self, data: ReadInput, ctx: ToolContext) -> Validation:
        return await asyncio.to_thread(_validate, data, ctx)

    async def check_permissions(self, data: ReadInput, ctx: ToolContext) -> PermissionResult:
        target = pin(data, ctx)
        verdict = read_right(target, ctx)
        if verdict is not None:
            return verdict
        if in_working_dirs(target, ctx) or _in_results(target, ctx):
            return PermissionResult(Decision.ALLOW, "tool", f"{target.display} is readable")
        return PermissionResult(Decision.ASK, "tool", f"{target.display} is outside the "
                                "working directories", hint="--add-dir adds a directory")

    async def call(self, data: ReadInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        # off the event loop: a large file's hash must not stall the calls beside it
        return await asyncio.to_thread(_call, data, ctx)

    def map_result(self, result: ToolResult, tool_use_id: str) -> ToolResultMessage:
        data = result.data
        if not isinstance(data, ReadOutput):
            return ToolResultMessage(tool_use_id, (TextBlock(str(data)),), result.is_error)
        block = data.image if data.image is not None else TextBlock(data.text)
        return ToolResultMessage(tool_use_id, (block,), result.is_error)

    def render_group(self, calls: Sequence[tuple[ReadInput, ToolResultMessage | None]],
                     cwd: str = "") -> str:
        names = [data.shown_path(cwd) + (" ✗" if result is not None and result.is_error else "")
                 for data, result in calls]
        return f"Read {len(names)} file{'' if len(names) == 1 else 's'}: {', '.join(names)}"


READ = build_tool(ReadTool())
