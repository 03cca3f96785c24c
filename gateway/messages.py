"""What flows through the pipeline, wire-neutral: a ``tool_use`` in, content
blocks and progress while it runs, one ``tool_result`` out.

``to_wire()`` renders the Messages API's shapes (the MCP server and the
agent adapt from these); nothing here knows about a transport."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from values import field, valueclass

if TYPE_CHECKING:
    from .context import SessionContext


@valueclass
class ToolUse:
    """One ``tool_use`` block as the model sent it."""

    id: str
    name: str
    input: Mapping[str, Any]


@valueclass
class TextBlock:
    text: str

    def to_wire(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@valueclass
class ImageBlock:
    """An image the model sees (a command that printed a PNG, a Read of
    one): the bytes are kept until the wire needs base64."""

    media_type: str
    data: bytes

    def to_wire(self) -> dict[str, Any]:
        return {"type": "image", "source": {"type": "base64", "media_type": self.media_type,
                                            "data": base64.b64encode(self.data).decode()}}


@valueclass
class BlobBlock:
    """Binary output that is not an image (a command that printed a
    tarball): never decoded into text; small ones are described inline,
    larger ones persisted and referenced."""

    media_type: str
    data: bytes

    def to_wire(self) -> dict[str, Any]:
        return {"type": "text", "text": f"[binary output: {len(self.data)} bytes, "
                f"{self.media_type}; not shown]"}


Block = TextBlock | ImageBlock | BlobBlock


def blocks_chars(blocks: tuple[Block, ...]) -> int:
    """The size a result counts against the limits: text characters, and
    the base64 length of binary data (what the wire carries)."""
    return sum(len(b.text) if isinstance(b, TextBlock) else (len(b.data) + 2) // 3 * 4
               for b in blocks)


#: A change a non-concurrency-safe tool makes to the session for the calls
#: after it (Bash's persistent working directory). Applied by the executor
#: before the next call starts.
ContextModifier = Callable[["SessionContext"], None]


@valueclass
class ToolResult:
    """What a tool's ``call`` returns: its own data (mapped to blocks by the
    tool's ``map_result``), messages to add to the conversation, and a
    change to the session for later calls."""

    data: Any
    new_messages: tuple[str, ...] = ()
    context_modifier: ContextModifier | None = None
    is_error: bool = False


@valueclass
class ToolResultMessage:
    """The ``tool_result`` block that goes back to the model."""

    tool_use_id: str
    content: tuple[Block, ...]
    is_error: bool = False

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_wire(self) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": self.tool_use_id,
                "content": [b.to_wire() for b in self.content], "is_error": self.is_error}


@valueclass
class Progress:
    """Something a running tool reports before its result (a chunk of a
    command's output). Emitted at once, never held for ordering."""

    tool_use_id: str
    tool_name: str
    kind: Literal["stdout", "stderr", "status"]
    text: str
    extra: Mapping[str, Any] = field(default_factory=dict)


#: How a tool reports progress; the pipeline fills in the ids.
ProgressCallback = Callable[[Progress], None]
