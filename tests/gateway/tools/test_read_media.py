"""Read of images, PDFs and notebooks, against real files made in the test
(images by Pillow, PDFs by pypdf's writer, notebooks as JSON), under the
real sandbox policy — unit by unit and through the whole pipeline."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision
from gateway.messages import ImageBlock, TextBlock, ToolResultMessage, ToolUse
from gateway.session import Session
from gateway.tools import images as images_mod
from gateway.tools import notebook as notebook_mod
from gateway.tools import read_pdf
from gateway.tools.images import MAX_EDGE, RAW_BUDGET, stdout_image
from gateway.tools.read import READ, ReadInput

Ctx = Callable[[], ToolContext]


def read(tool_context: Ctx, path: Path, **kw: Any) -> ToolResultMessage:
    """A Read as the pipeline runs it: validation, permission, call."""
    ctx, data = tool_context(), ReadInput(file_path=str(path), **kw)
    checked = asyncio.run(READ.validate_input(data, ctx))
    assert checked.ok, checked.message
    assert asyncio.run(READ.check_permissions(data, ctx)).decision is Decision.ALLOW
    return READ.map_result(asyncio.run(READ.call(data, ctx, lambda _: None)), ctx.tool_use_id)


def images(result: ToolResultMessage) -> list[ImageBlock]:
    return [b for b in result.content if isinstance(b, ImageBlock)]


def encoded(fmt: str, size: tuple[int, int], noise: bool = False, **kw: Any) -> bytes:
    image = (Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3)) if noise
             else Image.new("RGB", size, (20, 120, 220)))
    out = io.BytesIO()
    image.save(out, fmt, **kw)
    return out.getvalue()


def decoded_size(block: ImageBlock) -> tuple[int, int]:
    with Image.open(io.BytesIO(block.data)) as image:
        return image.size


def png_claiming(width: int, height: int) -> bytes:
    """A small, well-formed PNG whose header claims ``width`` x ``height``."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                               0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 1024)) + chunk(b"IEND", b""))


# -- images ----------------------------------------------------------------

@pytest.mark.parametrize(("fmt", "size", "media", "resized"), [
    ("PNG", (3000, 1500), "image/png", (2000, 1000)),
    ("JPEG", (2400, 3600), "image/jpeg", (1333, 2000)),
    ("WEBP", (4000, 100), "image/webp", (2000, 50)),
])
def test_an_image_over_the_edge_limit_is_resized_keeping_its_aspect(
        workspace: Path, tool_context: Ctx, fmt: str, size: tuple[int, int], media: str,
        resized: tuple[int, int]) -> None:
    (workspace / "big").write_bytes(encoded(fmt, size))
    result = read(tool_context, workspace / "big")
    [image] = images(result)
    assert not result.is_error and image.media_type == media
    assert decoded_size(image) == resized and max(resized) == MAX_EDGE
    assert f"resized from {size[0]}x{size[1]} to {resized[0]}x{resized[1]}" in result.text


def test_an_image_too_heavy_for_the_budget_is_reencoded_under_it(
        workspace: Path, tool_context: Ctx) -> None:
    blob = encoded("PNG", (1900, 1900), noise=True)  # ~10 MB of noise: no PNG packs it
    assert len(blob) > RAW_BUDGET
    (workspace / "noise.png").write_bytes(blob)
    result = read(tool_context, workspace / "noise.png")
    [image] = images(result)
    assert len(image.data) <= RAW_BUDGET and decoded_size(image) == (1900, 1900)
    assert "re-encoded as JPEG" in result.text


def test_an_image_within_the_limits_goes_through_byte_for_byte(workspace: Path,
                                                                tool_context: Ctx) -> None:
    blob = encoded("JPEG", (1600, 1200), noise=True)
    (workspace / "photo.jpg").write_bytes(blob)
    result = read(tool_context, workspace / "photo.jpg")
    assert result.content == (ImageBlock("image/jpeg", blob),)


