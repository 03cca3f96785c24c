"""NotebookEdit: replace a Jupyter notebook cell's source, insert a cell,
or delete one — in a notebook the session has read and that has not
changed since, written atomically through the same checks, link-proof
commit and identity keeping as Edit and Write.

The notebook keeps its form: the JSON is written back in the layout the
file had (its indentation, key order, escapes, final newline — checked by
rendering the unedited notebook and comparing it with the file), so the
only bytes that change are the edit's. A file in a layout that cannot be
reproduced is written in Jupyter's, and the result says so."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from regexes import regex
from values import valueclass

from ..context import ToolContext
from ..decisions import VALID, PermissionResult, Validation, invalid
from ..messages import ProgressCallback, TextBlock, ToolResult, ToolResultMessage
from .base import BaseTool, Subject, build_tool
from .filetext import Code, FileInput, check_path, is_absolute, pin, recheck, to_lf
from .notebook import MAX_NOTEBOOK_BYTES, cell_name, find_cell, parse_notebook
from .paths import Resolved, write_right
from .secret_writes import secret_refusal
from .write import Change, apply_change, load_existing, write_permission


class NotebookEditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    notebook_path: str = Field(description="The absolute path to the Jupyter notebook file to "
                                           "edit (must be absolute, not relative)")
    cell_id: str | None = Field(default=None, description="The ID of the cell to edit (cell-N, "
                                "N from 0, for a cell without an id). When inserting a new "
                                "cell, the new cell is inserted after the cell with this ID, "
                                "or at the beginning if not specified.")
    new_source: str = Field(description="The new source for the cell")
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None, description="The type of the cell (code or markdown). If not specified, "
        "it defaults to the current cell type. If using edit_mode=insert, this is required.")
    edit_mode: Literal["replace", "insert", "delete"] = Field(
        default="replace", description="The type of edit to make (replace, insert, delete). "
        "Defaults to replace.")

    def as_file(self) -> FileInput:
        """The path as the file tools' shared stages take it."""
        return FileInput(file_path=self.notebook_path)


# -- the notebook's layout -------------------------------------------------

@valueclass
class Layout:
    """How a notebook's JSON is written."""

    indent: int | str | None
    separators: tuple[str, str]
    ensure_ascii: bool
    final_newline: bool

    def render(self, document: Any) -> str:
        """The JSON text; ValueError for a number JSON has no form for.
        Reproducer: a notebook holding `1e999` (read as infinity) was
        written back with `Infinity` in it, which no JSON parser but
        Python's reads — Jupyter in a browser could no longer open it."""
        text = json.dumps(document, indent=self.indent, separators=self.separators,
                          ensure_ascii=self.ensure_ascii, allow_nan=False)
        return text + "\n" if self.final_newline else text


#: Jupyter's own: one space, non-ASCII as it is, a newline at the end
JUPYTER = Layout(1, (",", ": "), False, True)
_INDENT = regex(r"\{\n([ \t]+)\S")


def detect_layout(text: str, document: Any) -> tuple[Layout, bool]:
    """The layout that renders ``document`` back into ``text`` exactly
    (and True), else Jupyter's with the file's indentation (and False).
    Key order needs no detecting: the parsed dicts keep the file's."""
    match = _INDENT.match(text)
    found = match[1] if match else None
    indent = None if found is None else len(found) if found.strip(" ") == "" else found
    final = text.endswith("\n")
    seps = [(",", ": ")] if indent is not None else [(",", ":"), (", ", ": ")]
    escapes = [False, True] if text.isascii() and "\\u" in text else [False]
    for sep in seps:
        for ascii_only in escapes:
            layout = Layout(indent, sep, ascii_only, final)
            with contextlib.suppress(ValueError):  # its numbers are said by the edit
                if layout.render(document) == text:
                    return layout, True
    return Layout(JUPYTER.indent if indent is None else indent, JUPYTER.separators, False,
                  final), False


# -- the edit ----------------------------------------------------------------

def _uses_ids(notebook: dict[str, Any]) -> bool:
    """Cell ids belong to nbformat 4.5 and later — and to any notebook
    whose cells already have them."""
    major, minor = notebook.get("nbformat"), notebook.get("nbformat_minor")
    if any("id" in cell for cell in notebook["cells"]):
        return True
    if not isinstance(major, int) or not isinstance(minor, int):
        return False
    return major > 4 or (major == 4 and minor >= 5)


