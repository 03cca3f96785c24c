"""The helpers the file tools share, one behaviour at a time."""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.context import ReadRecord, ToolContext
from gateway.tools.filetext import (
    UTF8,
    Code,
    Encoding,
    FileInput,
    Refusal,
    detect_encoding,
    find_spans,
    from_lf,
    is_absolute,
    line_count,
    not_regular,
    open_dir,
    open_regular,
    os_error,
    pin,
    restyle_quotes,
    splice,
    staleness,
    to_lf,
    unified_diff,
)

Ctx = Callable[[], ToolContext]


@pytest.mark.parametrize(("head", "whole", "expected"), [
    (b"plain ascii\n", True, UTF8),
    ("caf\xe9".encode(), True, UTF8),
    ("caf\xe9".encode()[:-1], False, UTF8),  # a character cut at the sniff's end
    ("caf\xe9".encode()[:-1], True, None),  # ... is invalid when that is the end
    (b"caf\xe9", True, None),  # latin-1
    (b"text\x00more", True, None),
    (codecs.BOM_UTF8 + b"x", True, Encoding("utf-8", codecs.BOM_UTF8)),
    (codecs.BOM_UTF16_LE + "x".encode("utf-16-le"), True,
     Encoding("utf-16-le", codecs.BOM_UTF16_LE)),
    (codecs.BOM_UTF16_BE + "x".encode("utf-16-be"), True,
     Encoding("utf-16-be", codecs.BOM_UTF16_BE)),
    (codecs.BOM_UTF32_LE + "x".encode("utf-32-le"), True,
     Encoding("utf-32-le", codecs.BOM_UTF32_LE)),
])
def test_the_encoding_is_told_by_its_mark_else_utf8_else_binary(
        head: bytes, whole: bool, expected: Encoding | None) -> None:
    assert detect_encoding(head, whole=whole) == expected


@pytest.mark.parametrize("codec", ["utf-8", "utf-16-le", "utf-16-be"])
def test_an_encoding_round_trips_with_its_mark(codec: str) -> None:
    bom = "\ufeff".encode(codec)
    encoding = Encoding(codec, bom)
    data = bom + "h\xe9llo\n".encode(codec)
    assert encoding.encode(encoding.decode(data)) == data


@pytest.mark.parametrize(("text", "lf", "newline"), [
    ("a\r\nb\r\n", "a\nb\n", "\r\n"),
    ("a\nb\n", "a\nb\n", "\n"),
    ("a\r\nb\r\nc\n", "a\nb\nc\n", "\r\n"),  # mixed: the majority wins
    ("a\r\nb\nc\n", "a\nb\nc\n", "\n"),
    ("no newline", "no newline", "\n"),
])
def test_line_endings_are_made_lf_and_the_majority_remembered(text: str, lf: str,
                                                              newline: str) -> None:
    assert to_lf(text) == (lf, newline)
    if text.count("\n") == text.count("\r\n") or "\r" not in text:
        assert from_lf(lf, newline) == text


@pytest.mark.parametrize(("text", "count"), [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2),
                                             ("\n\n", 2)])
def test_lines_are_counted_like_an_editor_does(text: str, count: int) -> None:
    assert line_count(text) == count


@pytest.mark.parametrize(("text", "needle", "starts"), [
    ("a.b a.b", "a.b", [0, 4]),
    ("axb", "a.b", []),  # never a regular expression
    ("aaaa", "aa", [0, 2]),  # without overlap
    ("say “hi”", 'say "hi"', [0]),
    ("it’s", "it's", [0]),
    ("x 'q' and ‘q’", "'q'", [2]),  # an exact match wins over the straightened ones
])
def test_spans_are_found_exactly_else_with_quotes_straightened(text: str, needle: str,
                                                               starts: list[int]) -> None:
    assert find_spans(text, needle) == starts


@pytest.mark.parametrize(("new", "found", "expected"), [
    ('say "hi"', "say “yo”", "say “hi”"),
    ("'a' don't", "‘b’", "‘a’ don’t"),
    ('("x")', "(“y”)", "(“x”)"),
    ('plain "q"', "plain", 'plain "q"'),  # no curly quotes where it replaces
    ("'s' \"d\"", "‘single only’", "‘s’ \"d\""),  # only the kind the file used
])
def test_new_text_takes_the_quote_style_of_what_it_replaces(new: str, found: str,
                                                             expected: str) -> None:
    assert restyle_quotes(new, found) == expected


