"""TodoWrite: the session's task list, replaced whole by each call.

The list lives in the session (``SessionContext.todos``) and nowhere else:
no file is written, so there is nothing to ask about and plan mode lets
it run. The change goes through the result's context modifier, the
channel every session change of a tool takes: the executor runs TodoWrite
alone, and the pipeline applies the change before the next call starts
(a tool's ``call`` itself stays a function of its input)."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from values import valueclass

from ..context import SessionContext, ToolContext
from ..decisions import VALID, Validation, invalid
from ..messages import ContextModifier, ProgressCallback, ToolResult
from .base import build_tool
from .session_tools import SessionTool

Status = Literal["pending", "in_progress", "completed"]

#: the reference's answer, word for word: clients and models know it
RESULT_TEXT = ("Todos have been modified successfully. Ensure that you continue to use the "
               "todo list to track your progress. Please proceed with the current tasks if "
               "applicable")
#: a list is a plan of work, not a store: past this it is a mistake
MAX_TODOS = 100
MAX_TEXT = 2_000


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    content: str = Field(min_length=1, max_length=MAX_TEXT, description=(
        'What is to be done, in the imperative (e.g. "Run the tests")'))
    status: Status = Field(description=(
        "pending (not started), in_progress (being worked on now: at most one at a time) "
        "or completed"))
    active_form: str = Field(alias="activeForm", min_length=1, max_length=MAX_TEXT,
                             description=('The same task as it is being done, shown while it '
                                          'is in progress (e.g. "Running the tests")'))


class TodoWriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[TodoItem] = Field(max_length=MAX_TODOS, description=(
        "The updated todo list: it replaces the whole list"))


@valueclass
class Todo:
    """One task of the session's list, as the terminal shows it."""

    content: str
    status: Status
    active_form: str


def _replace_todos(todos: tuple[Todo, ...]) -> ContextModifier:
    def apply(session: SessionContext) -> None:
        session.todos[:] = todos
    return apply


class TodoWriteTool(SessionTool[TodoWriteInput]):
    name: ClassVar[str] = "TodoWrite"
    input_model = TodoWriteInput
    search_hint: ClassVar[str] = "todo list task plan progress track steps"

    def description(self, data: TodoWriteInput | None = None) -> str:
        return ("Create and update the task list of this session: the steps of the work "
                "with their status, so that progress is visible to the user. Use it for "
                "work of three or more steps; mark a task in_progress before starting it "
                "(one at a time) and completed as soon as it is done. Each call replaces "
                "the whole list; a list whose every task is completed is cleared.")

    def activity_description(self, data: TodoWriteInput, cwd: str = "") -> str:
        current = next((t for t in data.todos if t.status == "in_progress"), None)
        return current.active_form if current is not None else "Updating the todo list"

    def summary(self, data: TodoWriteInput, cwd: str = "") -> str:
        counts = Counter(t.status for t in data.todos)
        return (f"{len(data.todos)} todos: {counts['completed']} completed, "
                f"{counts['in_progress']} in progress, {counts['pending']} pending")

    async def validate_input(self, data: TodoWriteInput, ctx: ToolContext) -> Validation:
        # The reference's prompt asks for one task in progress at a time and
        # its schema lets several through; a list that says two things are
        # being done now tells the person nothing, so it is refused here.
        doing = [t.content for t in data.todos if t.status == "in_progress"]
        if len(doing) > 1:
            return invalid(f"Only one task can be in_progress at a time; {len(doing)} are "
                           f"({', '.join(repr(d[:60]) for d in doing[:4])})", code=2)
        return VALID

    async def call(self, data: TodoWriteInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        todos = tuple(Todo(t.content, t.status, t.active_form) for t in data.todos)
        if todos and all(t.status == "completed" for t in todos):
            todos = ()  # the reference's rule: work done, list cleared
        return ToolResult(RESULT_TEXT, context_modifier=_replace_todos(todos))


TODO_WRITE = build_tool(TodoWriteTool())
