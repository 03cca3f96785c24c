"""TodoWrite through the real pipeline: it replaces the session's list,
answers with the reference's text, writes nothing to disk, asks nobody,
and runs in plan mode."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from gateway.context import SessionContext, ToolContext
from gateway.messages import ToolResultMessage, ToolUse
from gateway.session import Session
from gateway.tools.todo_write import RESULT_TEXT, TODO_WRITE, Todo, TodoWriteInput


def todo(content: str, status: str = "pending") -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": f"Doing: {content}"}


@pytest.fixture
def opened(workspace: Path, tmp_path: Path) -> Session:
    (tmp_path / "home").mkdir()
    return Session.open(str(workspace), extra_tools=[TODO_WRITE], home=str(tmp_path / "home"),
                        results_dir=str(tmp_path))


def run(opened: Session, todos: list[dict[str, str]] | Any) -> ToolResultMessage:
    return asyncio.run(opened.run(ToolUse("toolu_todo", "TodoWrite", {"todos": todos})))


def snapshot(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p), p.stat().st_mtime_ns) for p in root.rglob("*"))


def test_a_call_replaces_the_whole_list_and_answers_with_the_reference_text(
        opened: Session, workspace: Path) -> None:
    first = run(opened, [todo("Read the code", "in_progress"), todo("Write the patch")])
    assert not first.is_error and first.text == RESULT_TEXT
    assert opened.context.todos == [Todo("Read the code", "in_progress", "Doing: Read the code"),
                                     Todo("Write the patch", "pending", "Doing: Write the patch")]
    before = snapshot(workspace)
    run(opened, [todo("Read the code", "completed"), todo("Write the patch", "in_progress"),
                  todo("Run the tests")])
    assert [(t.content, t.status) for t in opened.context.todos] == [
        ("Read the code", "completed"), ("Write the patch", "in_progress"),
        ("Run the tests", "pending")]
    assert snapshot(workspace) == before  # nothing on disk changed


def test_a_list_whose_every_task_is_completed_is_cleared(opened: Session) -> None:
    run(opened, [todo("a", "in_progress")])
    result = run(opened, [todo("a", "completed"), todo("b", "completed")])
    assert not result.is_error and opened.context.todos == []


def test_an_empty_list_clears_the_tasks(opened: Session) -> None:
    run(opened, [todo("a")])
    assert not run(opened, []).is_error and opened.context.todos == []


@pytest.mark.parametrize(("todos", "expected"), [
    ([todo("a", "in_progress"), todo("b", "in_progress")], "Only one task can be in_progress"),
    ([{"content": "", "status": "pending", "activeForm": "x"}], "todos.0.content"),
    ([{"content": "a", "status": "done", "activeForm": "x"}], "todos.0.status"),
    ([{"content": "a", "status": "pending"}], "`todos.0.activeForm` is missing"),
    ([{**todo("a"), "priority": "high"}], "unexpected parameter `todos.0.priority`"),
    ([todo(str(i)) for i in range(101)], "todos"),
    ("a, b", "todos"),
])
def test_a_malformed_list_is_refused_and_the_old_one_kept(
        opened: Session, todos: Any, expected: str) -> None:
    run(opened, [todo("kept", "in_progress")])
    result = run(opened, todos)
    assert result.is_error and expected in result.text, result.text
    assert [t.content for t in opened.context.todos] == ["kept"]


def test_it_runs_unasked_and_in_plan_mode(opened: Session) -> None:
    assert opened.context.approver is None  # nobody to ask: an ask would be denied
    opened.context.mode = "plan"
    assert not run(opened, [todo("plan the work", "in_progress")]).is_error
    assert len(opened.context.todos) == 1


def test_it_changes_the_session_only_through_its_context_modifier(
        tool_context: Any, workspace: Path) -> None:
    ctx: ToolContext = tool_context()
    data = TodoWriteInput.model_validate({"todos": [todo("a")]})
    result = asyncio.run(TODO_WRITE.call(data, ctx, lambda _: None))
    assert ctx.session.todos == [] and result.context_modifier is not None
    other = SessionContext(workspace=str(workspace), cwd=str(workspace),
                           policy=ctx.session.policy, home=os.fspath(workspace),
                           results_dir=os.fspath(workspace))
    result.context_modifier(other)
    assert [t.content for t in other.todos] == ["a"]
    assert not TODO_WRITE.is_concurrency_safe(data, ctx)  # runs alone: the change holds next