def test_splice_restyles_only_spans_found_by_straightening() -> None:
    text = "“a” and \"a\""
    assert splice(text, find_spans(text, '"a"'), '"a"', '"b"') == "“a” and \"b\""
    assert splice("“a”", [0], '"a"', '"b"') == "“b”"


def _record(data: bytes, st: os.stat_result, complete: bool) -> ReadRecord:
    return ReadRecord(hashlib.sha256(data).hexdigest(), st.st_mtime_ns, st.st_size, 1, None,
                      complete)


@pytest.mark.parametrize(("now", "mtime_moved", "complete", "expected"), [
    (b"same", False, False, None),
    (b"same", True, True, None),  # touched: the whole file was seen and is the same
    (b"same", True, False, Code.CHANGED),  # touched after a partial read
    (b"diff", False, True, Code.CHANGED),  # same size and mtime, other bytes
    (b"longer", True, True, Code.CHANGED),
])
def test_a_file_is_stale_unless_its_content_is_what_was_read(
        tmp_path: Path, now: bytes, mtime_moved: bool, complete: bool,
        expected: Code | None) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"same")
    record = _record(b"same", path.stat(), complete)
    path.write_bytes(now)
    os.utime(path, ns=(0, record.mtime_ns + (10**9 if mtime_moved else 0)))
    assert staleness(record, now, path.stat()) == expected
    assert staleness(None, now, path.stat()) == Code.NOT_READ


def test_the_diff_is_unified_with_three_lines_of_context() -> None:
    before = "".join(f"{i}\n" for i in range(10))
    diff = unified_diff(before, before.replace("5\n", "five\n"), "/w/f.txt").splitlines()
    assert diff[:3] == ["--- /w/f.txt", "+++ /w/f.txt", "@@ -3,7 +3,7 @@"]
    assert "-5" in diff and "+five" in diff
    assert unified_diff("same\n", "same\n", "/w/f") == ""


@pytest.mark.parametrize(("path", "absolute"), [("/a", True), ("~/a", True), ("~", True),
                                                ("a", False), ("./a", False), ("~x/a", False)])
def test_only_absolute_or_home_paths_count_as_absolute(path: str, absolute: bool) -> None:
    assert is_absolute(path) is absolute


def test_a_path_is_shown_relative_to_the_working_directory_and_pinned_once(
        tool_context: Ctx, workspace: Path) -> None:
    inside = FileInput(file_path=f"{workspace}/src/../a.py")
    assert inside.shown_path() == inside.file_path  # no directory to be relative to
    ctx = tool_context()
    target = pin(inside, ctx)
    assert inside.shown_path(ctx.session.cwd) == "a.py"
    assert target.display == f"{workspace}/a.py"
    assert pin(inside, ctx) is target  # one resolution per call
    sibling = FileInput(file_path=f"{workspace}-other/a.py")
    assert sibling.shown_path(ctx.session.cwd) == sibling.file_path


def test_not_regular_names_what_a_path_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    assert not_regular((tmp_path / "p").stat().st_mode) == "a FIFO (named pipe)"
    assert not_regular(tmp_path.stat().st_mode) == "a directory"
    assert not_regular(os.stat("/dev/null").st_mode) == "a character device"
    (tmp_path / "f").write_text("")
    assert not_regular((tmp_path / "f").stat().st_mode) is None


def test_open_regular_refuses_a_fifo_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    with pytest.raises(Refusal) as caught:
        open_regular(str(tmp_path / "p"))
    assert caught.value.code == Code.NOT_A_FILE


def test_open_regular_refuses_a_final_link(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "l").symlink_to(tmp_path / "f")
    with pytest.raises(OSError) as caught:
        open_regular(str(tmp_path / "l"))
    assert caught.value.errno == errno.ELOOP


def test_open_dir_creates_only_what_its_judge_allows(tmp_path: Path) -> None:
    seen: list[str] = []

    def judge(path: str) -> str | None:
        seen.append(path)
        return "no deeper" if path.endswith("/c") else None

    with pytest.raises(Refusal, match="no deeper"):
        open_dir(str(tmp_path / "a" / "b" / "c" / "d"), judge)
    assert seen == [str(tmp_path / "a"), str(tmp_path / "a/b"), str(tmp_path / "a/b/c")]
    assert (tmp_path / "a" / "b").is_dir() and not (tmp_path / "a" / "b" / "c").exists()


def test_an_os_error_is_named_by_errno_and_path_only() -> None:
    message = os_error(PermissionError(errno.EACCES, "Permission denied", "/x"), "/x")
    assert message == "/x: EACCES (Permission denied)"
