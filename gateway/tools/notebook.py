"""Read's Jupyter notebooks: every cell with its name (its id, or
``cell-N`` — N from 0 — when it has none: the name NotebookEdit takes),
type and source, and a code cell's outputs — streams, results as text,
errors with their traceback (terminal colours stripped), and plots as
images, made fit like any image Read shows. Large outputs are cut with a
marker saying how to see them whole.

A file named ``.ipynb`` that is not a notebook (invalid JSON — a merge
left conflict markers in it — or no ``cells``) is shown as numbered text
with a note saying why, rather than refused: that text is what the model
needs to repair it (with Write: NotebookEdit needs a valid notebook)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import shlex
from collections.abc import Sequence
from typing import Any, BinaryIO

from regexes import regex
from values import field, valueclass

from ..messages import ImageBlock, TextBlock
from .filetext import SNIFF_BYTES, detect_encoding
from .images import (
    MAX_PIXELS,
    RAW_BUDGET,
    Fitted,
    claimed_pixels,
    fit_image,
    image_type,
    whole_image,
)
from .read_text import MAX_TEXT_BYTES, Shown, read_text

#: a notebook larger than this is shown as text (``jq`` in Bash sees the rest)
MAX_NOTEBOOK_BYTES = 32 << 20
#: one output's text at most, and the images one Read shows
MAX_OUTPUT_CHARS = 10_000
MAX_IMAGES = 20
MAX_IMAGE_BYTES = RAW_BUDGET
#: the pixels one Read decodes for a notebook's plots, all of them together
#: (twenty 1500x1000 plots take 30 M). Reproducer: a notebook of forty
#: 14 KB PNGs of 7071x7071 pixels each kept a Read decoding for 48 s (a
#: 32 MiB one would have for half an hour), every plot decoded before the
#: image budget was looked at — which is now looked at first
MAX_NOTEBOOK_PIXELS = 2 * MAX_PIXELS

_CELL_N = regex(r"cell-(\d+)")
#: CSI (colours, cursor moves), OSC (titles, links) and two-byte escapes
_ANSI = regex(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
#: the text forms of a result, best first
_TEXT_MIMES = ("text/plain", "text/markdown", "text/latex")
_IMAGE_MIMES = ("image/png", "image/jpeg")


# -- what NotebookEdit shares ------------------------------------------------

def parse_notebook(raw: bytes) -> dict[str, Any] | str:
    """The notebook in ``raw``, or why it is not one."""
    try:
        document = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    except json.JSONDecodeError as exc:
        return f"it is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
    except ValueError as exc:
        # not a JSONDecodeError: a number of more than 4300 digits (Python's
        # int limit) raised out of Read and NotebookEdit as an internal error
        return f"it holds a value that cannot be read ({str(exc)[:80]})"
    except RecursionError:
        return "its JSON is nested too deeply to read"
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        return "it has no list of cells"
    if not all(isinstance(c, dict) and isinstance(c.get("cell_type"), str)
               for c in document["cells"]):
        return "a cell is not an object with a cell_type"
    return document


def cell_name(cell: dict[str, Any], index: int) -> str:
    """What the model calls a cell: its id, else ``cell-N``."""
    cid = cell.get("id")
    return cid if isinstance(cid, str) and cid else f"cell-{index}"


def find_cell(cells: Sequence[dict[str, Any]], name: str) -> int | str | None:
    """The index of the cell named ``name`` — the cell Read shows under that
    name, else (a cell with an id) the one at ``cell-N`` — or why the name
    is ambiguous (``None``: no cell has it). Reproducer: cells with ids
    ``x`` and ``x``, or a cell whose id is ``cell-1`` before a second cell
    without one, are shown under one name; an edit of it silently changed
    the first of them."""
    named = [index for index, cell in enumerate(cells) if cell_name(cell, index) == name]
    if len(named) > 1:
        return (f"{len(named)} cells are shown as {name!r} (cells "
                f"{', '.join(map(str, named[:5]))} from 0): a duplicate id, or an id of the "
                "form cell-N; give their ids unique values first (with Write, or jq in Bash)")
    if named:
        return named[0]
    match = _CELL_N.fullmatch(name)
    if match is not None and int(match[1]) < len(cells):
        return int(match[1])
    return None


def joined(value: Any) -> str:
    """A notebook's multi-line string: one string, or a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return ""


# -- showing one ---------------------------------------------------------------

