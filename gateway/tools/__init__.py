"""The tools: the contract (:mod:`.base`), one module per tool, and the
registry that assembles the pool a session offers."""

from __future__ import annotations

from .base import (
    DEFAULT_MAX_RESULT_CHARS,
    AnyTool,
    BaseTool,
    SearchOrRead,
    Subject,
    ToolDefinitionError,
    build_tool,
)

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "AnyTool",
    "BaseTool",
    "SearchOrRead",
    "Subject",
    "ToolDefinitionError",
    "build_tool",
]
