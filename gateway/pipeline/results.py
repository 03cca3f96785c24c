"""Results the model can take: errors as data, and the three size limits.

- per tool, ``max_result_size_chars`` (default 50,000; Bash and Grep
  30,000): above it the whole result is written to the session's results
  directory (outside the workspace, hidden from sandboxed commands, a read
  root of Read) and the model gets a preview, the path and a marker;
- a hard cap of 400,000 characters per result, whatever the tool says;
- 200,000 characters per message across parallel results, the largest
  persisted first (:func:`fit_message`).
Binary content over 25 KB is persisted and referenced the same way."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

from ..context import SessionContext
from ..messages import BlobBlock, Block, ImageBlock, TextBlock, ToolResultMessage, blocks_chars

HARD_CAP_CHARS = 400_000
MESSAGE_BUDGET_CHARS = 200_000
BINARY_INLINE_BYTES = 25 * 1024
#: images the model may see inline (the API's own limit is 5 MB of base64)
IMAGE_INLINE_BYTES = 3_750_000
PREVIEW_CHARS = 2_000
PERSISTED_TAG = "persisted-output"


def tool_error(message: str) -> str:
    return f"<tool_use_error>{message}</tool_use_error>"


def classify_tool_error(exc: BaseException) -> str:
    """A name for an exception that never carries file contents or paths:
    ``Error:ENOENT`` for an OS error, else the exception's class name."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"Error:{errno.errorcode.get(exc.errno, str(exc.errno))}"
    name = type(exc).__name__
    return name if len(name) > 3 else "Error"


def limit_result(message: ToolResultMessage, limit: int, session: SessionContext,
                 ) -> ToolResultMessage:
    """Persist what is too large for the model: binary blocks over 25 KB,
    images over the inline size, and the whole text when it exceeds the
    tool's limit (or the hard cap)."""
    blocks: list[Block] = []
    for i, block in enumerate(message.content):
        if (isinstance(block, BlobBlock) and len(block.data) > BINARY_INLINE_BYTES) \
                or (isinstance(block, ImageBlock) and len(block.data) > IMAGE_INLINE_BYTES):
            path = _persist(session, f"{message.tool_use_id}-{i}.bin", block.data)
            blocks.append(TextBlock(f"<{PERSISTED_TAG}>Binary output ({block.media_type}, "
                                    f"{len(block.data)} bytes) saved to: {path}</{PERSISTED_TAG}>"))
        else:
            blocks.append(block)
    content = tuple(blocks)
    if blocks_chars(content) > min(limit, HARD_CAP_CHARS):
        content = _persist_text(message.tool_use_id, content, session)
    return ToolResultMessage(message.tool_use_id, content, message.is_error)


def fit_message(results: Sequence[ToolResultMessage], session: SessionContext,
                budget: int = MESSAGE_BUDGET_CHARS) -> list[ToolResultMessage]:
    """Results of one message within ``budget`` characters together: the
    largest are persisted first, until the rest fits."""
    out = list(results)
    while sum(blocks_chars(r.content) for r in out) > budget:
        candidates = [(blocks_chars(r.content), i) for i, r in enumerate(out)
                      if not _is_persisted(r)]
        if not candidates:
            break
        _, i = max(candidates)
        r = out[i]
        out[i] = ToolResultMessage(r.tool_use_id, _persist_text(r.tool_use_id, r.content,
                                                                session), r.is_error)
    return out


def _is_persisted(message: ToolResultMessage) -> bool:
    return any(isinstance(b, TextBlock) and b.text.startswith(f"<{PERSISTED_TAG}>")
               for b in message.content) and blocks_chars(message.content) <= PREVIEW_CHARS * 2


def _persist_text(tool_use_id: str, content: tuple[Block, ...], session: SessionContext,
                  ) -> tuple[Block, ...]:
    text = "\n".join(b.text for b in content if isinstance(b, TextBlock))
    path = _persist(session, f"{tool_use_id}.txt", text.encode("utf-8", "surrogateescape"))
    preview = text[:PREVIEW_CHARS]
    cut = preview.rfind("\n")
    if cut > PREVIEW_CHARS // 2:
        preview = preview[:cut]
    note = (f"<{PERSISTED_TAG}>\nOutput too large ({len(text)} characters). Full output saved "
            f"to: {path}\nRead it with the Read tool (offset/limit) or search it with Grep."
            f"\n\nPreview (first {len(preview)} characters):\n{preview}\n…\n</{PERSISTED_TAG}>")
    images = tuple(b for b in content if isinstance(b, ImageBlock))
    return (TextBlock(note), *images)


def _persist(session: SessionContext, name: str, data: bytes) -> str:
    """Write ``data`` under the session's results directory, private to
    this user (0600), never following a link planted at the name."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:120]
    os.makedirs(session.results_dir, mode=0o700, exist_ok=True)
    path = os.path.join(session.results_dir, safe)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path
