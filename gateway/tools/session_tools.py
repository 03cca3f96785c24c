"""What the session's own tools share: TodoWrite, AskUserQuestion,
EnterPlanMode and ExitPlanMode act on the session (its task list, its
mode) or on the person at the terminal — never on a file, a process or the
network.

Two declarations, made in a tool's class and never by its input:

- :class:`SessionTool`: read-only in the permission sense (nothing outside
  the session changes, so nothing is asked and plan mode lets it run), yet
  not concurrency-safe (it changes state later calls read, or needs the
  terminal alone), so the executor runs it by itself.
- :class:`PlanModeExempt`: plan mode lets the tool run although it is not
  read-only (ExitPlanMode, which a person must approve). The decider
  grants it only to a tool whose calls name no command, path or domain,
  and never to the tools that change files or run commands, whatever
  their class says (:func:`gateway.permissions.modes.plan_exempt`)."""

from __future__ import annotations

from typing import Any, Literal

from ..context import ToolContext
from .base import BaseTool, In, Subject


class SessionTool(BaseTool[In]):
    """A tool that changes only the session's own state (or asks the
    person): read-only for permissions, alone for the executor."""

    def is_read_only(self, data: In, ctx: ToolContext) -> bool:
        return True

    def is_concurrency_safe(self, data: In, ctx: ToolContext) -> bool:
        # its change (the task list, the mode) must hold before the next
        # call starts: the pipeline applies a context change only from a
        # call that ran alone
        return False

    def permission_matcher(self, data: In, ctx: ToolContext) -> Subject:
        return Subject("none")

    def interrupt_behavior(self) -> Literal["cancel", "block"]:
        return "cancel"


class PlanModeExempt:
    """Marks a tool that plan mode lets run although it is not read-only.
    A marker class, not a flag: an upstream MCP tool's proxy (one class for
    every server's tools) cannot be made exempt by what a server says."""


def exempt_in_plan_mode(tool: Any) -> bool:
    """Whether ``tool``'s class declares the exemption (the decider adds
    its own conditions)."""
    return isinstance(tool, PlanModeExempt)
