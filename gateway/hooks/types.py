"""The seam the pipeline calls before and after a tool runs, and what
comes back through it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from values import valueclass

from ..context import ToolContext
from ..decisions import Decision
from ..messages import ToolResultMessage


@valueclass
class HookOutcome:
    """What the pre-tool hooks said: a decision (None: no opinion) and why;
    an input to run instead (the call is validated, analyzed and decided
    again on it); context for the model; a request to stop the session;
    the hooks' own non-blocking errors."""

    decision: Decision | None = None
    reason: str = ""
    source: str = "hook"
    updated_input: Mapping[str, Any] | None = None
    context: str = ""
    stop: str | None = None
    errors: tuple[str, ...] = ()


NO_OPINION = HookOutcome()


@valueclass
class PostHookOutcome:
    """What the post-tool hooks said: feedback for the model (``decision:
    "block"`` or exit 2), context, a request to stop, their errors."""

    feedback: str = ""
    context: str = ""
    stop: str | None = None
    errors: tuple[str, ...] = ()


class Hooks(Protocol):
    async def pre_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                           ctx: ToolContext) -> HookOutcome: ...

    async def post_tool_use(self, tool_name: str, tool_input: Mapping[str, Any],
                            result: ToolResultMessage, ctx: ToolContext
                            ) -> PostHookOutcome | None:
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
