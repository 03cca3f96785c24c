"""NotebookEdit against real notebooks on disk under the real sandbox
policy: replace, insert and delete by id and by cell-N, the file's form
kept byte for byte apart from the edit, and the refusals it shares with
Edit (not read, changed since, outside the writable roots)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kit import Answer

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision, Validation
from gateway.messages import ToolResultMessage, ToolUse
from gateway.session import Session
from gateway.tools.edit import EDIT, EditInput
from gateway.tools.filetext import Code
from gateway.tools.notebook_edit import NOTEBOOK_EDIT, NotebookEditInput, detect_layout
from gateway.tools.read import READ, ReadInput

Ctx = Callable[[], ToolContext]


def read(tool_context: Ctx, path: Path) -> None:
    ctx, data = tool_context(), ReadInput(file_path=str(path))
    assert asyncio.run(READ.validate_input(data, ctx)).ok
    assert not asyncio.run(READ.call(data, ctx, lambda _: None)).is_error


def validate(ctx: ToolContext, data: NotebookEditInput) -> Validation:
    return asyncio.run(NOTEBOOK_EDIT.validate_input(data, ctx))


def call(ctx: ToolContext, data: NotebookEditInput) -> ToolResultMessage:
    return NOTEBOOK_EDIT.map_result(asyncio.run(NOTEBOOK_EDIT.call(data, ctx, lambda _: None)),
                                    ctx.tool_use_id)


def edit(tool_context: Ctx, path: Path, **kw: Any) -> ToolResultMessage:
    """A NotebookEdit the pipeline lets through: valid and allowed, then called."""
    ctx = tool_context()
    data = NotebookEditInput(notebook_path=str(path), **{"new_source": "", **kw})
    checked = validate(ctx, data)
    assert checked.ok, checked.message
    assert asyncio.run(NOTEBOOK_EDIT.check_permissions(data, ctx)).decision is Decision.ALLOW
    result = call(ctx, data)
    assert not result.is_error, result.text
    return result


def refusal(tool_context: Ctx, path: Path, **kw: Any) -> Validation:
    data = NotebookEditInput(notebook_path=str(path), **{"new_source": "", **kw})
    checked = validate(tool_context(), data)
    assert not checked.ok
    assert call(tool_context(), data).is_error  # the act refuses it too
    return checked


def cell(kind: str, source: list[str] | str, cid: str | None = None) -> dict[str, Any]:
    made: dict[str, Any] = {"cell_type": kind}
    if kind == "code":
        made["execution_count"] = 3
    if cid is not None:
        made["id"] = cid
    made["metadata"] = {"tags": ["keep"]}
    if kind == "code":
        made["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["old\n"]}]
    made["source"] = source
    return made


def document(minor: int = 5, ids: bool = True) -> dict[str, Any]:
    def named(cid: str) -> str | None:
        return cid if ids else None

    return {"cells": [cell("markdown", ["# Title\n", "Café ✓"], named("intro")),
                      cell("code", ["x = 1\n", "print(x)"], named("load")),
                      cell("code", ["y = 2"], named("last"))],
            "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"},
                         "language_info": {"name": "python", "version": "3.11"}},
            "nbformat": 4, "nbformat_minor": minor}


def dumped(nb: dict[str, Any], indent: int = 1, newline: bool = True) -> str:
    return json.dumps(nb, indent=indent, ensure_ascii=False) + ("\n" if newline else "")


def saved(path: Path, nb: dict[str, Any], indent: int = 1, newline: bool = True) -> Path:
    path.write_text(dumped(nb, indent, newline))
    return path


@pytest.fixture
def nb_path(workspace: Path, tool_context: Ctx) -> Path:
    path = saved(workspace / "analysis.ipynb", document())
    read(tool_context, path)
    return path


# -- replace -----------------------------------------------------------------

@pytest.mark.parametrize(("indent", "newline"), [(1, True), (2, True), (1, False)])
@pytest.mark.parametrize("cell_id", ["load", "cell-1"])
def test_replace_changes_only_the_cells_source_and_clears_its_outputs(
        workspace: Path, tool_context: Ctx, indent: int, newline: bool, cell_id: str) -> None:
    nb = document()
    path = saved(workspace / "nb.ipynb", nb, indent, newline)
    read(tool_context, path)
    result = edit(tool_context, path, cell_id=cell_id, new_source="x = 10\nprint(x * 2)")
    expected = copy.deepcopy(nb)
    expected["cells"][1].update(source=["x = 10\n", "print(x * 2)"], execution_count=None,
                                outputs=[])
    assert path.read_text() == dumped(expected, indent, newline)  # the rest byte for byte
    assert "Updated code cell load" in result.text and "outputs" in result.text
    assert "layout" not in result.text  # kept, not rewritten


def test_a_notebook_without_ids_is_edited_by_cell_n(workspace: Path, tool_context: Ctx) -> None:
    nb = document(minor=4, ids=False)
    path = saved(workspace / "old.ipynb", nb)
    read(tool_context, path)
    edit(tool_context, path, cell_id="cell-0", new_source="# New title")
    expected = copy.deepcopy(nb)
    expected["cells"][0]["source"] = ["# New title"]
    assert path.read_text() == dumped(expected)


def test_replace_with_another_cell_type_converts_the_cell(nb_path: Path,
                                                          tool_context: Ctx) -> None:
    edit(tool_context, nb_path, cell_id="load", new_source="Now prose.", cell_type="markdown")
    converted = json.loads(nb_path.read_text())["cells"][1]
    assert converted == {"cell_type": "markdown", "id": "load", "metadata": {"tags": ["keep"]},
                         "source": ["Now prose."]}
    edit(tool_context, nb_path, cell_id="intro", new_source="z = 3", cell_type="code")
    back = json.loads(nb_path.read_text())["cells"][0]
    assert list(back) == ["cell_type", "execution_count", "id", "metadata", "outputs", "source"]
    assert (back["execution_count"], back["outputs"]) == (None, [])


def test_a_source_kept_as_one_string_stays_one_string(workspace: Path,
                                                      tool_context: Ctx) -> None:
    nb = document()
    nb["cells"][2]["source"] = "y = 2"
    path = saved(workspace / "str.ipynb", nb)
    read(tool_context, path)
    edit(tool_context, path, cell_id="last", new_source="y = 3\ny += 1")
    assert json.loads(path.read_text())["cells"][2]["source"] == "y = 3\ny += 1"


def test_replace_one_past_the_last_cell_appends_a_code_cell(nb_path: Path,
                                                            tool_context: Ctx) -> None:
    edit(tool_context, nb_path, cell_id="cell-3", new_source="tail()")
    cells = json.loads(nb_path.read_text())["cells"]
    assert len(cells) == 4 and cells[3]["cell_type"] == "code"
    assert cells[3]["source"] == ["tail()"]


# -- insert and delete ---------------------------------------------------------

def test_insert_after_a_cell_gives_the_new_cell_a_fresh_id(nb_path: Path,
                                                           tool_context: Ctx) -> None:
    before = json.loads(nb_path.read_text())
    result = edit(tool_context, nb_path, cell_id="intro", new_source="import os\n",
                  cell_type="code", edit_mode="insert")
    cells = json.loads(nb_path.read_text())["cells"]
    new = cells[1]
    assert re.fullmatch(r"[0-9a-f]{8}", new["id"])
    assert new == {"cell_type": "code", "execution_count": None, "id": new["id"],
                   "metadata": {}, "outputs": [], "source": ["import os\n"]}
    assert [c for n, c in enumerate(cells) if n != 1] == before["cells"]
    assert f"Inserted code cell {new['id']} after cell intro" in result.text


def test_insert_without_a_cell_id_goes_first_and_an_old_notebook_gets_no_id(
        workspace: Path, tool_context: Ctx) -> None:
    nb = document(minor=4, ids=False)
    path = saved(workspace / "old.ipynb", nb)
    read(tool_context, path)
    edit(tool_context, path, new_source="## Intro", cell_type="markdown", edit_mode="insert")
    expected = copy.deepcopy(nb)
    expected["cells"].insert(0, {"cell_type": "markdown", "metadata": {},
                                 "source": ["## Intro"]})
    assert path.read_text() == dumped(expected)


def test_delete_removes_the_cell_and_nothing_else(nb_path: Path, tool_context: Ctx) -> None:
    nb = document()
    result = edit(tool_context, nb_path, cell_id="load", edit_mode="delete")
    del nb["cells"][1]
    assert nb_path.read_text() == dumped(nb)
    assert "Deleted code cell load (2 left)" in result.text


def test_successive_edits_need_no_read_between_them(nb_path: Path, tool_context: Ctx) -> None:
    edit(tool_context, nb_path, cell_id="last", new_source="y = 5")
    edit(tool_context, nb_path, cell_id="last", new_source="y = 6")
    assert json.loads(nb_path.read_text())["cells"][2]["source"] == ["y = 6"]


# -- refusals -----------------------------------------------------------------

@pytest.mark.parametrize(("kw", "says"), [
    ({"cell_id": "nope"}, 'Cell with ID "nope" not found'),
    ({"cell_id": "cell-9"}, 'Cell with ID "cell-9" not found'),
    ({}, "cell_id is required to replace"),
    ({"edit_mode": "delete"}, "cell_id is required to delete"),
    ({"cell_id": "load", "edit_mode": "insert"}, "cell_type is required to insert"),
])
def test_an_edit_that_names_no_cell_it_can_make_is_refused(nb_path: Path, tool_context: Ctx,
                                                           kw: dict[str, Any], says: str) -> None:
    before = nb_path.read_bytes()
    assert says in refusal(tool_context, nb_path, **kw).message
    assert nb_path.read_bytes() == before


def test_an_edit_of_a_notebook_not_read_is_refused(workspace: Path, tool_context: Ctx) -> None:
    path = saved(workspace / "unread.ipynb", document())
    checked = refusal(tool_context, path, cell_id="load", new_source="z")
    assert checked.code == Code.NOT_READ


def test_a_notebook_changed_on_disk_since_its_read_is_refused(nb_path: Path,
                                                              tool_context: Ctx) -> None:
    changed = document()
    changed["cells"][2]["source"] = ["y = 'from the user'"]
    nb_path.write_text(dumped(changed))
    checked = refusal(tool_context, nb_path, cell_id="last", new_source="y = 9")
    assert checked.code == Code.CHANGED and "Read it again" in checked.message
    assert "from the user" in nb_path.read_text()


def test_a_notebook_outside_the_writable_roots_is_denied(tmp_path: Path,
                                                         tool_context: Ctx) -> None:
    outside = saved(tmp_path / "elsewhere.ipynb", document())
    ctx = tool_context()
    data = NotebookEditInput(notebook_path=str(outside), cell_id="load", new_source="z")
    assert asyncio.run(NOTEBOOK_EDIT.check_permissions(data, ctx)).decision is Decision.DENY
    assert call(ctx, data).is_error
    assert outside.read_text() == dumped(document())


@pytest.mark.parametrize(("name", "says"), [("notes.txt", "use the Edit tool"),
                                            ("relative.ipynb", "must be an absolute path"),
                                            ("missing.ipynb", "does not exist")])
def test_paths_that_are_not_notebooks_here_are_refused(workspace: Path, tool_context: Ctx,
                                                       name: str, says: str) -> None:
    path = Path(name) if name.startswith("relative") else workspace / name
    if name == "notes.txt":
        path.write_text("text\n")
    assert says in refusal(tool_context, path, cell_id="cell-0").message


def test_edit_and_notebook_edit_send_each_other_their_files(nb_path: Path, workspace: Path,
                                                            tool_context: Ctx) -> None:
    checked = asyncio.run(EDIT.validate_input(
        EditInput(file_path=str(nb_path), old_string="x = 1", new_string="x = 2"),
        tool_context()))
    assert not checked.ok and "Use the NotebookEdit tool" in checked.message
    (workspace / "a.py").write_text("x\n")
    assert "use the Edit tool" in refusal(tool_context, workspace / "a.py").message


def test_a_notebook_that_is_not_valid_json_is_refused(workspace: Path,
                                                      tool_context: Ctx) -> None:
    path = workspace / "conflict.ipynb"
    path.write_text('{"cells": [\n<<<<<<< HEAD\n]}\n')
    read(tool_context, path)  # shown as text
    checked = refusal(tool_context, path, cell_id="cell-0")
    assert "not valid JSON" in checked.message and "Write" in checked.message


# -- the form kept -----------------------------------------------------------

def test_the_file_mode_is_kept(nb_path: Path, tool_context: Ctx) -> None:
    nb_path.chmod(0o640)
    read(tool_context, nb_path)
    edit(tool_context, nb_path, cell_id="last", new_source="y = 0")
    assert nb_path.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("text", [
    json.dumps(document(), indent=1, ensure_ascii=False) + "\n",
    json.dumps(document(), indent=2, ensure_ascii=True),
    json.dumps(document(), separators=(",", ":"), ensure_ascii=False),
    json.dumps(document(), indent="\t", ensure_ascii=False) + "\n",
    json.dumps(document(), indent=1, sort_keys=True, ensure_ascii=False) + "\n",
])
def test_a_notebooks_layout_is_detected_so_that_it_renders_back_exactly(text: str) -> None:
    layout, exact = detect_layout(text, json.loads(text))
    assert exact and layout.render(json.loads(text)) == text


def test_a_layout_that_cannot_be_reproduced_is_rewritten_and_said(workspace: Path,
                                                                  tool_context: Ctx) -> None:
    path = workspace / "odd.ipynb"
    path.write_text(dumped(document()).replace('"nbformat": 4', '"nbformat": 4.0e0'))
    read(tool_context, path)
    result = edit(tool_context, path, cell_id="last", new_source="y = 7")
    assert "Jupyter's layout" in result.text
    assert json.loads(path.read_text())["cells"][2]["source"] == ["y = 7"]


def test_notebook_edit_declares_itself_a_writer_that_runs_alone(session: SessionContext,
                                                                tool_context: Ctx) -> None:
    ctx = tool_context()
    data = NotebookEditInput(notebook_path=f"{session.cwd}/a.ipynb", new_source="")
    assert not NOTEBOOK_EDIT.is_read_only(data, ctx)
    assert not NOTEBOOK_EDIT.is_concurrency_safe(data, ctx)
    subject = NOTEBOOK_EDIT.permission_matcher(data, ctx)
    assert (subject.kind, subject.access) == ("path", "write")
    assert NOTEBOOK_EDIT.summary(data, session.cwd) == "a.ipynb (replace)"


def test_the_whole_pipeline_reads_then_edits_a_notebook(workspace: Path, tmp_path: Path) -> None:
    path = saved(workspace / "nb.ipynb", document())
    approver = Answer(True)
    session = Session.open(str(workspace), extra_tools=[NOTEBOOK_EDIT], approver=approver,
                           home=str(tmp_path / "home"), results_dir=str(tmp_path / "results"))

    def run(tool: str, data: dict[str, Any]) -> ToolResultMessage:
        return asyncio.run(session.run(ToolUse(f"toolu_{tool}", tool, data)))

    unread = run("NotebookEdit", {"notebook_path": str(path), "cell_id": "last",
                                  "new_source": "y = 1"})
    assert unread.is_error and "has not been read" in unread.text
    assert '<cell id="last"' in run("Read", {"file_path": str(path)}).text
    done = run("NotebookEdit", {"notebook_path": str(path), "cell_id": "last",
                                "new_source": "y = 1"})
    assert not done.is_error, done.text
    assert json.loads(path.read_text())["cells"][2]["source"] == ["y = 1"]
    bad = run("NotebookEdit", {"notebook_path": str(path), "new_source": "",
                               "edit_mode": "rename"})
    assert bad.is_error and bad.text.startswith("<tool_use_error>")
    assert os.path.exists(path)


# -- hostile notebooks ---------------------------------------------------------

@pytest.mark.parametrize(("ids", "name"), [
    (["x", "x", "last"], "x"),  # a duplicate id
    (["cell-1", None, "last"], "cell-1"),  # an id that is another cell's cell-N
])
def test_a_cell_name_read_shows_for_two_cells_is_refused_not_guessed(
        workspace: Path, tool_context: Ctx, ids: list[str | None], name: str) -> None:
    # reproducer: both cells were shown as `x` (or `cell-1`); the edit
    # silently changed the first of them
    nb = document()
    for made, cid in zip(nb["cells"], ids, strict=True):
        made.pop("id", None)
        if cid is not None:
            made["id"] = cid
    path = saved(workspace / "twins.ipynb", nb)
    read(tool_context, path)
    before = path.read_bytes()
    checked = refusal(tool_context, path, cell_id=name, new_source="changed")
    assert "ambiguous" in checked.message and "cells 0, 1" in checked.message
    assert path.read_bytes() == before
    edit(tool_context, path, cell_id="last", new_source="y = 3")  # an unambiguous name still works


@pytest.mark.parametrize("number", ["1e999", "NaN", "-Infinity"])
def test_a_notebook_with_a_number_json_cannot_write_is_refused_and_left_alone(
        workspace: Path, tool_context: Ctx, number: str) -> None:
    # reproducer: `1e999` was written back as `Infinity`, which JSON parsers
    # other than Python's (Jupyter in a browser) refuse
    text = dumped(document()).replace('"version": "3.11"', f'"version": {number}')
    path = workspace / "odd.ipynb"
    path.write_text(text)
    read(tool_context, path)
    checked = refusal(tool_context, path, cell_id="last", new_source="y = 3")
    assert "NaN, Infinity" in checked.message
    assert path.read_text() == text


def test_a_notebook_with_a_number_python_will_not_read_is_refused_cleanly(
        workspace: Path, tool_context: Ctx) -> None:
    # reproducer: a 5000-digit number raised ValueError out of NotebookEdit
    text = dumped(document()).replace('"version": "3.11"', '"version": ' + "9" * 5000)
    path = workspace / "digits.ipynb"
    path.write_text(text)
    read(tool_context, path)
    assert "cannot be read" in refusal(tool_context, path, cell_id="last").message
