"""TaskOutput (formerly BashOutput): a background task's status, exit code
and the output it printed since the last read, waiting for its end when
asked to. It only reads — a task's output, never the machine — so it runs
beside other calls, and an interrupt cancels its wait (the task runs on)."""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from values import valueclass

from ..context import ToolContext
from ..decisions import VALID, Validation, invalid
from ..messages import ProgressCallback, TextBlock, ToolResult, ToolResultMessage
from .base import ReadOnlyTool, build_tool
from .tasks import TaskRead, find_task, read_text

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000


class TaskOutputInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # BashOutput's callers name it bash_id; both are accepted
    task_id: str = Field(validation_alias=AliasChoices("task_id", "bash_id"),
                         description="The ID of the background task (Bash with "
                         "run_in_background returns it)")
    block: bool = Field(default=True, description="Wait for the task to end (up to timeout) "
                        "before answering; false answers at once")
    timeout: int = Field(default=DEFAULT_WAIT_MS, ge=0, le=MAX_WAIT_MS,
                         description=f"How long to wait in milliseconds when block is true "
                         f"(default {DEFAULT_WAIT_MS}, max {MAX_WAIT_MS})")


class TaskOutputTool(ReadOnlyTool[TaskOutputInput]):
    name = "TaskOutput"
    input_model = TaskOutputInput
    deprecated_aliases = ("BashOutput",)
    search_hint = "read a background task's output and status"
    max_result_size_chars = 30_000

    def description(self, data: TaskOutputInput | None = None) -> str:
        return ("Read a background task's status (running, completed, failed, killed), its exit "
                "code, and the output it printed since the last read: each read returns only "
                "new output. With block (the default) it waits up to timeout ms for the task "
                "to end first.")

    def summary(self, data: TaskOutputInput, cwd: str = "") -> str:
        return data.task_id

    def activity_description(self, data: TaskOutputInput, cwd: str = "") -> str:
        return f"Reading task {data.task_id}"

    async def validate_input(self, data: TaskOutputInput, ctx: ToolContext) -> Validation:
        found = find_task(ctx.session, data.task_id)
        return invalid(found) if isinstance(found, str) else VALID

    async def call(self, data: TaskOutputInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        found = find_task(ctx.session, data.task_id)
        if isinstance(found, str):  # forgotten since validation (the registry is bounded)
            return ToolResult(found, is_error=True)
        ended = not found.running
        if not ended and data.block:
            ended = await found.wait(data.timeout / 1000)
        retrieval = "success" if ended else ("timeout" if data.block else "not_ready")
        return ToolResult(_Retrieved(retrieval, found.read()))

    def map_result(self, result: ToolResult, tool_use_id: str) -> ToolResultMessage:
        got = result.data
        if not isinstance(got, _Retrieved):
            return super().map_result(result, tool_use_id)
        return ToolResultMessage(tool_use_id, (TextBlock(read_text(got.read, got.retrieval)),),
                                 result.is_error)


@valueclass
class _Retrieved:
    """A read and whether the wait saw the end (``exit_code`` for the audit
    log's ``tool.completed``)."""

    retrieval: str
    read: TaskRead

    @property
    def exit_code(self) -> int | None:
        return self.read.exit_code


TASK_OUTPUT = build_tool(TaskOutputTool())
