"""Edit: replace an exact string in a file the session has read — never a
regex; curly quotes in the file match straight ones typed by the model;
the file's encoding and line endings are kept."""

from __future__ import annotations

import asyncio

from pydantic import Field

from ..context import ToolContext
from ..decisions import VALID, PermissionResult, Validation, invalid
from ..messages import ProgressCallback, ToolResult, ToolResultMessage
from .base import BaseTool, Subject, build_tool
from .filetext import (
    Code,
    FileInput,
    check_path,
    find_spans,
    pin,
    recheck,
    splice,
    to_lf,
)
from .paths import Resolved, write_right
from .write import (
    Change,
    apply_change,
    change_message,
    load_existing,
    without_secrets,
    write_permission,
)


class EditInput(FileInput):
    file_path: str = Field(description="The absolute path to the file to modify")
    old_string: str = Field(description="The text to replace")
    new_string: str = Field(description="The text to replace it with (must be different from "
                                        "old_string)")
    replace_all: bool = Field(default=False, description="Replace all occurrences of "
                                                         "old_string (default false)")


def _input_problem(data: EditInput) -> Validation | None:
    """What is wrong with the input whatever the file holds."""
    if data.old_string == data.new_string:
        return invalid("No changes to make: old_string and new_string are exactly the same.",
                       Code.NO_CHANGE)
    if data.file_path.endswith(".ipynb"):
        return invalid("File is a Jupyter Notebook. Use the NotebookEdit tool to edit it.",
                       Code.NOTEBOOK)
    return None


def _not_found(data: EditInput, path: str) -> Validation:
    return invalid(f"String to replace not found in {path}. old_string must match the file's "
                   "text exactly (whitespace and indentation included, without the line-number "
                   f"prefix Read shows).\nString: {data.old_string}", Code.NOT_FOUND)


def _ambiguous(count: int) -> Validation:
    return invalid(f"Found {count} matches of the string to replace, but replace_all is false. "
                   "To replace all occurrences, set replace_all to true. To replace only one, "
                   "give more surrounding context so that old_string matches exactly one "
                   "place.", Code.AMBIGUOUS)


def plan_edit(data: EditInput, target: Resolved, ctx: ToolContext) -> Change | Validation:
    """The edit worked out against the file as it is now, or why not."""
    old, _ = to_lf(data.old_string)
    new, _ = to_lf(data.new_string)
    existing = load_existing(target, ctx)
    if existing is None:
        if old:
            return invalid(f"File does not exist: {target.display}. To create a file, give "
                           "an empty old_string (or use Write).", Code.MISSING)
        return Change(target, "create", "", new)
    if isinstance(existing, Validation):
        return existing
    encoding = existing.encoding
    try:
        decoded = None if encoding is None else encoding.decode(existing.raw)
    except UnicodeDecodeError:
        decoded = None
    if encoding is None or decoded is None:
        return invalid(f"{target.display} is not UTF-8 or UTF-16 text; Edit changes text files "
                       "only", Code.NOT_TEXT)
    text, newline = to_lf(decoded)
    if not old:
        if text:
            return invalid(f"Cannot create {target.display}: it already exists and is not "
                           "empty. To change it, give the text to replace as old_string.",
                           Code.EXISTS)
        return Change(target, "update", text, new, encoding, newline, existing.seen)
    starts = find_spans(text, old)
    if not starts:
        return _not_found(data, target.display)
    if len(starts) > 1 and not data.replace_all:
        return _ambiguous(len(starts))
    after = splice(text, starts if data.replace_all else starts[:1], old, new)
    if after == text:
        return invalid("The edit leaves the file as it is.", Code.NO_CHANGE)
    return Change(target, "update", text, after, encoding, newline, existing.seen)


def _validate(data: EditInput, ctx: ToolContext) -> Validation:
    problem = _input_problem(data)
    if problem is not None:
        return problem
    target = check_path(data, ctx, write_right)
    if isinstance(target, Validation):
        return target
    plan = without_secrets(plan_edit(data, target, ctx), "Edit", ctx)
    return plan if isinstance(plan, Validation) else VALID


def _call(data: EditInput, ctx: ToolContext) -> ToolResult:
    """Everything checked again at the moment of the act: the pipeline's
    stages ran a while ago, and the file or a link may have moved since."""
    problem = _input_problem(data)
    if problem is not None:
        return ToolResult(problem.message, is_error=True)
    target = recheck(data, ctx, write_right)
    if isinstance(target, str):
        return ToolResult(target, is_error=True)
    plan = without_secrets(plan_edit(data, target, ctx), "Edit", ctx)
    if isinstance(plan, Validation):
        return ToolResult(plan.message, is_error=True)
    return apply_change(plan, data, ctx)


_PROMPT = """\
Performs exact string replacements in a file.
- file_path must be absolute.
- Read the file in this session before editing it. An edit of a file not read, or changed on \
disk since it was read, is refused: Read it again.
- old_string must match the file's text exactly, indentation included, as it appears after \
the line-number prefix in Read's output (spaces, a number, a tab): never include the prefix.
- The edit fails when old_string is not in the file, or is in it more than once: give more \
surrounding lines to make it unique, or set replace_all to change every occurrence (renaming \
a variable, say).
- old_string is plain text, not a regular expression. Curly quotes in the file match straight \
ones in old_string, and the replacement keeps the file's quote style.
- An empty old_string with a file that does not exist creates it with new_string.
- The file's encoding and line endings (LF or CRLF) are kept. Use NotebookEdit for .ipynb."""


class EditTool(BaseTool[EditInput]):
    name = "Edit"
    input_model = EditInput

    def description(self, data: EditInput | None = None) -> str:
        return "Replace exact text in a file read earlier in this session"

    def prompt(self) -> str:
        return _PROMPT

    def activity_description(self, data: EditInput, cwd: str = "") -> str:
        return f"Editing {data.shown_path(cwd)}"

    def summary(self, data: EditInput, cwd: str = "") -> str:
        return data.shown_path(cwd)

    def permission_matcher(self, data: EditInput, ctx: ToolContext) -> Subject:
        # the path as named and where it leads: an allow rule must hold
        # for both, a deny for either (`ln -s ~/.aws/credentials notes`)
        target = pin(data, ctx)
        return Subject("path", tuple(dict.fromkeys((target.display, target.real))), "write")

    async def validate_input(self, data: EditInput, ctx: ToolContext) -> Validation:
        return await asyncio.to_thread(_validate, data, ctx)

    async def check_permissions(self, data: EditInput, ctx: ToolContext) -> PermissionResult:
        return write_permission(data, ctx)

    async def call(self, data: EditInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        return await asyncio.to_thread(_call, data, ctx)

    def map_result(self, result: ToolResult, tool_use_id: str) -> ToolResultMessage:
        return change_message(result, tool_use_id)


EDIT = build_tool(EditTool())
