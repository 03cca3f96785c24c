"""Read against real files in a real workspace under the real sandbox
policy: what it shows, what it refuses at once, what it records."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kit import GIF, png
from pydantic import ValidationError

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision, PermissionResult, Validation
from gateway.messages import ImageBlock, TextBlock, ToolResultMessage
from gateway.tools.filetext import Code
from gateway.tools.read import READ, ReadInput

Ctx = Callable[[], ToolContext]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"


def validate(ctx: ToolContext, data: ReadInput) -> Validation:
    return asyncio.run(READ.validate_input(data, ctx))



def assert_denied_by_policy(ctx: ToolContext, data: Any) -> None:
    """A path the policy refuses passes validation untouched (not even a
    stat) and is denied by the permission stage, with the policy's reason."""
    assert validate(ctx, data).ok
    verdict = asyncio.run(READ.check_permissions(data, ctx))
    assert verdict.decision is Decision.DENY, verdict

def permission(ctx: ToolContext, data: ReadInput) -> PermissionResult:
    return asyncio.run(READ.check_permissions(data, ctx))


def call(ctx: ToolContext, data: ReadInput) -> ToolResultMessage:
    return READ.map_result(asyncio.run(READ.call(data, ctx, lambda _: None)), ctx.tool_use_id)


def read(tool_context: Ctx, path: Path | str, **kw: int) -> ToolResultMessage:
    """A Read as the pipeline runs it: validation, permission, call."""
    ctx, data = tool_context(), ReadInput(file_path=str(path), **kw)
    assert validate(ctx, data).ok
    assert permission(ctx, data).decision is Decision.ALLOW
    return call(ctx, data)


# -- what it shows ---------------------------------------------------------

def test_read_numbers_lines_like_cat_n(workspace: Path, tool_context: Ctx) -> None:
    (workspace / "a.py").write_text("x = 1\n\nprint(x)\n")
    result = read(tool_context, workspace / "a.py")
    assert not result.is_error
    assert result.text == "     1\tx = 1\n     2\t\n     3\tprint(x)"


def test_read_shows_from_offset_for_limit_lines(workspace: Path, tool_context: Ctx) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text = read(tool_context, workspace / "n.txt", offset=4, limit=3).text
    assert text.startswith("     4\tline 4\n     5\tline 5\n     6\tline 6\n\n"
                           "[Showing lines 4-6 of 10")
    assert "offset=7" in text


def test_read_stops_at_2000_lines_and_says_how_to_read_on(workspace: Path,
                                                           tool_context: Ctx) -> None:
    (workspace / "long.txt").write_text("x\n" * 2500)
    text = read(tool_context, workspace / "long.txt").text
    assert "  2000\tx" in text and "  2001\t" not in text
    assert "lines 1-2000 of 2500" in text and "offset=2001" in text


def test_read_cuts_a_line_over_2000_characters_with_a_marker(workspace: Path,
                                                              tool_context: Ctx) -> None:
    (workspace / "min.js").write_text("a" * 5000 + "\nshort\n")
    text = read(tool_context, workspace / "min.js").text
    first = text.splitlines()[0]
    assert first.startswith("     1\t" + "a" * 2000 + "… [line cut: 5000 characters")
    assert "     2\tshort" in text and "were cut" in text


def test_a_megabyte_line_is_cut_and_counted_whole(workspace: Path, tool_context: Ctx) -> None:
    (workspace / "one.min.js").write_text("x" * 1_000_000 + "\r\nend\r\n")
    text = read(tool_context, workspace / "one.min.js").text
    assert text.startswith("     1\t" + "x" * 2000 + "… [line cut: 1000000 characters")
    assert "end" not in text.split("\n\n")[0]  # the first line used up the 256 KiB
    assert "offset=2" in text


def test_read_returns_at_most_256_kib_of_the_file(workspace: Path, tool_context: Ctx) -> None:
    (workspace / "wide.txt").write_text(("b" * 999 + "\n") * 400)  # 400 KB in 400 lines
    text = read(tool_context, workspace / "wide.txt").text
    shown = sum(1 for line in text.splitlines() if line.endswith("b"))
    assert shown == 262  # 262 KB: the 263rd line would pass 256 KiB
    assert "256 KiB" in text and "offset=263" in text