def test_an_animated_gif_gives_its_first_frame(workspace: Path, tool_context: Ctx) -> None:
    frames = [Image.new("RGB", (30, 20), color) for color in ("red", "blue", "green")]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0)
    (workspace / "anim.gif").write_bytes(out.getvalue())
    result = read(tool_context, workspace / "anim.gif")
    [image] = images(result)
    assert image.media_type == "image/png" and "first frame" in result.text
    with Image.open(io.BytesIO(image.data)) as first:
        assert first.convert("RGB").getpixel((5, 5)) == (255, 0, 0)
        assert not getattr(first, "is_animated", False)


@pytest.mark.parametrize(("width", "height"), [(50_000, 50_000), (8_000, 8_000)])
def test_a_decompression_bomb_is_refused_before_it_is_decoded(
        workspace: Path, tool_context: Ctx, width: int, height: int) -> None:
    (workspace / "bomb.png").write_bytes(png_claiming(width, height))
    started = time.monotonic()
    result = read(tool_context, workspace / "bomb.png")
    assert time.monotonic() - started < 5
    assert result.is_error and not images(result)
    assert "pixels" in result.text and "not decoded" in result.text


def test_a_truncated_image_is_a_clear_error(workspace: Path, tool_context: Ctx) -> None:
    blob = encoded("PNG", (300, 300), noise=True)
    cut = blob[: len(blob) // 2] + blob[-12:]  # half the pixels, the end marker kept
    (workspace / "cut.png").write_bytes(cut)
    result = read(tool_context, workspace / "cut.png")
    assert result.is_error and not images(result)
    assert "truncated or corrupt" in result.text and "\n" not in result.text


def test_a_jpeg_cut_short_is_not_a_whole_image(workspace: Path, tool_context: Ctx) -> None:
    blob = encoded("JPEG", (300, 300), noise=True)
    (workspace / "cut.jpg").write_bytes(blob[: len(blob) // 2])
    result = read(tool_context, workspace / "cut.jpg")
    assert result.is_error and "not a whole one" in result.text


def test_a_read_image_is_recorded_for_later_checks(workspace: Path, tool_context: Ctx,
                                                   session: SessionContext) -> None:
    blob = encoded("PNG", (2500, 10))
    (workspace / "strip.png").write_bytes(blob)
    read(tool_context, workspace / "strip.png")
    record = session.last_read(str(workspace / "strip.png"))
    assert record is not None and record.sha256 == hashlib.sha256(blob).hexdigest()


def test_command_output_that_is_a_large_image_is_resized_and_garbage_is_not_an_image() -> None:
    fitted = stdout_image(encoded("PNG", (2200, 2200)))
    assert fitted is not None and decoded_size(fitted.block) == (2000, 2000)
    assert "resized from 2200x2200" in fitted.note
    assert stdout_image(png_claiming(50_000, 50_000)) is None
    assert stdout_image(b"\x89PNG\r\n\x1a\n then text") is None


# -- PDFs ------------------------------------------------------------------

def pdf(texts: list[str], password: str | None = None) -> bytes:
    """A PDF with one line of Helvetica text per page."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for text in texts:
        page = writer.add_blank_page(612, 792)
        content = DecodedStreamObject()
        content.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(content)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
            {NameObject("/F1"): font})})
    if password is not None:
        writer.encrypt(user_password=password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_short_pdf_is_read_whole_page_by_page(workspace: Path, tool_context: Ctx,
                                                session: SessionContext) -> None:
    blob = pdf(["alpha text", "beta text", "gamma text"])
    (workspace / "doc.pdf").write_bytes(blob)
    result = read(tool_context, workspace / "doc.pdf")
    assert not result.is_error
    assert result.text == ("--- page 1 of 3 ---\nalpha text\n\n--- page 2 of 3 ---\nbeta text\n\n"
                           "--- page 3 of 3 ---\ngamma text")
    record = session.last_read(str(workspace / "doc.pdf"))
    assert record is not None and record.sha256 == hashlib.sha256(blob).hexdigest()


@pytest.mark.parametrize(("pages", "shown"), [("2", [2]), ("1,3", [1, 3]), ("2-3", [2, 3]),
                                              (" 3 , 1-2 ", [3, 1, 2])])
def test_pages_picks_the_pages_shown(workspace: Path, tool_context: Ctx, pages: str,
                                     shown: list[int]) -> None:
    (workspace / "doc.pdf").write_bytes(pdf(["p-one", "p-two", "p-three"]))
    text = read(tool_context, workspace / "doc.pdf", pages=pages).text
    headings = [int(line.split()[2]) for line in text.splitlines() if line.startswith("---")]
    assert headings == shown


def test_a_pdf_over_ten_pages_asks_for_pages_and_gives_its_count(workspace: Path,
                                                                 tool_context: Ctx) -> None:
    (workspace / "long.pdf").write_bytes(pdf([f"page{n}" for n in range(1, 13)]))
    result = read(tool_context, workspace / "long.pdf")
    assert result.is_error and "12 pages" in result.text and "pages" in result.text
    assert "page1" not in result.text
    assert "page12" in read(tool_context, workspace / "long.pdf", pages="11-12").text


def test_a_page_past_the_end_is_a_clear_error(workspace: Path, tool_context: Ctx) -> None:
    (workspace / "doc.pdf").write_bytes(pdf(["only"]))
    result = read(tool_context, workspace / "doc.pdf", pages="1,4")
    assert result.is_error and "has 1 page: page 4 is past its end" in result.text


@pytest.mark.parametrize(("pages", "says"), [
    ("0", "names no page"), ("3-1", "names no page"), ("two", "not a page range"),
    ("", "not a page range"), ("1-21", "more than 20 pages"),
    ("1-999999999", "more than 20 pages"), ("1-15,10-30", "more than 20 pages"),
])
def test_a_bad_page_range_is_refused_at_validation(workspace: Path, tool_context: Ctx,
                                                   pages: str, says: str) -> None:
    (workspace / "doc.pdf").write_bytes(pdf(["x"]))
    checked = asyncio.run(READ.validate_input(
        ReadInput(file_path=str(workspace / "doc.pdf"), pages=pages), tool_context()))
    assert not checked.ok and says in checked.message


def test_pages_on_a_file_that_is_not_a_pdf_is_an_error(workspace: Path,
                                                        tool_context: Ctx) -> None:
    result = read(tool_context, workspace / "README.md", pages="1")
    assert result.is_error and "pages is for PDF files" in result.text


def test_a_pdf_with_a_password_is_refused_and_one_with_an_empty_password_is_read(
        workspace: Path, tool_context: Ctx) -> None:
    (workspace / "locked.pdf").write_bytes(pdf(["secret page"], password="hunter2"))
    (workspace / "open.pdf").write_bytes(pdf(["open page"], password=""))
    locked = read(tool_context, workspace / "locked.pdf")
    assert locked.is_error and "needs a password" in locked.text
    assert "secret page" not in locked.text
    assert "open page" in read(tool_context, workspace / "open.pdf").text


def test_a_malformed_pdf_is_a_one_line_error(workspace: Path, tool_context: Ctx) -> None:
    (workspace / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog")
    result = read(tool_context, workspace / "broken.pdf")
    assert result.is_error and "not a PDF that can be read" in result.text
    assert "\n" not in result.text


def test_a_pathological_pdf_is_stopped_at_the_deadline(workspace: Path, tool_context: Ctx,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # one page of 200,000 text operators: pypdf needs seconds to walk it
    (workspace / "slow.pdf").write_bytes(pdf([") Tj (x" * 200_000]))
    monkeypatch.setattr(read_pdf, "PDF_TIMEOUT_S", 0.5)
    started = time.monotonic()
    result = read(tool_context, workspace / "slow.pdf")
    assert time.monotonic() - started < 10
    assert result.is_error and "was stopped" in result.text


def test_reading_tools_load_neither_pillow_nor_pypdf_until_a_file_needs_them() -> None:
    probe = ("import sys\nimport gateway.tools.read, gateway.tools.bash_output, "
             "gateway.tools.notebook_edit\n"
             "print(sorted(m for m in ('PIL', 'pypdf') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.stdout.strip() == "[]", done.stderr[-2000:]


# -- notebooks -------------------------------------------------------------

PLOT = encoded("PNG", (64, 48))


def notebook(cells: list[dict[str, Any]], minor: int = 5) -> dict[str, Any]:
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3"},
                                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": minor}


def code(source: str, outputs: list[dict[str, Any]], cid: str | None = None,
         count: int | None = 1) -> dict[str, Any]:
    cell = {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": outputs,
            "source": source.splitlines(keepends=True)}
    return cell if cid is None else {"id": cid, **cell}


OUTPUTS = [
    {"output_type": "stream", "name": "stdout", "text": ["hello\n", "world\n"]},
    {"output_type": "stream", "name": "stderr", "text": "10%\r50%\r100%\n"},
    {"output_type": "execute_result", "execution_count": 1, "metadata": {},
     "data": {"text/plain": ["42"], "text/html": ["<b>42</b>"]}},
    {"output_type": "display_data", "metadata": {},
     "data": {"image/png": base64.b64encode(PLOT).decode(), "text/plain": "<Figure>"}},
    {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
     "traceback": ["\x1b[0;31m---------\x1b[0m", "\x1b[0;31mZeroDivisionError\x1b[0m: "
                   "division by zero"]},
]


def write_notebook(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return path


def test_a_notebook_is_shown_as_cells_with_every_kind_of_output(workspace: Path,
                                                                tool_context: Ctx) -> None:
    path = write_notebook(workspace / "nb.ipynb", notebook([
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Text"]},
        code("print('hello')\n1/0", OUTPUTS, cid="run1")]))
    result = read(tool_context, path)
    assert not result.is_error
    text = result.text
    assert "2 cells (nbformat 4.5, kernel python3, language python)" in text
    assert '<cell id="intro" type="markdown">\n# Title\nText\n</cell>' in text
    assert '<cell id="run1" type="code" execution_count="1">\nprint(\'hello\')\n1/0' in text
    assert '<output type="stream" name="stdout">\nhello\nworld\n</output>' in text
    assert '<output type="stream" name="stderr">\n100%\n</output>' in text
    assert "42" in text and "not shown: text/html" in text and "<Figure>" in text
    assert 'ename="ZeroDivisionError"' in text and "\x1b" not in text
    assert "ZeroDivisionError: division by zero" in text
    assert images(result) == [ImageBlock("image/png", PLOT)]
    # the image sits between the text before it and the text after it
    kinds = [type(b) for b in result.content]
    assert kinds.index(ImageBlock) not in (0, len(kinds) - 1)


def test_cells_without_ids_are_named_cell_n(workspace: Path, tool_context: Ctx) -> None:
    path = write_notebook(workspace / "old.ipynb", notebook(
        [code("a = 1", []), code("b = 2", [])], minor=4))
    text = read(tool_context, path).text
    assert '<cell id="cell-0" type="code"' in text and '<cell id="cell-1" type="code"' in text


def test_a_large_output_is_cut_with_a_marker_naming_the_way_to_see_it(
        workspace: Path, tool_context: Ctx) -> None:
    path = write_notebook(workspace / "loud.ipynb", notebook([code("spam()", [
        {"output_type": "stream", "name": "stdout", "text": "x" * 50_000}], cid="c")]))
    text = read(tool_context, path).text
    assert "x" * 10_000 in text and "x" * 10_001 not in text
    assert "output cut: 50,000 characters" in text and "jq '.cells[0].outputs[0]'" in text


def test_a_notebook_past_the_text_budget_is_cut_where_it_reached_it(
        workspace: Path, tool_context: Ctx, session: SessionContext) -> None:
    cells = [code(f"cell_{n} = '{'v' * 1000}'", [], cid=f"c{n}") for n in range(400)]
    path = write_notebook(workspace / "long.ipynb", notebook(cells))
    text = read(tool_context, path).text
    assert len(text.encode()) < 270_000
    assert '<cell id="c0"' in text and '<cell id="c399"' not in text
    assert "256 KiB a Read returns was reached in cell" in text and "jq '.cells[" in text
    record = session.last_read(str(path))
    assert record is not None and not record.complete


def test_a_large_plot_in_a_notebook_is_resized(workspace: Path, tool_context: Ctx) -> None:
    big = encoded("PNG", (2600, 1300))
    path = write_notebook(workspace / "plot.ipynb", notebook([code("plot()", [
        {"output_type": "display_data", "metadata": {},
         "data": {"image/png": base64.b64encode(big).decode()}}])]))
    [image] = images(read(tool_context, path))
    assert decoded_size(image) == (2000, 1000)


@pytest.mark.parametrize(("content", "why"), [
    ('{"cells": [\n<<<<<<< HEAD\n]}', "not valid JSON (line 2"),
    ('{"metadata": {}}', "no list of cells"),
    ("[" * 100_000, "nested too deeply"),
])
def test_a_file_named_ipynb_that_is_no_notebook_is_shown_as_text_with_a_note(
        workspace: Path, tool_context: Ctx, session: SessionContext, content: str,
        why: str) -> None:
    path = workspace / "broken.ipynb"
    path.write_text(content)
    result = read(tool_context, path)
    assert not result.is_error
    assert why in result.text and "shown as text" in result.text
    assert "     1\t" in result.text
    assert session.last_read(str(path)) is not None  # Write may repair it


def test_the_whole_pipeline_reads_an_image_a_pdf_and_a_notebook(workspace: Path,
                                                                  tmp_path: Path) -> None:
    (workspace / "shot.png").write_bytes(encoded("PNG", (2400, 1200)))
    (workspace / "paper.pdf").write_bytes(pdf(["abstract", "method"]))
    write_notebook(workspace / "nb.ipynb", notebook([code("show()", OUTPUTS[3:4], cid="p")]))
    session = Session.open(str(workspace), home=str(tmp_path / "home"),
                           results_dir=str(tmp_path / "results"))

    def run(name: str, **kw: Any) -> ToolResultMessage:
        use = ToolUse(f"toolu_{name}", "Read", {"file_path": str(workspace / name), **kw})
        return asyncio.run(session.run(use))

    shot = run("shot.png")
    assert [decoded_size(b) for b in images(shot)] == [(2000, 1000)]
    assert "--- page 2 of 2 ---\nmethod" in run("paper.pdf", pages="2").text
    nb = run("nb.ipynb")
    assert images(nb) == [ImageBlock("image/png", PLOT)] and '<cell id="p"' in nb.text
    bad = run("paper.pdf", pages="0")
    assert bad.is_error and bad.text.startswith("<tool_use_error>")
    assert all(isinstance(b, TextBlock | ImageBlock) for b in nb.content)


# -- hostile media: what a Read decodes is bounded ------------------------------

def progressive_with_scans(scans: int, size: int = 64) -> bytes:
    """A progressive JPEG whose first AC scan is repeated until it has
    ``scans`` scans (each one a pass over every block of the image)."""
    blob = encoded("JPEG", (size, size), progressive=True)
    start = blob.index(b"\xff\xda")
    # an AC scan: its spectral start (the byte after the component table) > 0
    sos = [i for i in range(start, len(blob) - 1) if blob[i:i + 2] == b"\xff\xda"]
    ac = next(i for i in sos if blob[i + 5 + 2 * blob[i + 4]] > 0)
    end = min([i for i in sos if i > ac] + [len(blob) - 2])
    return blob[:-2] + blob[ac:end] * (scans - len(sos)) + b"\xff\xd9"


def test_a_jpeg_of_too_many_scans_is_refused_before_it_is_decoded(
        workspace: Path, tool_context: Ctx) -> None:
    # reproducer: 20,000 scans of 7000x7000 (1.7 MB) decoded for 84 s in the gateway
    (workspace / "fine.jpg").write_bytes(progressive_with_scans(images_mod.MAX_JPEG_SCANS))
    (workspace / "scans.jpg").write_bytes(progressive_with_scans(5_000))
    assert images(read(tool_context, workspace / "fine.jpg"))
    result = read(tool_context, workspace / "scans.jpg")
    assert result.is_error and not images(result)
    assert f"more than {images_mod.MAX_JPEG_SCANS} scans" in result.text
    assert stdout_image(progressive_with_scans(5_000)) is None


def test_no_more_images_are_decoded_at_once_than_the_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    # reproducer: ten parallel Reads of a 188-byte 7000x7000 WebP took 8 GB
    real, lock, now, most = images_mod._fit, threading.Lock(), [0], [0]

    def counted(data: bytes, media: str) -> Any:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        try:
            time.sleep(0.05)
            return real(data, media)
        finally:
            with lock:
                now[0] -= 1

    monkeypatch.setattr(images_mod, "_fit", counted)
    blob = encoded("PNG", (2100, 50))
    with ThreadPoolExecutor(8) as pool:
        done = list(pool.map(lambda _: images_mod.fit_image(blob, "image/png"), range(8)))
    assert all(isinstance(f, images_mod.Fitted) for f in done)
    assert most[0] == images_mod.DECODE_SLOTS


def plots(blobs: list[bytes]) -> list[dict[str, Any]]:
    return [{"output_type": "display_data", "metadata": {},
             "data": {"image/png": base64.b64encode(b).decode()}} for b in blobs]


@pytest.mark.parametrize(("blobs", "budget", "decoded", "shown"), [
    # more plots than one Read shows: those past it are never decoded
    ([PLOT] * 25, None, 20, 20),
    # big plots: decoding stops at the pixel budget (a truncated one counts)
    ([encoded("PNG", (1000, 1000))[:-200] + encoded("PNG", (1, 1))[-12:]]
     + [encoded("PNG", (1000, 1000))] * 5, 3_000_000, 3, 2),
])
def test_a_notebooks_plots_are_decoded_within_a_reads_budget(
        workspace: Path, tool_context: Ctx, monkeypatch: pytest.MonkeyPatch,
        blobs: list[bytes], budget: int | None, decoded: int, shown: int) -> None:
    # reproducer: forty 14 KB PNGs of 7071x7071 in one notebook kept a Read
    # decoding for 48 s, each decoded before the image budget was looked at
    if budget is not None:
        monkeypatch.setattr(notebook_mod, "MAX_NOTEBOOK_PIXELS", budget)
    calls: list[str] = []

    def counted(data: bytes, media: str) -> images_mod.Fitted | str:
        calls.append(media)
        return images_mod.fit_image(data, media)

    monkeypatch.setattr(notebook_mod, "fit_image", counted)
    path = write_notebook(workspace / "plots.ipynb", notebook([code("plot()", plots(blobs))]))
    result = read(tool_context, path)
    assert not result.is_error
    assert len(calls) == decoded and len(images(result)) == shown
    assert "are used up" in result.text


def test_a_notebook_holding_a_number_python_will_not_read_is_shown_as_text(
        workspace: Path, tool_context: Ctx) -> None:
    # reproducer: a 5000-digit number raised ValueError out of Read
    path = workspace / "digits.ipynb"
    path.write_text('{"cells": [], "metadata": {"n": ' + "7" * 5000 + "}}")
    result = read(tool_context, path)
    assert not result.is_error and "shown as text" in result.text
    assert "cannot be read" in result.text


def test_no_more_pdf_workers_run_at_once_than_the_slots(
        workspace: Path, tool_context: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    # reproducer: ten parallel Reads of a 59 KB PDF ran six 1 GiB-capped workers
    real, lock, now, most = subprocess.run, threading.Lock(), [0], [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                now[0] -= 1

    monkeypatch.setattr(subprocess, "run", counted)  # the module read_pdf runs its worker with
    (workspace / "doc.pdf").write_bytes(pdf(["one page"]))
    read(tool_context, workspace / "doc.pdf")  # the session's plan made once, before the race
    most[0] = 0
    with ThreadPoolExecutor(6) as pool:
        done = list(pool.map(lambda _: read(tool_context, workspace / "doc.pdf"), range(6)))
    assert all("one page" in r.text for r in done)
    assert most[0] == read_pdf.PDF_WORKERS