def _fresh_id(cells: list[dict[str, Any]]) -> str:
    """Eight hex digits, like Jupyter's, none the notebook has."""
    taken = {c.get("id") for c in cells}
    while (new := secrets.token_hex(4)) in taken:
        continue
    return new


def _source(text: str, like: Any) -> str | list[str]:
    """``text`` in the form the notebook uses: one string, or the list of
    lines Jupyter writes (``[]`` for nothing)."""
    return text if isinstance(like, str) else text.splitlines(keepends=True)


def _ordered(cell: dict[str, Any], cells: list[dict[str, Any]]) -> dict[str, Any]:
    """``cell``'s keys in the order the notebook's cells of its type have
    them (sorted, Jupyter's order, when they are sorted or there are none)."""
    same = [c for c in cells if c.get("cell_type") == cell["cell_type"]] or cells
    keys = list(same[0]) if same else []
    if keys == sorted(keys):
        return dict(sorted(cell.items()))
    rank = {k: n for n, k in enumerate(keys)}
    return dict(sorted(cell.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def _typed(cell: dict[str, Any], kind: str, cells: list[dict[str, Any]]) -> dict[str, Any]:
    """``cell`` as a cell of type ``kind``: a code cell with no outputs and
    no execution count (its old ones described other source); any other
    without them (and a code cell has no attachments)."""
    had = set(cell)
    cell = dict(cell, cell_type=kind)
    if kind == "code":
        cell.pop("attachments", None)
        cell.update(execution_count=None, outputs=[])
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)
    # keys it had keep their places (the file's bytes around the edit stay)
    return cell if set(cell) <= had else _ordered(cell, cells)


@valueclass
class Edited:
    """What an edit did, in words."""

    said: str


Mode = Literal["replace", "insert", "delete"]


def _locate(cells: list[dict[str, Any]],
            data: NotebookEditInput) -> tuple[Mode, str | None, int] | Validation:
    """The edit to make, the cell type asked for, and the index of the
    cell named (for an insert: the one it goes after; -1: at the start)."""
    if data.cell_id is None:
        if data.edit_mode != "insert":
            return invalid(f"cell_id is required to {data.edit_mode} a cell (its id, or "
                           "cell-N).")
        return "insert", data.cell_type, -1
    found = find_cell(cells, data.cell_id)
    if isinstance(found, str):
        return invalid(f'Cell ID "{data.cell_id}" is ambiguous: {found}.', Code.NOT_FOUND)
    if found is not None:
        return data.edit_mode, data.cell_type, found
    if data.edit_mode == "replace" and data.cell_id == f"cell-{len(cells)}":
        # the reference's rule: a replace one past the last cell appends one
        return "insert", data.cell_type or "code", len(cells) - 1
    return invalid(f'Cell with ID "{data.cell_id}" not found in the notebook (it has '
                   f"{len(cells)} cells; Read it to see their ids).", Code.NOT_FOUND)


def _insert(notebook: dict[str, Any], after: int, kind: str, source: str) -> Edited:
    cells: list[dict[str, Any]] = notebook["cells"]
    cell: dict[str, Any] = {"cell_type": kind, "metadata": {},
                            "source": _source(source, cells[0].get("source") if cells else None)}
    if _uses_ids(notebook):
        cell["id"] = _fresh_id(cells)
    cells.insert(after + 1, _typed(cell, kind, cells))
    where = "at the start" if after < 0 else f"after cell {cell_name(cells[after], after)}"
    return Edited(f"Inserted {kind} cell {cell_name(cells[after + 1], after + 1)} {where}")


def _replace(cells: list[dict[str, Any]], at: int, kind: str | None, source: str) -> Edited:
    old = cells[at]
    new = dict(old, source=_source(source, old.get("source")))
    if (kind is not None and kind != old["cell_type"]) or new["cell_type"] == "code":
        new = _typed(new, kind or new["cell_type"], cells)
    cells[at] = new
    cleared = (" (its outputs and execution count were cleared)"
               if new["cell_type"] == "code" else "")
    return Edited(f"Updated {new['cell_type']} cell {cell_name(new, at)}{cleared}")


def edit_cells(notebook: dict[str, Any], data: NotebookEditInput) -> Edited | Validation:
    """Make the edit ``data`` asks on ``notebook`` (in place)."""
    cells: list[dict[str, Any]] = notebook["cells"]
    located = _locate(cells, data)
    if isinstance(located, Validation):
        return located
    mode, kind, at = located
    if mode == "insert":
        if kind is None:
            return invalid("cell_type is required to insert a cell (code or markdown).")
        return _insert(notebook, at, kind, data.new_source)
    if mode == "delete":
        gone = cells.pop(at)
        return Edited(f"Deleted {gone['cell_type']} cell {cell_name(gone, at)} "
                      f"({len(cells)} left)")
    return _replace(cells, at, kind, data.new_source)


# -- the tool ----------------------------------------------------------------

@valueclass
class NotebookPlan:
    """An edit worked out and checked, not yet written."""

    change: Change
    edited: Edited
    #: the file's layout could not be reproduced: written in Jupyter's
    relaid: bool


def screen_new_content(change: Change, data: NotebookEditInput,
                       ctx: ToolContext) -> Validation | None:
    """The one place where what NotebookEdit will write is known before it
    is written: refused, at validation and again at the act, when the
    cell's new source would bring a secret into the notebook (the refusal
    of :mod:`.secret_writes`; its line is the cell's). The notebook's JSON
    escapes a key's line breaks, so the cells' decoded sources are what is
    compared: a secret already in one of its cells is not news."""
    if data.edit_mode == "delete":
        return None
    return secret_refusal("NotebookEdit", change.target, _sources(change.before),
                          data.new_source, ctx)


def _sources(text: str) -> str:
    """Every cell's source of a notebook's JSON, one after another."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return text
    parts = []
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        parts.append("".join(source) if isinstance(source, list) else str(source))
    return "\n".join(parts)


def _not_notebook(path: str) -> Validation | None:
    if not path.lower().endswith(".ipynb"):
        return invalid("File must be a Jupyter notebook (.ipynb file). For editing other file "
                       "types, use the Edit tool.", Code.NOTEBOOK)
    return None


def plan_notebook_edit(data: NotebookEditInput, target: Resolved,
                       ctx: ToolContext) -> NotebookPlan | Validation:
    """The edit worked out against the notebook as it is now, or why not."""
    try:
        size = os.stat(target.real).st_size
    except FileNotFoundError:
        return invalid(f"Notebook file does not exist: {target.display}.", Code.MISSING)
    except OSError:
        size = 0  # load_existing names the error
    if size > MAX_NOTEBOOK_BYTES:
        return invalid(f"{target.display} is {size:,} bytes, over the "
                       f"{MAX_NOTEBOOK_BYTES >> 20} MiB NotebookEdit changes; use Bash (jq).",
                       Code.TOO_LARGE)
    existing = load_existing(target, ctx)
    if existing is None:
        return invalid(f"Notebook file does not exist: {target.display}.", Code.MISSING)
    if isinstance(existing, Validation):
        return existing
    notebook = parse_notebook(existing.raw)
    if isinstance(notebook, str) or existing.encoding is None:
        return invalid(f"{target.display} is not a notebook NotebookEdit can change: "
                       f"{notebook if isinstance(notebook, str) else 'not text'}. Repair it "
                       "with Write (Read shows it as text).", Code.NOT_TEXT)
    before, newline = to_lf(existing.encoding.decode(existing.raw, "replace"))
    layout, exact = detect_layout(before, notebook)
    edited = edit_cells(notebook, data)
    if isinstance(edited, Validation):
        return edited
    try:
        after = layout.render(notebook)
    except ValueError:
        return invalid(f"{target.display} holds a number JSON cannot write (NaN, Infinity, or "
                       "one past a float's range): NotebookEdit would write a notebook other "
                       "parsers refuse; fix it with Write (or jq in Bash) first.", Code.NOT_TEXT)
    change = Change(target, "update", before, after, existing.encoding, newline, existing.seen)
    objection = screen_new_content(change, data, ctx)
    if objection is not None:
        return objection
    return NotebookPlan(change, edited, not exact)


def _validate(data: NotebookEditInput, ctx: ToolContext) -> Validation:
    if not is_absolute(data.notebook_path):
        return invalid(f"notebook_path must be an absolute path, not {data.notebook_path!r} "
                       f"(the working directory is {ctx.session.cwd})", Code.RELATIVE)
    problem = _not_notebook(data.notebook_path)
    if problem is not None:
        return problem
    target = check_path(data.as_file(), ctx, write_right)
    if isinstance(target, Validation):
        return target
    plan = plan_notebook_edit(data, target, ctx)
    return plan if isinstance(plan, Validation) else VALID


@valueclass
class NotebookChange:
    """What NotebookEdit returns."""

    said: str
    path: str
    relaid: bool

    def text(self) -> str:
        note = (" Its JSON layout could not be kept exactly (a writer other than Jupyter's: "
                "number forms, escapes or spacing), so it was written in Jupyter's layout."
                if self.relaid else "")
        return f"{self.said} in {self.path}.{note}"


def _call(data: NotebookEditInput, ctx: ToolContext) -> ToolResult:
    """Everything checked again at the moment of the act (see Edit's)."""
    problem = _not_notebook(data.notebook_path)
    if problem is not None:
        return ToolResult(problem.message, is_error=True)
    file = data.as_file()
    target = recheck(file, ctx, write_right)
    if isinstance(target, str):
        return ToolResult(target, is_error=True)
    plan = plan_notebook_edit(data, target, ctx)
    if isinstance(plan, Validation):
        return ToolResult(plan.message, is_error=True)
    done = apply_change(plan.change, file, ctx)
    if done.is_error:
        return done
    return ToolResult(NotebookChange(plan.edited.said, target.display, plan.relaid))


_PROMPT = """\
Edits a Jupyter notebook (.ipynb): replaces the source of one cell, inserts a new cell, \
or deletes one.
- notebook_path must be absolute. Read the notebook in this session first; an edit of a \
notebook not read, or changed on disk since, is refused: Read it again.
- cell_id names the cell as Read shows it: its id, or cell-N (N from 0) for a notebook \
without ids.
- edit_mode replace (the default) sets the cell's source; a code cell's outputs and execution \
count are cleared. cell_type changes the cell's type.
- edit_mode insert adds a cell after cell_id (at the start without one); cell_type is \
required.
- edit_mode delete removes the cell (new_source is ignored).
- The notebook's format (indentation, key order, metadata, nbformat) is kept. Use Edit for \
other files."""


class NotebookEditTool(BaseTool[NotebookEditInput]):
    name = "NotebookEdit"
    input_model = NotebookEditInput
    search_hint = "notebook jupyter ipynb cell"

    def description(self, data: NotebookEditInput | None = None) -> str:
        return "Replace, insert or delete a cell of a Jupyter notebook read in this session"

    def prompt(self) -> str:
        return _PROMPT

    def _shown(self, data: NotebookEditInput, cwd: str) -> str:
        return data.as_file().shown_path(cwd)

    def activity_description(self, data: NotebookEditInput, cwd: str = "") -> str:
        return f"Editing notebook {self._shown(data, cwd)}"

    def summary(self, data: NotebookEditInput, cwd: str = "") -> str:
        cell = f" {data.cell_id}" if data.cell_id else ""
        return f"{self._shown(data, cwd)}{cell} ({data.edit_mode})"

    def permission_matcher(self, data: NotebookEditInput, ctx: ToolContext) -> Subject:
        # the path as named and where it leads: an allow rule must hold
        # for both, a deny for either (`ln -s ~/.bashrc notes.ipynb`)
        target = pin(data.as_file(), ctx)
        return Subject("path", tuple(dict.fromkeys((target.display, target.real))), "write")

    async def validate_input(self, data: NotebookEditInput, ctx: ToolContext) -> Validation:
        return await asyncio.to_thread(_validate, data, ctx)

    async def check_permissions(self, data: NotebookEditInput,
                                ctx: ToolContext) -> PermissionResult:
        return write_permission(data.as_file(), ctx)

    async def call(self, data: NotebookEditInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        return await asyncio.to_thread(_call, data, ctx)

    def map_result(self, result: ToolResult, tool_use_id: str) -> ToolResultMessage:
        data = result.data
        text = data.text() if isinstance(data, NotebookChange) else str(data)
        return ToolResultMessage(tool_use_id, (TextBlock(text),), result.is_error)


NOTEBOOK_EDIT = build_tool(NotebookEditTool())