def read_notebook(stream: BinaryIO, st: os.stat_result, display: str, offset: int | None,
                  limit: int | None) -> Shown | str:
    """The open ``.ipynb`` file ``stream`` as cells, or as text with a
    note when it is not a notebook (or too large to show as one)."""
    why = (f"it is {st.st_size:,} bytes, over the {MAX_NOTEBOOK_BYTES >> 20} MiB Read shows "
           "as cells")
    if st.st_size <= MAX_NOTEBOOK_BYTES:
        stream.seek(0)
        raw = stream.read(MAX_NOTEBOOK_BYTES + 1)
        parsed = parse_notebook(raw) if len(raw) <= MAX_NOTEBOOK_BYTES else why
        if not isinstance(parsed, str):
            return show_notebook(parsed, raw, display)
        why = parsed
    stream.seek(0)
    head = stream.read(SNIFF_BYTES)
    encoding = detect_encoding(head, whole=st.st_size <= SNIFF_BYTES)
    if encoding is None:
        return (f"{display} is not a notebook ({why}), nor text; look into it with Bash "
                "(file, xxd | head).")
    shown = read_text(stream, st, encoding, offset, limit)
    note = TextBlock(f"[{display} is shown as text, not as cells: {why}. NotebookEdit changes "
                     "only a valid notebook: repair it with Write, or look into it with Bash "
                     "(jq).]")
    return Shown((note, *shown.blocks), shown.digest, shown.complete)


@valueclass(frozen=False, slots=False)
class _Page:
    """The blocks being built, within the text and image budgets: once the
    text would pass MAX_TEXT_BYTES it is cut there, a marker says where
    the rest is, and nothing more is added."""

    jq_path: str
    blocks: list[TextBlock | ImageBlock] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    used: int = 0
    images: int = 0
    image_bytes: int = 0
    #: pixels decoded so far: what each plot tried claims, shown or not (a
    #: truncated one costs its decode too)
    pixels: int = 0
    #: the cell being shown (the marker's place to go on from)
    cell: int = 0
    cut: bool = False
    full: bool = False

    def add(self, line: str) -> None:
        if self.full:
            return
        encoded = line.encode("utf-8", "replace")
        if self.used + len(encoded) + 1 > MAX_TEXT_BYTES:
            self.full = self.cut = True
            kept = encoded[:max(0, MAX_TEXT_BYTES - self.used)].decode("utf-8", "ignore")
            line = (f"{kept}\n[Cut: the {MAX_TEXT_BYTES // 1024} KiB a Read returns was "
                    f"reached in cell {self.cell}; see the rest with Bash: "
                    f"jq '.cells[{self.cell}:]' {self.jq_path}]")
        self.text.append(line)
        self.used += len(encoded) + 1

    def image(self, fitted: Fitted) -> None:
        if self.full:
            return
        if fitted.note:
            self.add(fitted.note)
        self.flush()
        self.blocks.append(fitted.block)
        self.images += 1
        self.image_bytes += len(fitted.block.data)

    def flush(self) -> None:
        if self.text:
            self.blocks.append(TextBlock("\n".join(self.text)))
            self.text = []


def show_notebook(notebook: dict[str, Any], raw: bytes, display: str) -> Shown:
    """The notebook's cells and outputs as text and image blocks."""
    cells: list[dict[str, Any]] = notebook["cells"]
    page = _Page(shlex.quote(display))
    page.add(_header(notebook, len(cells), display))
    for index, cell in enumerate(cells):
        if page.full:
            break
        page.cell = index
        _cell(page, cell, index)
    page.flush()
    return Shown(tuple(page.blocks), hashlib.sha256(raw).hexdigest(), not page.cut)


