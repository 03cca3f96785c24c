"""ToolSearch: finds deferred tools and makes them callable.

A tool that declares ``should_defer`` is left out of what a session
offers at first (:func:`registry.offered_tools`): its definition costs
prompt space on every request, and a stable first list keeps a client's
prompt cache. ToolSearch finds such tools and returns their definitions —
name, description, input JSON schema — so that the model can call them;
each tool it returns is selected for the rest of the session.

Queries, as in the reference:

- ``select:Read,NotebookEdit``: exactly those tools, by name, any case;
- ``notebook jupyter``: keywords over the deferred tools' names (split at
  capitals and at the ``mcp__server__tool`` separators), search hints and
  descriptions, ranked so that a name hit counts above the rest;
- ``+slack send``: ``+`` marks a term every result's name must contain
  (the rest rank them);
- a whole tool name, or an ``mcp__server`` prefix, finds those tools."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from regexes import regex
from values import valueclass

from ..context import ToolContext
from ..messages import ProgressCallback, ToolResult
from .base import AnyTool, ReadOnlyTool, SearchOrRead, build_tool
from .registry import is_deferred

#: what a query term is worth where it is found: a name's whole word above
#: a part of one, above the search hint, above the description
WEIGHTS = {"name_word": 10, "name_part": 5, "hint": 4, "description": 2}
MAX_RESULTS = 50
#: the deferred tools named when a search finds nothing
MAX_LISTED = 50

_SELECT = regex(r"\s*select\s*:", re.IGNORECASE)
#: a name's words: `NotebookEdit` → notebook, edit; `MCPTool` → mcp, tool
_CAMEL = regex(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_TRIM = "\"'`,.;:()[]{}"


class ToolSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=1000, description=(
        'What to find: "select:Name1,Name2" loads those tools by name; otherwise keywords '
        'matched against the deferred tools\' names, descriptions and hints ("notebook '
        'jupyter"); a term written "+term" must be in the tool\'s name ("+slack send")'))
    max_results: int = Field(default=5, ge=1, le=MAX_RESULTS, description=(
        "The most tools to return (default: 5)"))


@valueclass
class Query:
    """A keyword query: the terms every result's name must hold, and the
    rest."""

    required: tuple[str, ...]
    optional: tuple[str, ...]

    @property
    def terms(self) -> tuple[str, ...]:
        return (*self.required, *self.optional)


def parse_query(text: str) -> Query:
    required: list[str] = []
    optional: list[str] = []
    for raw in text.split():
        word = raw.lstrip("+").strip(_TRIM).lower()
        if word:
            (required if raw.startswith("+") else optional).append(word)
    return Query(tuple(dict.fromkeys(required)), tuple(dict.fromkeys(optional)))


def name_words(name: str) -> tuple[str, ...]:
    """``mcp__github__create_issue`` → github, create, issue;
    ``NotebookEdit`` → notebook, edit."""
    body = name[5:] if name.startswith("mcp__") else name
    pieces = [p for segment in body.split("__") for p in segment.split("_")]
    return tuple(w.lower() for piece in pieces for w in _CAMEL.findall(piece))


def _text_of(tool: AnyTool) -> str:
    """The tool's description, or nothing: a tool whose description fails
    is still found by its name."""
    try:
        return tool.description() or ""
    except Exception:
        return ""


def _has_word(text: str, term: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(term)}", text) is not None


def name_score(tool: AnyTool, term: str) -> int:
    """What a term is worth in the tool's name (0: the name lacks it)."""
    words = name_words(tool.name)
    if term in words:
        return WEIGHTS["name_word"]
    if any(term in w for w in words) or term in tool.name.lower():
        return WEIGHTS["name_part"]
    return 0


def score(tool: AnyTool, term: str, description: str) -> int:
    """What one term is worth for one tool (0: it does not match)."""
    total = name_score(tool, term)
    if _has_word(tool.search_hint.lower(), term):
        total += WEIGHTS["hint"]
    if _has_word(description, term):
        total += WEIGHTS["description"]
    return total


def search(tools: Sequence[AnyTool], query: Query, limit: int) -> list[AnyTool]:
    """The best matches, best first (ties by name); a tool whose name lacks
    a required term is left out, as is one that matches nothing."""
    ranked: list[tuple[int, str, AnyTool]] = []
    for tool in tools:
        if any(name_score(tool, t) == 0 for t in query.required):
            continue
        description = _text_of(tool).lower()
        total = sum(score(tool, term, description) for term in query.terms)
        if total > 0:
            ranked.append((-total, tool.name, tool))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [tool for _, _, tool in ranked[:limit]]


