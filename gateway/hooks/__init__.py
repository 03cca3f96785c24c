"""Hooks: the seam the pipeline calls before and after a tool runs. The
hooks issue fills it with configured scripts (matchers, parallel runs,
timeouts); here the interface, and no hooks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..context import ToolContext
from ..decisions import Decision
from ..messages import ToolResultMessage


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """What the pre-tool hooks said: a decision (None: no opinion) and why."""

    decision: Decision | None = None
    reason: str = ""
    source: str = "hook"


NO_OPINION = HookOutcome()


class Hooks(Protocol):
    async def pre_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                           ctx: ToolContext) -> HookOutcome: ...

    async def post_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                            result: ToolResultMessage, ctx: ToolContext) -> None:
        """After a call that succeeded (PostToolUse) — or failed
        (PostToolUseFailure), told by ``result.is_error``."""


class NoHooks:
    """The pipeline without hooks configured."""

    async def pre_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                           ctx: ToolContext) -> HookOutcome:
        return NO_OPINION

    async def post_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                            result: ToolResultMessage, ctx: ToolContext) -> None:
        return None


__all__ = ["NO_OPINION", "HookOutcome", "Hooks", "NoHooks"]