def _name_in(meta: Any, key: str) -> str | None:
    """``metadata[key].name`` (the kernel's, the language's), if there."""
    entry = meta.get(key) if isinstance(meta, dict) else None
    name = entry.get("name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) else None


def _header(notebook: dict[str, Any], count: int, display: str) -> str:
    meta = notebook.get("metadata")
    about = "".join(f", {label} {value}" for label, value in (
        ("kernel", _name_in(meta, "kernelspec")), ("language", _name_in(meta, "language_info")))
        if value)
    version = f"nbformat {notebook.get('nbformat', '?')}.{notebook.get('nbformat_minor', '?')}"
    return (f"Jupyter notebook {display}: {count} cell{'s' if count != 1 else ''} ({version}"
            f"{about}). A cell's id (cell-N, from 0, for one without an id) is the cell_id "
            "NotebookEdit takes.")


def _cell(page: _Page, cell: dict[str, Any], index: int) -> None:
    kind = cell["cell_type"]
    count = cell.get("execution_count")
    runs = f' execution_count="{count}"' if kind == "code" and isinstance(count, int) else ""
    source = joined(cell.get("source"))
    page.add(f'\n<cell id="{cell_name(cell, index)}" type="{kind}"{runs}>\n{source}\n</cell>')
    outputs = cell.get("outputs")
    if kind == "code" and isinstance(outputs, list):
        for number, output in enumerate(outputs):
            if isinstance(output, dict):
                _output(page, output, f".cells[{index}].outputs[{number}]")


def _terminal(text: str) -> str:
    """Text as a terminal would leave it: no escape sequences, and of a
    line a progress bar rewrote (``\\r``) only its last state."""
    lines = _ANSI.sub("", text).split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


def _output(page: _Page, output: dict[str, Any], where: str) -> None:
    kind = str(output.get("output_type", "?"))
    if kind == "stream":
        name = _terminal(str(output.get("name", "stdout")))
        text = _cut(page, _terminal(joined(output.get("text"))), where)
        page.add(f'<output type="stream" name="{name}">\n{text}\n</output>')
    elif kind == "error":
        trace = output.get("traceback")
        lines = [t for t in trace if isinstance(t, str)] if isinstance(trace, list) else []
        ename, evalue = (_terminal(str(output.get(k, ""))) for k in ("ename", "evalue"))
        text = _terminal("\n".join(lines)) or f"{ename}: {evalue}"
        page.add(f'<output type="error" ename="{ename}" evalue="{evalue}">\n'
                 f"{_cut(page, text, where)}\n</output>")
    elif kind in ("execute_result", "display_data"):
        _rich(page, output, kind, where)
    else:
        page.add(f'<output type="{_terminal(kind)}">[not shown: an output of this type has no '
                 "text]</output>")


def _rich(page: _Page, output: dict[str, Any], kind: str, where: str) -> None:
    data = output.get("data")
    if not isinstance(data, dict):
        data = {}
    page.add(f'<output type="{kind}">')
    text_mime = next((m for m in _TEXT_MIMES if m in data), None)
    if text_mime is not None:
        page.add(_cut(page, _terminal(joined(data[text_mime])), where))
    for mime in (m for m in _IMAGE_MIMES if m in data):
        _picture(page, joined(data[mime]), mime, where)
    others = sorted(str(m) for m in data if m not in (*_IMAGE_MIMES, text_mime))
    if others:
        page.add(f"[also in this output, not shown: {_terminal(', '.join(others))}]")
    page.add("</output>")


def _picture(page: _Page, encoded: str, mime: str, where: str) -> None:
    if page.full or page.images >= MAX_IMAGES or page.image_bytes >= MAX_IMAGE_BYTES:
        _not_shown(page, mime, where)  # nothing more can be shown: it is never decoded
        return
    try:
        blob = base64.b64decode(encoded)
    except (binascii.Error, ValueError):
        page.add(f"[{mime}: its base64 is broken; not shown]")
        return
    media = image_type(blob)
    fitted: Fitted | str = f"the data is not a whole {mime} image"
    if media is not None and whole_image(blob) == media:
        claimed = claimed_pixels(blob, media) or 0
        if claimed <= MAX_PIXELS:  # past it, fit_image refuses it undecoded
            if page.pixels + claimed > MAX_NOTEBOOK_PIXELS:
                _not_shown(page, mime, where)
                return
            page.pixels += claimed
        fitted = fit_image(blob, media)
    if isinstance(fitted, str):
        page.add(f"[{mime}: not shown: {fitted}]")
        return
    if page.image_bytes + len(fitted.block.data) > MAX_IMAGE_BYTES:
        _not_shown(page, mime, where)
        return
    page.image(fitted)


def _not_shown(page: _Page, mime: str, where: str) -> None:
    page.cut = True
    page.add(f"[{mime}: not shown: the images one Read shows ({MAX_IMAGES}, "
             f"{MAX_IMAGE_BYTES:,} bytes, {MAX_NOTEBOOK_PIXELS:,} pixels decoded) are used up; "
             f"save it with Bash (jq -r '{where}.data[\"{mime}\"]' {page.jq_path} | base64 -d "
             "> plot.png) and Read that]")


def _cut(page: _Page, text: str, where: str) -> str:
    text = text.rstrip("\n")
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    page.cut = True
    return (f"{text[:MAX_OUTPUT_CHARS]}\n[output cut: {len(text):,} characters, "
            f"{MAX_OUTPUT_CHARS:,} shown; see it whole with Bash: jq '{where}' {page.jq_path}]")