@pytest.mark.parametrize(("content", "expected"), [
    (b"", "exists but is empty"),
    (b"\xef\xbb\xbf", "exists but is empty"),  # a UTF-8 byte-order mark alone
    (b"one\ntwo\n", "shorter than the offset given (5): it has 2 lines"),
])
def test_read_of_nothing_to_show_says_why(workspace: Path, tool_context: Ctx, content: bytes,
                                          expected: str) -> None:
    (workspace / "f.txt").write_bytes(content)
    result = read(tool_context, workspace / "f.txt", offset=5 if content else 1)
    assert expected in result.text and not result.is_error


@pytest.mark.parametrize(("raw", "lines"), [
    (b"one\r\ntwo\r\n", ["     1\tone", "     2\ttwo"]),
    ("h\xe9llo\nw\xf6rld".encode("utf-16"), ["     1\th\xe9llo", "     2\tw\xf6rld"]),
    (b"\xef\xbb\xbfbom\n", ["     1\tbom"]),
])
def test_read_decodes_line_endings_and_byte_order_marks(workspace: Path, tool_context: Ctx,
                                                        raw: bytes, lines: list[str]) -> None:
    (workspace / "t.txt").write_bytes(raw)
    assert read(tool_context, workspace / "t.txt").text.splitlines() == lines


