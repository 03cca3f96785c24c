"""TaskStop (formerly KillShell): end a background task and its whole
process tree — the sandbox's own stop, which kills every process the
command forked (a `sleep` left behind by a subshell included) — and say
what it printed last. It kills, so it is not read-only: the pipeline asks
about it as about any other change."""

from __future__ import annotations

import asyncio

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from ..context import ToolContext
from ..decisions import VALID, Validation, invalid
from ..messages import ProgressCallback, ToolResult
from .base import BaseTool, build_tool
from .tasks import find_task, read_text


class TaskStopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # KillShell's callers name it shell_id; both are accepted
    task_id: str = Field(validation_alias=AliasChoices("task_id", "shell_id"),
                         description="The ID of the background task to stop")


class TaskStopTool(BaseTool[TaskStopInput]):
    name = "TaskStop"
    input_model = TaskStopInput
    deprecated_aliases = ("KillShell",)
    search_hint = "stop a background task"

    def description(self, data: TaskStopInput | None = None) -> str:
        return ("Stop a running background task by its ID: the task and every process it "
                "started end. Returns what it printed since the last read.")

    def summary(self, data: TaskStopInput, cwd: str = "") -> str:
        return data.task_id

    def activity_description(self, data: TaskStopInput, cwd: str = "") -> str:
        return f"Stopping task {data.task_id}"

    async def validate_input(self, data: TaskStopInput, ctx: ToolContext) -> Validation:
        found = find_task(ctx.session, data.task_id)
        if isinstance(found, str):
            return invalid(found)
        if not found.running:
            return invalid(_already_ended(found.task_id, found.status, found.exit_code))
        return VALID

    async def call(self, data: TaskStopInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        found = find_task(ctx.session, data.task_id)
        if isinstance(found, str):
            return ToolResult(found, is_error=True)
        # shielded: an interrupt must not leave a stop half done, the tree
        # half killed and the task still listed as running
        stopped = await asyncio.shield(asyncio.to_thread(found.stop, "TaskStop"))
        last = found.read()
        if not stopped:
            head = _already_ended(found.task_id, last.status, last.exit_code)
        elif found.running:
            return ToolResult(f"Task {found.task_id} was told to stop but has not ended yet; "
                              "TaskOutput shows when it does.\n" + read_text(last),
                              is_error=True)
        else:
            head = (f"Stopped task {found.task_id} ({_short(found.command)}): its process "
                    "tree was killed. What it printed since the last read:")
        return ToolResult(f"{head}\n{read_text(last)}")


def _already_ended(task_id: str, status: str, code: int | None) -> str:
    exit_code = f", exit code {code}" if code is not None else ""
    return (f"Task {task_id} already ended ({status}{exit_code}): nothing to stop; "
            "TaskOutput reads what it printed.")


def _short(command: str) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= 60 else flat[:59] + "…"


TASK_STOP = build_tool(TaskStopTool())
