"""ToolSearch and deferred tools through the real pipeline: a deferred
tool is left out of what the session offers and refused until ToolSearch
selects it; select:, keywords, +terms (in the name) and max_results find
the tools and return their definitions."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from gateway.context import ToolContext
from gateway.messages import ProgressCallback, ToolResult, ToolResultMessage, ToolUse
from gateway.session import Session
from gateway.tools import AnyTool, BaseTool, build_tool
from gateway.tools.registry import all_base_tools, offered_tools
from gateway.tools.tool_search import TOOL_SEARCH, ToolSearchInput, name_words


class EchoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="what to echo")


class Deferred(BaseTool[EchoInput]):
    """A deferred tool that echoes its input (a stand-in for an MCP tool)."""

    input_model = EchoInput
    should_defer: ClassVar[bool] = True

    def __init__(self, name: str, description: str, hint: str = "") -> None:
        self.name = name  # type: ignore[misc]  # one class, several tools
        self.search_hint = hint  # type: ignore[misc]
        self._description = description

    def description(self, data: EchoInput | None = None) -> str:
        return self._description

    def is_read_only(self, data: EchoInput, ctx: ToolContext) -> bool:
        return True

    async def call(self, data: EchoInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        return ToolResult(f"{self.name}: {data.text}")


DEFERRED: list[AnyTool] = [build_tool(t) for t in (
    Deferred("JupyterCell", "Edit one cell of a notebook", "notebook jupyter ipynb cell"),
    Deferred("mcp__slack__send_message", "Post a message to a Slack channel"),
    Deferred("mcp__slack__list_channels", "List the channels of a workspace"),
    Deferred("WeatherLookup", "The weather forecast for a city; can post it to slack"),
)]


@pytest.fixture
def opened(workspace: Path, tmp_path: Path) -> Session:
    (tmp_path / "home").mkdir()
    return Session.open(str(workspace), extra_tools=[TOOL_SEARCH, *DEFERRED],
                        home=str(tmp_path / "home"), results_dir=str(tmp_path))


def call(session: Session, name: str, data: dict[str, Any]) -> ToolResultMessage:
    return asyncio.run(session.run(ToolUse(f"toolu_{name}", name, data)))


def search(session: Session, query: str, **kw: Any) -> ToolResultMessage:
    return call(session, "ToolSearch", {"query": query, **kw})


def definitions(result: ToolResultMessage) -> list[dict[str, Any]]:
    return [json.loads(d) for d in re.findall(r"<function>(.*)</function>", result.text)]


def names(result: ToolResultMessage) -> list[str]:
    return [d["name"] for d in definitions(result)]


# -- deferral ------------------------------------------------------------------------

def test_a_deferred_tool_is_not_offered_and_is_refused_until_selected(opened: Session) -> None:
    offered = [t.name for t in offered_tools(opened.tools, opened.context.selected_tools)]
    assert "ToolSearch" in offered and "Read" in offered and "JupyterCell" not in offered
    refused = call(opened, "JupyterCell", {"text": "hi"})
    assert refused.is_error and 'query "select:JupyterCell"' in refused.text
    unknown = call(opened, "NoSuchTool", {})
    assert "Tools: " in unknown.text and "JupyterCell" not in unknown.text


def test_a_deferred_tool_is_callable_once_selected(opened: Session) -> None:
    assert call(opened, "JupyterCell", {"text": "hi"}).is_error
    found = search(opened, "select:jupytercell")
    assert names(found) == ["JupyterCell"] and "Now callable: JupyterCell" in found.text
    assert opened.context.selected_tools == {"JupyterCell"}
    result = call(opened, "JupyterCell", {"text": "hi"})
    assert not result.is_error and result.text == "JupyterCell: hi"
    assert "JupyterCell" in [t.name for t in offered_tools(opened.tools,
                                                           opened.context.selected_tools)]


def test_without_tool_search_in_the_pool_nothing_is_deferred(
        workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    base = [t for t in all_base_tools() if t.name != "ToolSearch"]
    session = Session.open(str(workspace), base_tools=base, extra_tools=DEFERRED,
                           home=str(tmp_path / "home"), results_dir=str(tmp_path))
    assert not call(session, "JupyterCell", {"text": "hi"}).is_error


# -- queries -----------------------------------------------------------------------------

def test_select_returns_exactly_the_tools_named_with_their_definitions(opened: Session) -> None:
    result = search(opened, "select:Read, MCP__SLACK__SEND_MESSAGE,Nope")
    assert not result.is_error
    assert names(result) == ["Read", "mcp__slack__send_message"]
    assert "No such tool: Nope." in result.text
    send = definitions(result)[1]
    assert send["description"] == "Post a message to a Slack channel"
    assert send["input_schema"]["properties"]["text"]["description"] == "what to echo"
    assert send["input_schema"]["additionalProperties"] is False
    assert opened.context.selected_tools == {"mcp__slack__send_message"}  # Read was offered


@pytest.mark.parametrize(("query", "expected"), [
    ("jupyter", ["JupyterCell"]),  # the search hint
    ("notebook", ["JupyterCell"]),  # hint and description
    ("slack", ["mcp__slack__send_message", "mcp__slack__list_channels", "WeatherLookup"]),
    ("slack channels", ["mcp__slack__list_channels", "mcp__slack__send_message",
                        "WeatherLookup"]),
    ("+slack forecast", ["mcp__slack__send_message", "mcp__slack__list_channels"]),
    ("+weather forecast", ["WeatherLookup"]),  # a required term is one of the name's
    ("+channel", ["mcp__slack__list_channels"]),  # a part of a name's word
    ("mcp__slack", ["mcp__slack__list_channels", "mcp__slack__send_message"]),
    ("weatherlookup", ["WeatherLookup"]),
])
def test_keywords_rank_name_hits_above_description_hits(
        opened: Session, query: str, expected: list[str]) -> None:
    result = search(opened, query, max_results=10)
    assert names(result) == expected, result.text


def test_keyword_results_are_loaded_too_and_max_results_bounds_them(opened: Session) -> None:
    result = search(opened, "slack", max_results=1)
    assert names(result) == ["mcp__slack__send_message"]
    assert opened.context.selected_tools == {"mcp__slack__send_message"}
    assert not call(opened, "mcp__slack__send_message", {"text": "x"}).is_error


def test_a_search_that_finds_nothing_names_the_deferred_tools(opened: Session) -> None:
    search(opened, "select:JupyterCell")
    result = search(opened, "kubernetes deploy")
    assert not result.is_error and "No matching deferred tools found" in result.text
    assert "WeatherLookup" in result.text and "JupyterCell" not in result.text  # loaded


@pytest.mark.parametrize("data", [{"query": ""}, {"query": "x", "max_results": 0},
                                  {"query": "x", "max_results": 51}, {"q": "x"}])
def test_a_malformed_query_is_refused(opened: Session, data: dict[str, Any]) -> None:
    assert call(opened, "ToolSearch", data).is_error


@pytest.mark.parametrize(("name", "words"), [
    ("NotebookEdit", ("notebook", "edit")),
    ("mcp__github__create_issue", ("github", "create", "issue")),
    ("mcp__my-server__getPRComments", ("my", "server", "get", "pr", "comments")),
    ("MCPTool", ("mcp", "tool")),
    ("WebFetch2", ("web", "fetch", "2")),
])
def test_tool_names_split_into_words(name: str, words: tuple[str, ...]) -> None:
    assert name_words(name) == words


# -- the session's selection ---------------------------------------------------------

def test_parallel_searches_each_add_their_selection(opened: Session) -> None:
    async def go() -> Sequence[ToolResultMessage]:
        executor = opened.executor()
        for i, tool in enumerate(DEFERRED):
            executor.add(ToolUse(f"toolu_{i}", "ToolSearch", {"query": f"select:{tool.name}"}))
        return await executor.results()

    results = asyncio.run(go())
    assert not any(r.is_error for r in results)
    assert opened.context.selected_tools == {t.name for t in DEFERRED}


def test_tool_search_is_read_only_and_concurrency_safe(tool_context: Any) -> None:
    ctx, data = tool_context(), ToolSearchInput(query="x")
    assert TOOL_SEARCH.is_read_only(data, ctx) and TOOL_SEARCH.is_concurrency_safe(data, ctx)


def test_outside_a_pipeline_tool_search_says_it_has_no_pool(tool_context: Any) -> None:
    """Run in a fresh context: no lookup bound a pool there."""
    import contextvars

    ctx, data = tool_context(), ToolSearchInput(query="select:Read")
    result = contextvars.Context().run(
        asyncio.run, TOOL_SEARCH.call(data, ctx, lambda _: None))
    assert result.is_error and "no tool pool" in result.data
