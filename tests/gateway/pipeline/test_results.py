"""The three size limits and errors as data."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest
from kit import WaitTool, wait_tool

from gateway.context import SessionContext
from gateway.messages import BlobBlock, ImageBlock, TextBlock, ToolResultMessage, ToolUse
from gateway.pipeline import HARD_CAP_CHARS, Pipeline, classify_tool_error, fit_message
from gateway.pipeline.results import limit_result
from gateway.tools import build_tool


def _saved_path(message: ToolResultMessage) -> Path:
    line = next(x for x in message.text.splitlines() if "saved to: " in x)
    return Path(line.split("saved to: ", 1)[1].split("</", 1)[0].strip())


def test_a_result_over_the_tools_limit_is_persisted_with_a_preview_and_the_path(
        session: SessionContext) -> None:
    big = "".join(f"line {i}\n" for i in range(20_000))  # ~170,000 characters
    result = asyncio.run(Pipeline(session, [wait_tool()]).run(
        ToolUse("toolu_big", "Wait", {"text": big})))
    assert not result.is_error
    assert result.text.startswith("<persisted-output>") and len(result.text) < 3_000
    assert "line 0\nline 1\n" in result.text  # the preview
    saved = _saved_path(result)
    assert saved.read_text() == big
    assert str(saved).startswith(session.results_dir)
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_a_tool_may_raise_its_own_limit_but_not_past_the_hard_cap(
        session: SessionContext) -> None:
    class Roomy(WaitTool):
        name = "Roomy"
        max_result_size_chars = 10**9

    tool = build_tool(Roomy())
    fits = "x" * 100_000
    over = "y" * (HARD_CAP_CHARS + 1)
    pipeline = Pipeline(session, [tool])
    kept = asyncio.run(pipeline.run(ToolUse("a", "Roomy", {"text": fits})))
    assert kept.text == fits
    capped = asyncio.run(pipeline.run(ToolUse("b", "Roomy", {"text": over})))
    assert capped.text.startswith("<persisted-output>")
    assert _saved_path(capped).read_text() == over


def test_results_of_one_message_are_held_to_the_budget_largest_first(
        session: SessionContext) -> None:
    results = [ToolResultMessage(i, (TextBlock(c * n),))
               for i, c, n in (("a", "a", 40_000), ("b", "b", 90_000), ("c", "c", 80_000))]
    fitted = {r.tool_use_id: r for r in fit_message(results, session, budget=200_000)}
    assert fitted["b"].text.startswith("<persisted-output>")  # the largest went first
    assert fitted["c"].text == "c" * 80_000 and fitted["a"].text == "a" * 40_000


@pytest.mark.parametrize(("block", "persisted"), [
    (BlobBlock("application/octet-stream", b"\0" * 30_000), True),
    (BlobBlock("application/octet-stream", b"\0" * 1_000), False),
    (ImageBlock("image/png", b"\x89PNG" + b"\0" * 30_000), False),
    (ImageBlock("image/png", b"\x89PNG" + b"\0" * 4_000_000), True),
])
def test_binary_content_over_the_inline_size_is_persisted_and_referenced(
        session: SessionContext, block: BlobBlock | ImageBlock, persisted: bool) -> None:
    message = limit_result(ToolResultMessage("t", (block,)), 10**9, session)
    if persisted:
        assert "saved to: " in message.text
        assert _saved_path(message).read_bytes() == block.data
    else:
        assert message.content == (block,)


def test_a_result_with_an_image_is_persisted_whole_once_and_the_budget_ends(
        session: SessionContext) -> None:
    image = ImageBlock("image/png", b"\x89PNG" + b"\0" * 200_000)
    results = [ToolResultMessage("img", (TextBlock("x" * 50_000), image)),
               ToolResultMessage("small", (TextBlock("fits"),))]
    # within both budgets (text and images are counted apart), all stays
    kept = fit_message(results, session, budget=200_000)
    assert kept[0].content == results[0].content
    fitted = fit_message(results, session, budget=200_000, image_budget=100_000)
    assert fitted[1].text == "fits"
    assert not any(isinstance(b, ImageBlock) for b in fitted[0].content)
    saved = [_saved_path(ToolResultMessage("t", (b,))) for b in fitted[0].content]
    assert sorted(p.read_bytes()[:4] for p in saved) == [b"xxxx", b"\x89PNG"]


@pytest.mark.parametrize("tool_use_id", [
    "../../escape", "a/1", "a_1", "\u4e2d" * 120, "nul\0byte", ".", "",
])
def test_any_tool_use_id_gives_a_new_file_inside_the_results_directory(
        session: SessionContext, tool_use_id: str) -> None:
    first = limit_result(ToolResultMessage(tool_use_id, (TextBlock("a" * 2_000),)), 1_000,
                         session)
    second = limit_result(ToolResultMessage(tool_use_id, (TextBlock("b" * 2_000),)), 1_000,
                          session)
    paths = [_saved_path(first), _saved_path(second)]
    assert paths[0] != paths[1]  # the second never overwrites the first
    assert all(p.parent == Path(session.results_dir) for p in paths)
    assert [p.read_text()[0] for p in paths] == ["a", "b"]


def test_a_result_that_cannot_be_saved_keeps_its_preview_and_says_why(
        session: SessionContext, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    session.results_dir = str(blocker)
    result = limit_result(ToolResultMessage("t", (TextBlock("line\n" * 20_000),)), 1_000,
                          session)
    assert "could not be saved (Error:EEXIST)" in result.text  # makedirs on a file
    assert result.text.count("line") > 100  # the preview is still there


@pytest.mark.parametrize(("exc", "name"), [
    (FileNotFoundError(2, "No such file", "/home/u/secret.txt"), "Error:ENOENT"),
    (PermissionError(13, "denied", "/etc/shadow"), "Error:EACCES"),
    (ValueError("contents of the file: hunter2"), "ValueError"),
    (KeyError("x"), "KeyError"),
])
def test_tool_errors_are_classified_by_errno_or_class_never_by_contents(
        exc: BaseException, name: str) -> None:
    assert classify_tool_error(exc) == name
