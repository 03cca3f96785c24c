"""Test tools with controlled behaviour (durations, flags, failures) for the
pipeline and the executor. They are real tools: built with build_tool, run
by the real pipeline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from gateway.context import ApprovalRequest, ToolContext
from gateway.hooks import HookOutcome
from gateway.messages import Progress, ProgressCallback, ToolResult, ToolResultMessage
from gateway.tools import BaseTool, build_tool


class WaitInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ms: int = 0
    safe: bool = True
    fail: bool = False
    crash: bool = False
    text: str = "done"
    progress: bool = False


@dataclass
class Timeline:
    """When each call started and ended (monotonic seconds)."""

    spans: dict[str, list[float]] = field(default_factory=dict)

    def overlap(self, a: str, b: str) -> bool:
        (s1, e1), (s2, e2) = self.spans[a], self.spans[b]
        return s1 < e2 and s2 < e1


class WaitTool(BaseTool[WaitInput]):
    """Waits ``ms``; declares itself read-only and concurrency-safe when
    ``safe``; fails or crashes on request."""

    name: ClassVar[str] = "Wait"
    input_model = WaitInput
    deprecated_aliases = ("Sleep",)
    kind: ClassVar[Literal["cancel", "block"]] = "cancel"

    def __init__(self, timeline: Timeline | None = None) -> None:
        self.timeline = timeline or Timeline()

    def description(self, data: WaitInput | None = None) -> str:
        return "wait a while"

    def is_read_only(self, data: WaitInput, ctx: ToolContext) -> bool:
        return data.safe

    def is_concurrency_safe(self, data: WaitInput, ctx: ToolContext) -> bool:
        return data.safe

    def interrupt_behavior(self) -> Literal["cancel", "block"]:
        return self.kind

    async def call(self, data: WaitInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        span = self.timeline.spans.setdefault(ctx.tool_use_id, [time.monotonic(), 0.0])
        try:
            if data.progress:
                on_progress(Progress("", "", "stdout", "started\n"))
            await asyncio.sleep(data.ms / 1000)
            if data.crash:
                raise FileNotFoundError(2, "No such file", "/secret/path")
            return ToolResult(data.text, is_error=data.fail)
        finally:
            span[1] = time.monotonic()


class ForgetfulTool(BaseTool[WaitInput]):
    """Declares nothing but its name, model, description and call: a writer
    by default."""

    name: ClassVar[str] = "Forgetful"
    input_model = WaitInput

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline

    def description(self, data: WaitInput | None = None) -> str:
        return "forgets to say it only reads"

    async def call(self, data: WaitInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        span = self.timeline.spans.setdefault(ctx.tool_use_id, [time.monotonic(), 0.0])
        await asyncio.sleep(data.ms / 1000)
        span[1] = time.monotonic()
        return ToolResult(data.text)


def wait_tool(timeline: Timeline | None = None) -> WaitTool:
    tool = build_tool(WaitTool(timeline))
    assert isinstance(tool, WaitTool)
    return tool


class Answer:
    """An approver that answers every ask the same way and records them."""

    def __init__(self, allow: bool | str) -> None:
        self.allow = allow
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> bool | str:
        self.asked.append(request)
        return self.allow


class FixedHooks:
    """Hooks with a fixed pre-tool answer; records post-tool calls."""

    def __init__(self, outcome: HookOutcome) -> None:
        self.outcome = outcome
        self.post: list[tuple[str, bool]] = []

    async def pre_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                           ctx: ToolContext) -> HookOutcome:
        return self.outcome

    async def post_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                            result: ToolResultMessage, ctx: ToolContext) -> None:
        self.post.append((tool_name, result.is_error))


def png(width: int = 1, height: int = 1) -> bytes:
    """A real PNG (RGBA, all transparent), built chunk by chunk."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    rows = b"".join(b"\0" + b"\0" * 4 * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


#: the well-known 1x1 transparent GIF
GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000"
                    "010001000002024401003b")
#: a JPEG's frame: start-of-image, a JFIF header, end-of-image
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
#: a RIFF container whose size field is right
WEBP = b"RIFF" + (12).to_bytes(4, "little") + b"WEBPVP8 \x00\x00\x00\x00"
