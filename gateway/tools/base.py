"""The tool contract and ``build_tool()``, which fills what a tool leaves out
with fail-closed defaults.

A tool *declares* (its schema, whether an input only reads, what rules
see); the pipeline *decides*. The defaults are chosen for the asymmetry of
their failures: a reader wrongly taken for a writer costs a prompt; a
writer taken for a reader runs unasked beside other calls. So a tool that
says nothing is not read-only, not concurrency-safe, and runs alone."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel

from values import valueclass

from ..context import ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation
from ..errors import GatewayError
from ..messages import ProgressCallback, TextBlock, ToolResult, ToolResultMessage

In = TypeVar("In", bound=BaseModel)

#: the reference's default: above this a result is persisted, a preview sent
DEFAULT_MAX_RESULT_CHARS = 50_000


@valueclass
class SearchOrRead:
    """How a call is shown collapsed: a search, a read, a listing."""

    is_search: bool = False
    is_read: bool = False
    is_list: bool = False


@valueclass
class Subject:
    """What permission rules see of a call: Bash's subcommands, a file
    path with the access it needs, a domain — or nothing (rules then match
    the tool's bare name only)."""

    kind: Literal["command", "path", "domain", "none"]
    values: tuple[str, ...] = ()
    access: Literal["read", "write", ""] = ""
    #: Bash's whole analysis (``analyzers.BashAnalysis``): rules are
    #: matched subcommand by subcommand, with the paths each one touches
    analysis: Any = None


class BaseTool(Generic[In]):
    """The contract every tool meets, with the fail-closed defaults. A tool
    subclasses it and overrides what it knows; :func:`build_tool` checks the
    required parts are there."""

    name: ClassVar[str] = ""
    input_model: ClassVar[type[BaseModel]]
    aliases: ClassVar[tuple[str, ...]] = ()
    #: aliases that still work but add a note to the result
    deprecated_aliases: ClassVar[tuple[str, ...]] = ()
    search_hint: ClassVar[str] = ""
    #: left out of the first prompt; found through tool search
    should_defer: ClassVar[bool] = False
    max_result_size_chars: ClassVar[int] = DEFAULT_MAX_RESULT_CHARS

    # -- describing ------------------------------------------------------
    def user_facing_name(self, data: In | None = None) -> str:
        return self.name

    def description(self, data: In | None = None) -> str:
        raise NotImplementedError

    def prompt(self) -> str:
        """Usage text for a system prompt."""
        return self.description()

    def activity_description(self, data: In, cwd: str = "") -> str:
        """What the call is doing, for a status line (``cwd``: the
        session's working directory, to show paths relative to it)."""
        return f"Running {self.name}"

    def summary(self, data: In, cwd: str = "") -> str:
        """The call in a few words (a path, a pattern, a command)."""
        return ""

    def display_input(self, data: In, ctx: ToolContext) -> dict[str, Any]:
        """A copy of the input for people and logs, paths made absolute.
        What goes back to the model is the model's own input, untouched."""
        shown = data.model_dump(exclude_none=True, by_alias=True)
        for key in ("file_path", "path", "notebook_path"):
            value = shown.get(key)
            if isinstance(value, str) and value and not value.startswith("/"):
                shown[key] = os.path.normpath(os.path.join(ctx.session.cwd, value))
        return shown

    def classifier_input(self, data: In) -> str:
        """What an automatic classifier would be shown (none by default)."""
        return ""

    # -- declaring -------------------------------------------------------
    def is_enabled(self) -> bool:
        return True

    def is_read_only(self, data: In, ctx: ToolContext) -> bool:
        return False

    def is_concurrency_safe(self, data: In, ctx: ToolContext) -> bool:
        return False

    def is_destructive(self, data: In, ctx: ToolContext) -> bool:
        return False

    def is_search_or_read(self, data: In, ctx: ToolContext) -> SearchOrRead:
        return SearchOrRead()

    def interrupt_behavior(self) -> Literal["cancel", "block"]:
        """What a user's interrupt does to a running call: ``cancel`` stops
        it, ``block`` lets it finish (a write half done is worse)."""
        return "block"

    def permission_matcher(self, data: In, ctx: ToolContext) -> Subject:
        return Subject("none")

    # -- the call's stages ----------------------------------------------
    async def prepare(self, data: In, ctx: ToolContext) -> None:
        """Facts gathered before the permission stage, concurrently with the
        pre-tool hooks (Bash's analysis)."""

    async def validate_input(self, data: In, ctx: ToolContext) -> Validation:
        return VALID

    async def check_permissions(self, data: In, ctx: ToolContext) -> PermissionResult:
        """The tool's own opinion. The default has none to give: it is
        passed on as an allow, and the decider still treats an input that
        is not read-only as one to ask about."""
        return PermissionResult(Decision.ALLOW, "tool", f"{self.name} has no checks of its own")

    async def call(self, data: In, ctx: ToolContext, on_progress: ProgressCallback) -> ToolResult:
        raise NotImplementedError

    def map_result(self, result: ToolResult, tool_use_id: str) -> ToolResultMessage:
        data = result.data
        text = data if isinstance(data, str) else str(data)
        return ToolResultMessage(tool_use_id, (TextBlock(text),), result.is_error)

    # -- the terminal ------------------------------------------------------
    def render_group(self, calls: Sequence[tuple[In, ToolResultMessage | None]],
                     cwd: str = "") -> str:
        """Several calls of this tool as one line or block for the
        terminal (``Read 3 files: a.py, b.py, c.py``)."""
        lines = []
        for data, result in calls:
            mark = "" if result is None else (" ✗" if result.is_error else " ✓")
            lines.append(f"{self.user_facing_name(data)}({self.summary(data, cwd)}){mark}")
        return "\n".join(lines)


class ReadOnlyTool(BaseTool[In]):
    """A tool whose every input only reads (Read, Glob, Grep): read-only,
    safe beside other calls, and stopped by an interrupt. Declared once
    here so no reader can forget a part of it."""

    def is_read_only(self, data: In, ctx: ToolContext) -> bool:
        return True

    def is_concurrency_safe(self, data: In, ctx: ToolContext) -> bool:
        return True

    def interrupt_behavior(self) -> Literal["cancel", "block"]:
        return "cancel"


AnyTool = BaseTool[Any]


class ToolDefinitionError(GatewayError):
    """A tool definition lacks a part every tool must have (a programming
    error, found when the registry is built, never during a call)."""


def build_tool(tool: BaseTool[In]) -> BaseTool[In]:
    """Check that ``tool`` has what no default can give — a name, an input
    model, a description and a ``call`` — and return it. Everything else
    falls back on :class:`BaseTool`'s fail-closed defaults."""
    cls = type(tool)
    if not tool.name:
        raise ToolDefinitionError(f"{cls.__name__} has no name")
    model = getattr(cls, "input_model", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ToolDefinitionError(f"{tool.name}: input_model must be a pydantic model")
    for member in ("call", "description"):
        if getattr(cls, member) is getattr(BaseTool, member):
            raise ToolDefinitionError(f"{tool.name}: {member}() is not defined")
    if tool.max_result_size_chars <= 0:
        raise ToolDefinitionError(f"{tool.name}: max_result_size_chars must be positive")
    return tool
