"""build_tool's fail-closed defaults and the registry's three layers."""

from __future__ import annotations

from typing import ClassVar

import pytest
from kit import ForgetfulTool, Timeline, WaitInput, WaitTool, wait_tool

from gateway.context import SessionContext, ToolContext
from gateway.tools import BaseTool, ToolDefinitionError, build_tool
from gateway.tools.registry import (
    PoolOptions,
    all_base_tools,
    assemble_tool_pool,
    blanket_denied,
    find_tool,
    get_tools,
)


def test_a_tool_that_declares_nothing_is_a_writer_that_runs_alone(
        session: SessionContext) -> None:
    tool = build_tool(ForgetfulTool(Timeline()))
    data, ctx = WaitInput(), ToolContext(session, "t")
    assert not tool.is_read_only(data, ctx)
    assert not tool.is_concurrency_safe(data, ctx)
    assert not tool.is_destructive(data, ctx)
    assert tool.classifier_input(data) == ""
    assert tool.interrupt_behavior() == "block"


class NoName(WaitTool):
    name: ClassVar[str] = ""


class NoCall(BaseTool[WaitInput]):
    name = "NoCall"
    input_model = WaitInput

    def description(self, data: WaitInput | None = None) -> str:
        return "cannot run"


class NoModel(BaseTool[WaitInput]):
    name = "NoModel"


@pytest.mark.parametrize("tool", [NoName(), NoCall(), NoModel()])
def test_build_tool_refuses_a_definition_missing_what_no_default_can_give(
        tool: BaseTool[WaitInput]) -> None:
    with pytest.raises(ToolDefinitionError):
        build_tool(tool)


def test_the_base_tools_are_the_reference_set() -> None:
    names = sorted(t.name for t in all_base_tools())
    assert names == ["AskUserQuestion", "Bash", "Edit", "EnterPlanMode", "ExitPlanMode", "Glob",
                     "Grep", "NotebookEdit", "Read", "TaskOutput", "TaskStop", "TodoWrite",
                     "ToolSearch", "WebFetch", "Write"]


def test_simple_mode_offers_bash_read_and_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_SIMPLE", "1")
    assert [t.name for t in get_tools(PoolOptions.from_env())] == ["Bash", "Read", "Edit"]
    monkeypatch.setenv("SHELLGATE_SIMPLE", "0")
    assert len(get_tools(PoolOptions.from_env())) == len(all_base_tools())


@pytest.mark.parametrize(("name", "rules", "removed"), [
    ("Bash", ["Bash"], True),
    ("Bash", ["Bash(rm:*)"], False),  # a rule about some commands keeps the tool
    ("mcp__db__query", ["mcp__db"], True),
    ("mcp__db__query", ["mcp__db__*"], True),
    ("mcp__db__query", ["mcp__db__query"], True),
    ("mcp__db__query", ["mcp__dbx"], False),
    ("mcp__db__query", ["mcp__db__drop"], False),
])
def test_a_blanket_deny_rule_removes_the_tool_before_any_client_sees_it(
        name: str, rules: list[str], removed: bool) -> None:
    assert blanket_denied(name, rules) is removed


def test_the_pool_puts_sorted_built_ins_first_and_a_built_in_wins_a_clash() -> None:
    class Mcp(WaitTool):
        name = "mcp__srv__a"

    class Clash(WaitTool):
        name = "Read"

    class Disabled(WaitTool):
        name = "mcp__srv__off"

        def is_enabled(self) -> bool:
            return False

    extra = [build_tool(Clash()), build_tool(Mcp()), build_tool(Disabled()), wait_tool()]
    pool = assemble_tool_pool(PoolOptions(denied=("Grep",)), extra)
    names = [t.name for t in pool]
    builtins = sorted(t.name for t in all_base_tools() if t.name != "Grep")
    assert names == [*builtins, "Wait", "mcp__srv__a"]
    read = find_tool(pool, "Read")
    assert read is not None and not isinstance(read.tool, WaitTool)


def test_a_tool_is_found_by_name_alias_or_deprecated_alias() -> None:
    class Aliased(WaitTool):
        name = "New"
        aliases = ("Other",)
        deprecated_aliases = ("Old",)

    pool = [build_tool(Aliased())]
    found = find_tool(pool, "Other")
    assert found is not None and found.deprecated_alias is None
    old = find_tool(pool, "Old")
    assert old is not None and old.deprecated_alias == "Old"
    assert find_tool(pool, "Nope") is None
