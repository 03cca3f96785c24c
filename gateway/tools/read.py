"""Read: a text file's lines numbered like ``cat -n`` (:mod:`.read_text`),
an image made fit to show (:mod:`.images`), a PDF's pages as text
(:mod:`.read_pdf`), a notebook's cells and outputs (:mod:`.notebook`) —
from where the sandbox's policy lets a sandboxed ``cat`` read, and nothing
that is not a regular file (a FIFO would hang the gateway, a device or
``/proc`` shows this process's view, not the sandbox's). The kind is told
by the bytes (a notebook: by its name too), and each kind is read from the
one descriptor opened through the checked path."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
from collections.abc import Sequence
from typing import BinaryIO, Literal

from pydantic import Field

from values import valueclass

from ..context import ReadRecord, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid
from ..messages import ImageBlock, ProgressCallback, TextBlock, ToolResult, ToolResultMessage
from .base import ReadOnlyTool, SearchOrRead, Subject, build_tool
from .filetext import (
    SNIFF_BYTES,
    Code,
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
from .images import MAX_EDGE, Fitted, fit_image, image_type, whole_image
from .notebook import read_notebook
from .paths import Resolved, in_working_dirs, read_right, resolve
from .read_pdf import INLINE_PAGES, MAX_PAGES_PER_READ, parse_pages, read_pdf
from .read_text import MAX_LINE_CHARS, MAX_LINES, MAX_TEXT_BYTES, Shown, read_text

#: the largest image file Read loads (to resize: what it sends is smaller)
MAX_IMAGE_BYTES = 32 << 20
#: how many directory entries a "did you mean" looks through
SUGGEST_SCAN = 10_000
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
    pages: str | None = Field(default=None, description='Page range for PDF files (e.g. "1-5", '
                              '"3", "2,4-6"; 1-based). Only for PDF files. At most '
                              f"{MAX_PAGES_PER_READ} pages per request")


@valueclass
class ReadOutput:
    """What a Read returns: text (numbered lines, a PDF's pages, a note),
    an image, or a notebook's text and images in order."""

    blocks: tuple[TextBlock | ImageBlock, ...]

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks if isinstance(b, TextBlock))


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


def _in_results(target: Resolved, ctx: ToolContext) -> bool:
    """In this session's persisted results (never when there is no such
    directory: an empty path would resolve to the process's cwd)."""
    if not ctx.session.results_dir:
        return False
    results = os.path.realpath(ctx.session.results_dir)
    return os.path.commonpath((target.real, results)) == results


def _outcome(*blocks: TextBlock | ImageBlock) -> ToolResult:
    return ToolResult(ReadOutput(blocks))


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


def _read_image(stream: BinaryIO, st: os.stat_result, media: str, display: str) -> Shown | str:
    stream.seek(0)
    blob = stream.read(MAX_IMAGE_BYTES + 1)
    if len(blob) > MAX_IMAGE_BYTES:
        return (f"{display} is a {media} image of {st.st_size} bytes, over the "
                f"{MAX_IMAGE_BYTES >> 20} MiB Read loads: make a smaller copy (with Bash) and "
                "read that.")
    if whole_image(blob) != media:
        # the magic alone is no image: a broken one on the wire makes the
        # API refuse the whole conversation
        return (f"{display} starts like a {media} image but is not a whole one "
                f"({st.st_size} bytes); look into it with Bash (file, xxd | head).")
    fitted = fit_image(blob, media)
    if not isinstance(fitted, Fitted):
        return f"{display}: {fitted}."
    blocks = (fitted.block,) if not fitted.note else (TextBlock(fitted.note), fitted.block)
    return Shown(blocks, hashlib.sha256(blob).hexdigest(), True)


Kind = Literal["image", "pdf", "notebook", "text"]


def _kind(head: bytes, target: Resolved) -> Kind:
    """What a file is, by its first bytes — and a notebook by its name,
    since its bytes are JSON like any other."""
    if image_type(head) is not None:
        return "image"
    if head.startswith(b"%PDF-"):
        return "pdf"
    if any(p.lower().endswith(".ipynb") for p in (target.display, target.real)):
        return "notebook"
    return "text"


def _show(kind: Kind, stream: BinaryIO, head: bytes, st: os.stat_result, data: ReadInput,
          display: str) -> Shown | str:
    if kind == "image":
        return _read_image(stream, st, image_type(head) or "", display)
    if kind == "pdf":
        return read_pdf(stream, st, data.pages, display)
    if kind == "notebook":
        return read_notebook(stream, st, display, data.offset, data.limit)
    encoding = detect_encoding(head, whole=st.st_size <= SNIFF_BYTES)
    if encoding is None:
        return (f"{display} is a binary file ({st.st_size} bytes), not text: Read shows text, "
                "PDFs, notebooks and PNG, JPEG, GIF or WEBP images. Look into it with Bash if "
                "you must (file, xxd | head).")
    return read_text(stream, st, encoding, data.offset, data.limit)


def read_open(stream: BinaryIO, data: ReadInput, target: Resolved,
              ctx: ToolContext) -> ToolResult:
    """Read the open regular file ``stream`` as ``data`` asks."""
    st = os.fstat(stream.fileno())
    head = stream.read(SNIFF_BYTES)
    kind = _kind(head, target)
    if data.pages is not None and kind != "pdf":
        return _error(f"pages is for PDF files; {target.display} is not one (give offset and "
                      "limit for lines).")
    # a PDF is extracted afresh: the record keeps no pages, and the same
    # offset and limit with other pages must not get "unchanged"
    if kind != "pdf" and _unchanged(ctx, target, st, data):
        return _outcome(TextBlock(UNCHANGED_NOTE))
    shown = _show(kind, stream, head, st, data, target.display)
    if isinstance(shown, str):
        return _error(shown)
    _remember(ctx, target, shown.digest, st, data, shown.complete)
    return _outcome(*shown.blocks)


def _validate(data: ReadInput, ctx: ToolContext) -> Validation:
    if data.pages is not None:
        pages = parse_pages(data.pages)
        if isinstance(pages, str):
            return invalid(pages)
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
- PNG, JPEG, GIF and WEBP images are shown as images (told by their bytes, not their name); \
one larger than {MAX_EDGE} pixels on its long edge is resized, and an animated one shows its \
first frame. Other binary files are refused.
- A PDF's text is shown page by page. Give pages ("3", "1-5", "2,4-6") for a PDF of more \
than {INLINE_PAGES} pages; at most {MAX_PAGES_PER_READ} pages a call.
- A Jupyter notebook (.ipynb) is shown as its cells, each named by its id (or cell-N, N from \
0): source, and outputs with their plots as images. Change it with NotebookEdit, not Edit.
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
        return "Read a text file (numbered lines), an image, a PDF's pages or a notebook's cells"

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
        return ToolResultMessage(tool_use_id, data.blocks or (TextBlock(""),), result.is_error)

    def render_group(self, calls: Sequence[tuple[ReadInput, ToolResultMessage | None]],
                     cwd: str = "") -> str:
        names = [data.shown_path(cwd) + (" ✗" if result is not None and result.is_error else "")
                 for data, result in calls]
        return f"Read {len(names)} file{'' if len(names) == 1 else 's'}: {', '.join(names)}"


READ = build_tool(ReadTool())