def encoded(fmt: str, size: tuple[int, int] = (4, 3)) -> bytes:
    """A real image, made by Pillow: Read decodes every image it shows."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, fmt)
    return out.getvalue()


@pytest.mark.parametrize(("name", "media", "blob"), [
    ("a.png", "image/png", png(3, 2)),
    ("b.jpg", "image/jpeg", encoded("JPEG")),
    ("c.gif", "image/gif", GIF),
    ("d.webp", "image/webp", encoded("WEBP")),
    ("no-extension", "image/png", png()),  # the bytes decide, not the name
])
def test_read_of_an_image_returns_its_exact_bytes(workspace: Path, tool_context: Ctx, name: str,
                                                   media: str, blob: bytes) -> None:
    (workspace / name).write_bytes(blob)
    result = read(tool_context, workspace / name)
    assert result.content == (ImageBlock(media, blob),) and not result.is_error


@pytest.mark.parametrize("blob", [PNG + b"rest", b"\xff\xd8\xff then text\n", png()[:-5],
                                  b"GIF89a" + b"x" * 20])
def test_read_refuses_what_starts_like_an_image_but_is_not_a_whole_one(
        workspace: Path, tool_context: Ctx, blob: bytes) -> None:
    (workspace / "fake.png").write_bytes(blob)
    result = read(tool_context, workspace / "fake.png")
    assert result.is_error and "not a whole one" in result.text
    assert not any(isinstance(b, ImageBlock) for b in result.content)


def test_read_refuses_an_image_file_over_32_mib(workspace: Path, tool_context: Ctx) -> None:
    (workspace / "big.png").write_bytes(PNG + b"\0" * (32 * 1024 * 1024))
    result = read(tool_context, workspace / "big.png")
    assert result.is_error and "32 MiB" in result.text
    assert not any(isinstance(b, ImageBlock) for b in result.content)


@pytest.mark.parametrize("blob", [b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00"
                                  b"\x01\x00\x00\xff\xd9",  # start and end markers, no frame
                                  b"RIFF" + (12).to_bytes(4, "little") + b"WEBPVP8 \0\0\0\0"])
def test_read_refuses_an_image_whose_markers_are_right_but_which_cannot_be_decoded(
        workspace: Path, tool_context: Ctx, blob: bytes) -> None:
    (workspace / "hollow.img").write_bytes(blob)
    result = read(tool_context, workspace / "hollow.img")
    assert result.is_error and "cannot be decoded" in result.text
    assert not any(isinstance(b, ImageBlock) for b in result.content)


@pytest.mark.parametrize("blob", [b"ELF\x00\x01\x02", b"caf\xe9 latin-1 \xff\xfe\xfd"])
def test_read_refuses_a_binary_file_with_its_size(workspace: Path, tool_context: Ctx,
                                                  session: SessionContext, blob: bytes) -> None:
    (workspace / "prog").write_bytes(blob)
    result = read(tool_context, workspace / "prog")
    assert result.is_error and "binary" in result.text and f"{len(blob)} bytes" in result.text
    assert session.last_read(str(workspace / "prog")) is None


# -- what it records, and the unchanged stub -------------------------------

def test_every_read_records_the_whole_files_hash(workspace: Path, tool_context: Ctx,
                                                  session: SessionContext) -> None:
    path = workspace / "r.txt"
    path.write_text("a\nb\nc\n")
    read(tool_context, path, offset=2, limit=1)
    record = session.last_read(str(path))
    assert record is not None
    assert record.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (record.size, record.mtime_ns) == (6, path.stat().st_mtime_ns)
    assert (record.offset, record.limit, record.complete) == (2, 1, False)
    read(tool_context, path)
    assert session.last_read(str(path)).complete  # type: ignore[union-attr]


def test_a_repeated_read_of_an_unchanged_file_returns_a_stub(workspace: Path,
                                                              tool_context: Ctx) -> None:
    path = workspace / "s.txt"
    path.write_text("secret sauce\n")
    assert "secret sauce" in read(tool_context, path).text
    again = read(tool_context, path)
    assert again.text.startswith("File unchanged since your last read")
    assert "secret sauce" not in again.text
    assert "secret sauce" in read(tool_context, path, offset=1, limit=5).text  # other lines


def test_a_changed_file_is_read_again_in_full(workspace: Path, tool_context: Ctx) -> None:
    path = workspace / "s.txt"
    path.write_text("before\n")
    read(tool_context, path)
    path.write_text("after, longer\n")
    assert read(tool_context, path).text == "     1\tafter, longer"


# -- what it refuses, at once ----------------------------------------------

def test_read_refuses_a_relative_path(tool_context: Ctx) -> None:
    result = validate(tool_context(), ReadInput(file_path="README.md"))
    assert (result.ok, result.code) == (False, Code.RELATIVE)


@pytest.mark.parametrize("bad", [{"offset": 0}, {"limit": 0}, {"bogus": 1}])
def test_read_input_refuses_a_zero_offset_or_limit_and_unknown_keys(bad: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        ReadInput.model_validate({"file_path": "/x", **bad})


def test_read_refuses_a_directory_and_points_to_ls_or_glob(workspace: Path,
                                                           tool_context: Ctx) -> None:
    result = validate(tool_context(), ReadInput(file_path=str(workspace)))
    assert result.code == Code.NOT_A_FILE
    assert "directory" in result.message and "ls" in result.message and "Glob" in result.message
    assert call(tool_context(), ReadInput(file_path=str(workspace))).is_error


def test_read_of_a_fifo_is_refused_without_opening_it(workspace: Path, tool_context: Ctx) -> None:
    fifo = workspace / "pipe"
    os.mkfifo(fifo)  # no writer: an open for reading would wait forever
    data = ReadInput(file_path=str(fifo))
    result = validate(tool_context(), data)
    assert result.code == Code.NOT_A_FILE and "FIFO" in result.message
    assert call(tool_context(), data).is_error  # the call alone does not hang either


def test_read_of_a_socket_is_refused(workspace: Path, tool_context: Ctx,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)  # a socket's path must be short
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("s")
        result = validate(tool_context(), ReadInput(file_path=str(workspace / "s")))
    assert result.code == Code.NOT_A_FILE and "socket" in result.message


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/1/cmdline",
                                  "/sys/kernel/mm", "/dev/zero", "/dev/stdin"])
def test_process_and_device_views_are_refused_by_policy(tool_context: Ctx, path: str) -> None:
    data = ReadInput(file_path=path)
    assert_denied_by_policy(tool_context(), data)
    assert permission(tool_context(), data).decision is Decision.DENY
    assert call(tool_context(), data).is_error


def test_a_link_in_the_workspace_to_a_device_is_refused(workspace: Path,
                                                        tool_context: Ctx) -> None:
    (workspace / "zeros").symlink_to("/dev/zero")
    data = ReadInput(file_path=str(workspace / "zeros"))
    assert_denied_by_policy(tool_context(), data)
    assert call(tool_context(), data).is_error


def test_a_missing_file_is_named_with_a_sibling_of_the_same_stem(workspace: Path,
                                                                  tool_context: Ctx) -> None:
    (workspace / "app.ts").write_text("x\n")
    result = validate(tool_context(), ReadInput(file_path=str(workspace / "app.js")))
    assert result.code == Code.MISSING
    assert str(workspace / "app.js") in result.message
    assert f"Did you mean {workspace / 'app.ts'}?" in result.message
    plain = validate(tool_context(), ReadInput(file_path=str(workspace / "nothing.txt")))
    assert "Did you mean" not in plain.message


def test_an_os_error_is_named_by_its_errno(workspace: Path, tool_context: Ctx) -> None:
    data = ReadInput(file_path=str(workspace / "README.md" / "x"))  # a file as a directory
    result = validate(tool_context(), data)
    assert result.code == Code.OS_ERROR and "ENOTDIR" in result.message
    assert "ENOTDIR" in call(tool_context(), data).text


def test_a_file_the_os_will_not_open_is_an_error_naming_errno(workspace: Path,
                                                               tool_context: Ctx) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = workspace / "locked.txt"
    path.write_text("top secret\n")
    path.chmod(0)
    result = call(tool_context(), ReadInput(file_path=str(path)))
    assert result.is_error and "EACCES" in result.text and "top secret" not in result.text


# -- permissions -------------------------------------------------------------

SECRET = "API_KEY=sk-do-not-show"


@pytest.mark.parametrize("name", [".env", "via-link"])
def test_a_dotenv_file_asks_and_is_not_read_without_a_person(workspace: Path,
                                                             tool_context: Ctx,
                                                             name: str) -> None:
    (workspace / ".env").write_text(SECRET + "\n")
    if name == "via-link":
        (workspace / name).symlink_to(workspace / ".env")
    data = ReadInput(file_path=str(workspace / name))
    result = validate(tool_context(), data)
    assert result.ask and "dotenv" in result.message
    assert permission(tool_context(), data).decision is Decision.ASK
    unasked = call(tool_context(), data)  # no permission stage put it to anyone
    assert unasked.is_error and SECRET not in unasked.text


def test_a_dotenv_file_is_read_once_its_permission_stage_has_run(workspace: Path,
                                                                 tool_context: Ctx) -> None:
    (workspace / ".env").write_text(SECRET + "\n")
    ctx, data = tool_context(), ReadInput(file_path=str(workspace / ".env"))
    assert validate(ctx, data).ask and permission(ctx, data).decision is Decision.ASK
    assert SECRET in call(ctx, data).text  # the pipeline calls only once a person allowed


def test_a_file_outside_the_working_dirs_asks(tool_context: Ctx) -> None:
    result = permission(tool_context(), ReadInput(file_path="/usr/share/doc/x.txt"))
    assert (result.decision, result.source) == (Decision.ASK, "tool")


def test_a_file_in_the_sessions_results_dir_is_allowed(session: SessionContext,
                                                       tool_context: Ctx) -> None:
    saved = Path(session.results_dir) / "toolu_1.txt"
    saved.write_text("persisted output\n")
    assert "persisted output" in read(tool_context, saved).text


@pytest.mark.parametrize("escape", ["{ws}/../home/secret.txt", "{ws}/sub/../../home/secret.txt",
                                    "{ws}/out"])
def test_dot_dot_and_links_out_of_the_workspace_are_resolved_and_refused(
        workspace: Path, tmp_path: Path, tool_context: Ctx, escape: str) -> None:
    (tmp_path / "home" / "secret.txt").write_text("hunter2\n")
    (workspace / "out").symlink_to(tmp_path / "home" / "secret.txt")
    data = ReadInput(file_path=escape.format(ws=workspace))
    assert_denied_by_policy(tool_context(), data)
    assert permission(tool_context(), data).decision is Decision.DENY
    result = call(tool_context(), data)
    assert result.is_error and "hunter2" not in result.text


def test_a_link_swapped_after_the_check_is_not_followed(workspace: Path, tmp_path: Path,
                                                        tool_context: Ctx) -> None:
    (workspace / "notes.txt").write_text("harmless\n")
    (workspace / ".env").write_text(SECRET + "\n")
    (workspace / "notes").symlink_to(workspace / "notes.txt")
    ctx, data = tool_context(), ReadInput(file_path=str(workspace / "notes"))
    assert validate(ctx, data).ok and permission(ctx, data).decision is Decision.ALLOW
    (workspace / "notes").unlink()
    (workspace / "notes").symlink_to(workspace / ".env")
    result = call(ctx, data)
    assert result.is_error and "now leads to" in result.text and SECRET not in result.text


# -- the declarations ------------------------------------------------------

def test_read_declares_itself_a_concurrent_cancellable_reader(session: SessionContext,
                                                              tool_context: Ctx) -> None:
    ctx, data = tool_context(), ReadInput(file_path=f"{session.cwd}/a.py")
    assert READ.is_read_only(data, ctx) and READ.is_concurrency_safe(data, ctx)
    assert READ.is_search_or_read(data, ctx).is_read
    assert READ.interrupt_behavior() == "cancel"
    assert READ.max_result_size_chars >= 10**9
    subject = READ.permission_matcher(data, ctx)
    assert (subject.kind, subject.values, subject.access) == ("path", (data.file_path,), "read")


def test_read_is_shown_by_paths_relative_to_the_working_directory(
        session: SessionContext, tool_context: Ctx) -> None:
    calls = [ReadInput(file_path=f"{session.cwd}/{name}") for name in ("a.py", "b.py", "c.py")]
    cwd = session.cwd
    assert READ.summary(calls[0], cwd) == "a.py"
    assert READ.activity_description(calls[1], cwd) == "Reading b.py"
    failed = ToolResultMessage("t", (TextBlock("no"),), is_error=True)
    group = READ.render_group([(calls[0], None), (calls[1], failed), (calls[2], None)], cwd)
    assert group == "Read 3 files: a.py, b.py ✗, c.py"
    assert READ.summary(ReadInput(file_path="/etc/hosts"), cwd) == "/etc/hosts"


def test_the_prompt_states_the_rules_the_model_must_follow() -> None:
    prompt = READ.prompt()
    for rule in ("absolute", "offset", "limit", "2000", "cat -n", "Glob", "unchanged"):
        assert rule in prompt


def test_a_huge_sparse_file_is_read_quickly_within_its_first_part(
        workspace: Path, tool_context: Ctx) -> None:
    log = workspace / "log.txt"
    log.write_text("".join(f"line {i}\n" for i in range(3000)))
    os.truncate(log, 1 << 40)  # a terabyte, nearly all hole
    started = time.monotonic()
    result = read(tool_context, log, limit=5)
    assert time.monotonic() - started < 10  # the whole file would take hours
    assert "line 4" in result.text and "Only the first 64 MiB" in result.text


@pytest.mark.parametrize("path", ["/run/secrets/db_password", "/var/run/secrets/token",
                                  "/run/user/1000/secret"])
def test_what_sandboxed_commands_see_empty_is_denied_by_policy(tool_context: Ctx,
                                                               path: str) -> None:
    verdict = permission(tool_context(), ReadInput(file_path=path))
    assert verdict.decision is Decision.DENY and "see empty" in verdict.reason


@pytest.mark.parametrize("name", [".ENV", ".Env.local", ".ENVRC"])
def test_a_dotenv_name_in_any_case_needs_a_person(workspace: Path, tool_context: Ctx,
                                                  name: str) -> None:
    (workspace / name).write_text("KEY=CANARY\n")
    assert validate(tool_context(), ReadInput(file_path=str(workspace / name))).ask


_READ_IN_NAMESPACE = """
import asyncio, sys
from gateway.session import make_context
from gateway.context import ToolContext
from gateway.tools.read import READ, ReadInput
ctx = ToolContext(make_context(sys.argv[1], home=sys.argv[2], results_dir=sys.argv[3]), "t")
data = ReadInput(file_path=sys.argv[1] + "/" + sys.argv[4] + "/self/status")
print(asyncio.run(READ.check_permissions(data, ctx)).decision.name)
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="mounting a procfs needs root and unshare")
@pytest.mark.parametrize("name", ["hostproc", "pr\u00f8c", "host proc"])
def test_a_procfs_mounted_elsewhere_is_refused_as_a_process_view(
        workspace: Path, tmp_path: Path, name: str) -> None:
    (workspace / name).mkdir()
    script = (f"mount -t proc proc {shlex.quote(str(workspace / name))} && exec "
              f"{sys.executable} -c {shlex.quote(_READ_IN_NAMESPACE)} {workspace} "
              f"{tmp_path / 'home'} {tmp_path} {shlex.quote(name)}")
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "DENY", done.stderr[-2000:]