def select(pool: Sequence[AnyTool], text: str) -> tuple[list[AnyTool], list[str]]:
    """``A,B`` → the tools of those names (any case), and the names that
    name no tool."""
    by_name = {t.name.lower(): t for t in pool}
    found: list[AnyTool] = []
    missing: list[str] = []
    for name in dict.fromkeys(n.strip(_TRIM + " ") for n in text.split(",")):
        if not name:
            continue
        tool = by_name.get(name.lower())
        if tool is None:
            missing.append(name)
        elif tool not in found:
            found.append(tool)
    return found, missing


def tool_definition(tool: AnyTool) -> dict[str, Any]:
    """A tool as a client is given it: name, description, input schema."""
    return {"name": tool.name, "description": _text_of(tool),
            "input_schema": tool.input_model.model_json_schema(by_alias=True)}


def find(pool: Sequence[AnyTool], text: str, limit: int) -> tuple[list[AnyTool], list[str]]:
    """The tools a query names (and, for ``select:``, the names unknown)."""
    head = _SELECT.match(text)
    if head is not None:
        return select(pool, text[head.end():])  # every tool named: the model chose them
    wanted = text.strip().lower()
    exact = [t for t in pool if t.name.lower() == wanted]
    if exact:
        return exact, []
    deferred = [t for t in pool if is_deferred(t)]
    if wanted.startswith("mcp__") and " " not in wanted:
        return [t for t in deferred if t.name.lower().startswith(wanted)][:limit], []
    return search(deferred, parse_query(text), limit), []


def render(found: Sequence[AnyTool], missing: Sequence[str], selected: Sequence[str],
           deferred: Sequence[str]) -> str:
    lines: list[str] = []
    if missing:
        lines.append("No such tool: " + ", ".join(missing) + ".")
    if not found:
        lines.append("No matching deferred tools found."
                     + (f" Deferred tools: {', '.join(deferred[:MAX_LISTED])}" if deferred
                        else " This session has no deferred tools."))
        return "\n".join(lines)
    names = ", ".join(t.name for t in found)
    lines.append(f"Found {len(found)} tool{'s' if len(found) > 1 else ''}: {names}."
                 + (f" Now callable: {', '.join(selected)}." if selected else ""))
    lines.append("<functions>")
    lines.extend(f"<function>{json.dumps(tool_definition(t), ensure_ascii=False)}</function>"
                 for t in found)
    lines.append("</functions>")
    return "\n".join(lines)


class ToolSearchTool(ReadOnlyTool[ToolSearchInput]):
    """Read-only and concurrency-safe: it reads the pool, and its one
    change — adding names to the session's selection — is a single
    ``set.update`` with no await around it, so parallel searches each add
    all of theirs (never a read, then a write of a copy, which would lose
    a sibling's selection)."""

    name: ClassVar[str] = "ToolSearch"
    input_model = ToolSearchInput
    search_hint: ClassVar[str] = "find load select deferred tools"

    def description(self, data: ToolSearchInput | None = None) -> str:
        return ("Search for or select deferred tools to make them available. Deferred tools "
                "are not offered until they are loaded with this tool: calling one before "
                "fails. Both query forms load the tools they return: use \"select:Name\" when "
                "the name is known, keywords to discover. The result gives each tool's "
                "name, description and input schema; call it like any other tool.")

    def summary(self, data: ToolSearchInput, cwd: str = "") -> str:
        return data.query

    def activity_description(self, data: ToolSearchInput, cwd: str = "") -> str:
        return f"Searching tools: {data.query}"

    def is_search_or_read(self, data: ToolSearchInput, ctx: ToolContext) -> SearchOrRead:
        return SearchOrRead(is_search=True)

    async def call(self, data: ToolSearchInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        pool = ctx.session.tools
        if not pool:
            return ToolResult("ToolSearch runs inside a session's pipeline; no tool pool is "
                              "bound to this call", is_error=True)
        found, missing = find(pool, data.query, data.max_results)
        selection = ctx.session.selected_tools
        new = [t.name for t in found if is_deferred(t) and t.name not in selection]
        selection.update(new)
        waiting = [t.name for t in pool if is_deferred(t) and t.name not in selection]
        return ToolResult(render(found, missing, new, waiting))


TOOL_SEARCH = build_tool(ToolSearchTool())
