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
import hashlib
import os
import secrets
from collections.abc import Sequence

from values import valueclass

from ..context import SessionContext
from ..messages import BlobBlock, Block, ImageBlock, TextBlock, ToolResultMessage

HARD_CAP_CHARS = 400_000
MESSAGE_BUDGET_CHARS = 200_000
BINARY_INLINE_BYTES = 25 * 1024
#: images the model may see inline (the API's own limit is 5 MB of base64)
IMAGE_INLINE_BYTES = 3_750_000
#: the images of one message together (four of the largest inline size)
MESSAGE_IMAGE_BYTES = 4 * IMAGE_INLINE_BYTES
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
    tool's limit (or the hard cap). Never raises: what cannot be saved is
    cut, and the result says so."""
    blocks: list[Block] = []
    for block in message.content:
        if (isinstance(block, BlobBlock) and len(block.data) > BINARY_INLINE_BYTES) \
                or (isinstance(block, ImageBlock) and len(block.data) > IMAGE_INLINE_BYTES):
            blocks.append(_binary_note(session, message.tool_use_id, block))
        else:
            blocks.append(block)
    content = tuple(blocks)
    if _text_chars(content) > min(limit, HARD_CAP_CHARS):
        images = tuple(b for b in content if not isinstance(b, TextBlock))
        content = (_text_note(session, message.tool_use_id, _text(content)), *images)
    if len(content) == len(message.content) and all(
            a is b for a, b in zip(content, message.content, strict=True)):
        return message  # nothing was persisted: the same message (the audit log's `truncated`)
    return ToolResultMessage(message.tool_use_id, content, message.is_error)


def fit_message(results: Sequence[ToolResultMessage], session: SessionContext,
                budget: int = MESSAGE_BUDGET_CHARS,
                image_budget: int = MESSAGE_IMAGE_BYTES) -> list[ToolResultMessage]:
    """Results of one message within ``budget`` characters of text and
    ``image_budget`` bytes of images together (an image is not text: a
    150 KB plot counted as its base64 length against the text budget was
    persisted out of sight beside any other result): the largest in what
    is over are persisted whole first, until the rest fits. Each result is
    persisted at most once, so this ends (from a review: a result whose
    inline image kept it over the budget was persisted again and again,
    forever)."""
    out = list(results)
    done: set[int] = set()
    while True:
        if sum(_text_chars(r.content) for r in out) > budget:
            size = _text_chars
        elif sum(_image_bytes(r.content) for r in out) > image_budget:
            size = _image_bytes
        else:
            break
        candidates = [(size(r.content), i) for i, r in enumerate(out) if i not in done]
        if not candidates:
            break
        _, i = max(candidates)
        done.add(i)
        out[i] = persist_whole(out[i], session)
    return out


def _image_bytes(content: tuple[Block, ...]) -> int:
    return sum(len(b.data) for b in content if isinstance(b, ImageBlock))


def persist_whole(message: ToolResultMessage, session: SessionContext) -> ToolResultMessage:
    """The result saved whole (its text and each binary block), the model
    given the notes that point to it."""
    return ToolResultMessage(message.tool_use_id, _whole_note(session, message),
                             message.is_error)


def _text(content: tuple[Block, ...]) -> str:
    return "\n".join(b.text for b in content if isinstance(b, TextBlock))


def _text_chars(content: tuple[Block, ...]) -> int:
    return sum(len(b.text) for b in content if isinstance(b, TextBlock))


def _preview(text: str) -> str:
    preview = text[:PREVIEW_CHARS]
    cut = preview.rfind("\n")
    return preview[:cut] if cut > PREVIEW_CHARS // 2 else preview


def _text_note(session: SessionContext, tool_use_id: str, text: str) -> TextBlock:
    path = _persist(session, tool_use_id, "txt", text.encode("utf-8", "surrogateescape"))
    preview = _preview(text)
    where = (f"Full output saved to: {path}\nRead it with the Read tool (offset/limit)."
             if isinstance(path, str) else
             f"It could not be saved ({path.error}); only the preview is left.")
    return TextBlock(f"<{PERSISTED_TAG}>\nOutput too large ({len(text)} characters). {where}"
                     f"\n\nPreview (first {len(preview)} characters):\n{preview}\n…\n"
                     f"</{PERSISTED_TAG}>")


def _binary_note(session: SessionContext, tool_use_id: str,
                 block: ImageBlock | BlobBlock) -> TextBlock:
    path = _persist(session, tool_use_id, "bin", block.data)
    where = (f"saved to: {path}" if isinstance(path, str)
             else f"not shown and not saved ({path.error})")
    return TextBlock(f"<{PERSISTED_TAG}>Binary output ({block.media_type}, {len(block.data)} "
                     f"bytes) {where}</{PERSISTED_TAG}>")


def _whole_note(session: SessionContext, message: ToolResultMessage) -> tuple[Block, ...]:
    """A result persisted whole: its text, and each binary block."""
    notes: list[Block] = []
    text = _text(message.content)
    if text:
        notes.append(_text_note(session, message.tool_use_id, text))
    notes += [_binary_note(session, message.tool_use_id, b) for b in message.content
              if not isinstance(b, TextBlock)]
    return tuple(notes)


@valueclass
class _Unsaved:
    error: str


def _persist(session: SessionContext, tool_use_id: str, ext: str, data: bytes) -> str | _Unsaved:
    """Write ``data`` to a new file in the session's results directory,
    private to this user (0600). The name is a hash of the call's id and a
    random part, made with O_EXCL: no id the model picks (`../x`, `a/1`
    beside `a_1`, 120 wide characters) can leave the directory, pass the
    name limit, follow a planted link or overwrite another result."""
    digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    name = f"{digest}-{secrets.token_hex(4)}.{ext}"
    try:
        os.makedirs(session.results_dir, mode=0o700, exist_ok=True)
        path = os.path.join(session.results_dir, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        return _Unsaved(classify_tool_error(exc))
    return path