@pytest.mark.parametrize("token", [True, False])
def test_a_git_config_holding_a_credential_asks_and_one_without_is_read(
        workspace: Path, tool_context: Ctx, token: bool) -> None:
    """From a review: a CI checkout leaves `http.<url>.extraheader` with a
    token in .git/config; Read printed it unasked."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    if token:
        subprocess.run(["git", "-C", str(workspace), "config",
                        "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0"],
                       check=True)
    data = ReadInput(file_path=str(workspace / ".git" / "config"))
    decision = permission(tool_context(), data).decision
    assert decision is (Decision.ASK if token else Decision.ALLOW)


def test_a_file_git_includes_under_a_name_of_its_own_asks_when_it_holds_a_credential(
        workspace: Path, tool_context: Ctx) -> None:
    """From a review: `.git/config` includes `conf/creds.inc` of the work
    tree; Read of that file printed the proxy password it holds unasked.
    Its neighbour, configuration without a credential, is still read."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "conf").mkdir()
    (workspace / "conf" / "creds.inc").write_text("[http]\n\tproxy = http://u:pw@p:1\n")
    (workspace / "conf" / "notes.txt").write_text("[http]\n\tproxy = http://p:1\n")
    subprocess.run(["git", "-C", str(workspace), "config", "include.path", "../conf/creds.inc"],
                   check=True)
    held = permission(tool_context(), ReadInput(file_path=str(workspace / "conf" / "creds.inc")))
    assert held.decision is Decision.ASK, held.reason
    assert "credential" in held.reason
    other = permission(tool_context(), ReadInput(file_path=str(workspace / "conf" / "notes.txt")))
    assert other.decision is Decision.ALLOW, other.reason


def test_a_hard_link_to_a_credential_file_included_elsewhere_asks(
        workspace: Path, tool_context: Ctx, tmp_path: Path) -> None:
    """From a review: a file in the project hard-linked to a file another
    repository includes (`[http] extraheader`): no configuration the
    project's git reads names it, and Read printed the token. The file is
    judged by its content, as git would read it."""
    elsewhere = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    (elsewhere / "creds.inc").write_text("[http]\n\textraheader = AUTHORIZATION: bearer t0k\n")
    subprocess.run(["git", "-C", str(elsewhere), "config", "include.path", "../creds.inc"],
                   check=True)
    said = subprocess.run(["git", "-C", str(elsewhere), "config", "http.extraheader"],
                          capture_output=True, text=True, check=True).stdout
    assert "t0k" in said, "control: git reads the token from the included file"
    os.link(elsewhere / "creds.inc", workspace / "notes.txt")
    held = permission(tool_context(), ReadInput(file_path=str(workspace / "notes.txt")))
    assert held.decision is Decision.ASK, held.reason
    assert "http.extraheader" in held.reason
