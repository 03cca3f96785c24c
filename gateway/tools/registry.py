"""The registry, in the reference's three layers: :func:`all_base_tools`
(the one list), :func:`get_tools` (what a session may see: simple mode,
blanket denials, ``is_enabled``), :func:`assemble_tool_pool` (built-ins as
a sorted prefix, MCP tools as a sorted suffix, a built-in winning a clash —
a stable prefix keeps a client's prompt cache); then what a session offers
now (:func:`offered_tools`: a deferred tool waits for ToolSearch)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence, Set

from values import valueclass

from .base import AnyTool

#: module -> instance name, in the order they are offered before sorting;
#: each module is imported only when the pool is built
_BUILTINS: tuple[tuple[str, str], ...] = (
    ("bash", "BASH"),
    ("read", "READ"),
    ("edit", "EDIT"),
    ("write", "WRITE"),
    ("glob", "GLOB"),
    ("grep", "GREP"),
    ("notebook_edit", "NOTEBOOK_EDIT"),
    ("task_output", "TASK_OUTPUT"),
    ("task_stop", "TASK_STOP"),
    ("todo_write", "TODO_WRITE"),
    ("tool_search", "TOOL_SEARCH"),
    ("ask_user", "ASK_USER_QUESTION"),
    ("plan_mode", "ENTER_PLAN_MODE"),
    ("plan_mode", "EXIT_PLAN_MODE"),
    ("web_fetch", "WEB_FETCH"),
)

#: SHELLGATE_SIMPLE=1: the reference's simple mode, three tools
SIMPLE_TOOLS = ("Bash", "Read", "Edit")


def all_base_tools(optional: Iterable[str] = ()) -> list[AnyTool]:
    """Every built-in tool, and the optional ones configuration switched on
    (by module name; none exist yet — part 2 adds them)."""
    tools: list[AnyTool] = []
    for module, attr in (*_BUILTINS, *((m, m.upper()) for m in optional)):
        tool: AnyTool = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
        tools.append(tool)
    return tools


#: the module of each built-in tool, by its name (for a caller that needs
#: one tool and should not import the others: `shellgate hook`)
_MODULE_OF = {"Bash": "bash", "Read": "read", "Edit": "edit", "Write": "write", "Glob": "glob",
              "Grep": "grep", "NotebookEdit": "notebook_edit", "WebFetch": "web_fetch"}


def builtin_tool(name: str) -> AnyTool | None:
    """The built-in tool ``name``, importing its module alone (``None``: no
    such tool among those :data:`_MODULE_OF` knows)."""
    module = _MODULE_OF.get(name)
    if module is None:
        return None
    attr = next(a for m, a in _BUILTINS if m == module)
    tool: AnyTool = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
    return tool if tool.name == name else None


@valueclass
class PoolOptions:
    """What shapes the pool: simple mode, and the names of tools a deny rule
    names whole (``Bash`` with no parentheses, ``mcp__server``)."""

    simple: bool = False
    denied: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, denied: Sequence[str] = ()) -> PoolOptions:
        return cls(simple=os.environ.get("SHELLGATE_SIMPLE", "") not in ("", "0"),
                   denied=tuple(denied))


def blanket_denied(tool_name: str, denied: Sequence[str]) -> bool:
    """A deny rule that names the whole tool (``Read``), or the whole MCP
    server it comes from (``mcp__server``, ``mcp__server__*``): the tool is
    removed before any client sees it."""
    for rule in denied:
        if rule == tool_name:
            return True
        if rule.startswith("mcp__") and tool_name.startswith("mcp__"):
            server = rule.removesuffix("__*")
            if "__" not in server[5:] and tool_name.startswith(server + "__"):
                return True
    return False


def get_tools(options: PoolOptions, base: Sequence[AnyTool] | None = None) -> list[AnyTool]:
    tools = list(all_base_tools() if base is None else base)
    if options.simple:
        tools = [t for t in tools if t.name in SIMPLE_TOOLS]
    return [t for t in tools if not blanket_denied(t.name, options.denied) and t.is_enabled()]


def assemble_tool_pool(options: PoolOptions, extra_tools: Sequence[AnyTool] = (),
                       base: Sequence[AnyTool] | None = None) -> list[AnyTool]:
    builtins = sorted(get_tools(options, base), key=lambda t: t.name)
    names = {t.name for t in builtins}
    extra = sorted((t for t in extra_tools
                    if not blanket_denied(t.name, options.denied) and t.is_enabled()),
                   key=lambda t: t.name)
    pool = list(builtins)
    for tool in extra:
        if tool.name not in names:  # a built-in wins a clash
            names.add(tool.name)
            pool.append(tool)
    return pool


@valueclass
class Found:
    tool: AnyTool
    #: the deprecated alias the call used, if any
    deprecated_alias: str | None = None


def find_tool(pool: Sequence[AnyTool], name: str) -> Found | None:
    """By name, then by alias (a deprecated alias is reported)."""
    for tool in pool:
        if tool.name == name:
            return Found(tool)
    for tool in pool:
        if name in tool.aliases:
            return Found(tool)
        if name in tool.deprecated_aliases:
            return Found(tool, name)
    return None


# -- deferred tools -----------------------------------------------------------
#: the tool that selects deferred tools; without it in the pool nothing is
#: deferred (a tool no call could ever select would be lost)
TOOL_SEARCH = "ToolSearch"


def is_deferred(tool: AnyTool) -> bool:
    """Left out of what a session offers until ToolSearch selects it (the
    tool's ``should_defer``; upstream MCP tools will set it too)."""
    return bool(tool.should_defer)


def defers(pool: Sequence[AnyTool]) -> bool:
    return any(t.name == TOOL_SEARCH for t in pool)


def offered_tools(pool: Sequence[AnyTool], selected: Set[str]) -> list[AnyTool]:
    """What the session offers now: every tool but the deferred ones
    ToolSearch has not selected (the list a client is shown, and the names
    an unknown tool's error gives)."""
    if not defers(pool):
        return list(pool)
    return [t for t in pool if not is_deferred(t) or t.name in selected]


def held_back(pool: Sequence[AnyTool], tool: AnyTool, selected: Set[str]) -> bool:
    """Is ``tool`` (found in ``pool``) deferred and not yet selected?"""
    return defers(pool) and is_deferred(tool) and tool.name not in selected
