"""The Bash tool through the pipeline, in real bubblewrap: what the analysis
drives, the persistent directory, exit-code meanings, output as bytes,
progress, timeouts and cancellation."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from kit import Answer, FixedHooks, png

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision
from gateway.hooks import HookOutcome
from gateway.messages import ImageBlock, Progress, ToolResultMessage, ToolUse
from gateway.pipeline import Pipeline
from gateway.session import make_context
from gateway.tools.bash import BASH, BashInput
from gateway.tools.bash_output import MarkerFilter, cwd_marker, split_marker

pytestmark = pytest.mark.sandbox


def _bash(session: SessionContext, command: str, **kw: Any) -> ToolResultMessage:
    use = ToolUse("toolu_b", "Bash", {"command": command, **kw})
    return asyncio.run(Pipeline(session, [BASH]).run(use))


def test_a_read_only_command_runs_without_asking(session: SessionContext) -> None:
    session.approver = approver = Answer(False)
    result = _bash(session, "cat README.md && ls")
    assert not result.is_error and "hello" in result.text and "README.md" in result.text
    assert not approver.asked


def test_a_writing_command_is_asked_about_and_runs_once_approved(
        session: SessionContext, workspace: Path) -> None:
    denied = _bash(session, "touch made")
    assert denied.is_error and not (workspace / "made").exists()
    session.approver = approver = Answer(True)
    done = _bash(session, "touch made")
    assert not done.is_error and (workspace / "made").exists()
    assert approver.asked[0].permission.source == "analyzer"


def test_the_sandbox_holds_even_for_an_approved_command(
        session: SessionContext, tmp_path: Path) -> None:
    session.approver = Answer(True)
    outside = tmp_path / "home" / "planted"
    result = _bash(session, f"echo x > {outside}")
    assert result.is_error and not outside.exists()


def test_disabling_the_sandbox_is_always_asked_even_for_a_reader(
        session: SessionContext) -> None:
    session.approver = approver = Answer(False)
    result = _bash(session, "ls", dangerouslyDisableSandbox=True)
    assert result.is_error and "WITHOUT the sandbox" in result.text
    assert len(approver.asked) == 1


def test_disabling_the_sandbox_cannot_lift_the_analyzers_denial_nor_skip_the_person(
        session: SessionContext, tmp_path: Path) -> None:
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir()
    key.write_text("CANARY-KEY")
    session.approver = approver = Answer(True)
    hooks = FixedHooks(HookOutcome(Decision.ALLOW, "a hook that allows cat"))
    use = ToolUse("t", "Bash", {"command": f"cat {key}", "dangerouslyDisableSandbox": True})
    result = asyncio.run(Pipeline(session, [BASH], hooks=hooks).run(use))
    assert result.is_error and "CANARY-KEY" not in result.text and not approver.asked
    use = ToolUse("t", "Bash", {"command": "ls", "dangerouslyDisableSandbox": True})
    result = asyncio.run(Pipeline(session, [BASH], hooks=hooks).run(use))
    assert not result.is_error and len(approver.asked) == 1  # the hook did not spare the ask
    assert "WITHOUT the sandbox" in approver.asked[0].permission.reason


def test_a_directory_name_with_a_newline_cannot_move_the_session(
        session: SessionContext, workspace: Path) -> None:
    (workspace / "sub" / "..\nx").mkdir(parents=True)
    session.approver = Answer(True)  # the cd runs, whatever the analysis says
    _bash(session, "cd sub")
    _bash(session, "cd $'..\\nx'")
    assert session.cwd == str(workspace / "sub")


def test_the_working_directory_persists_across_calls_inside_the_workspace(
        session: SessionContext, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    _bash(session, "cd sub")
    assert session.cwd == str(workspace / "sub")
    assert _bash(session, "pwd").text.strip() == str(workspace / "sub")
    assert session.workspace == str(workspace)  # the workspace does not shrink
    session.approver = Answer(True)
    assert not _bash(session, "touch ../still-writable").is_error
    assert (workspace / "still-writable").exists()


def test_a_cd_outside_the_allowed_directories_does_not_persist(
        session: SessionContext, workspace: Path) -> None:
    session.approver = Answer(True)
    result = _bash(session, "cd /usr")
    assert session.cwd == str(workspace)
    assert "stays" in result.text and "outside the allowed directories" in result.text


def test_a_removed_working_directory_sends_the_session_back_to_the_workspace(
        session: SessionContext, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    _bash(session, "cd sub")
    (workspace / "sub").rmdir()
    result = _bash(session, "pwd")
    assert not result.is_error and result.text.startswith(str(workspace))
    assert "no longer exists" in result.text and session.cwd == str(workspace)


def test_environment_changes_do_not_persist(session: SessionContext) -> None:
    session.approver = Answer(True)
    _bash(session, "export SHELLGATE_PROBE=1; f() { :; }")
    assert _bash(session, "echo \"[${SHELLGATE_PROBE:-unset}]\"").text == "[unset]"


@pytest.mark.parametrize(("command", "is_error", "says"), [
    ("grep nomatch README.md", False, "no matches found"),
    ("ls no-such-file", True, "Exit code 2"),
    ("diff README.md README.md", False, ""),
])
def test_exit_codes_go_through_the_analyzers_semantics(
        session: SessionContext, command: str, is_error: bool, says: str) -> None:
    result = _bash(session, command)
    assert result.is_error is is_error
    assert says in result.text


def test_a_command_that_prints_an_image_gives_the_image_byte_for_byte(
        session: SessionContext, workspace: Path) -> None:
    plot = png(40, 30)
    (workspace / "plot.png").write_bytes(plot)
    result = _bash(session, "cat plot.png")
    images = [b for b in result.content if isinstance(b, ImageBlock)]
    assert images and images[0].data == plot and images[0].media_type == "image/png"


@pytest.mark.parametrize("command", [
    "printf '\\377\\330\\377'; echo 'plain text after a JPEG magic'",
    "printf '\\211PNG\\r\\n\\032\\n'; echo 'text after a PNG magic'",
])
def test_output_that_only_starts_like_an_image_stays_text(
        session: SessionContext, command: str) -> None:
    result = _bash(session, command)
    assert not any(isinstance(b, ImageBlock) for b in result.content)
    assert "after a" in result.text


def test_binary_output_is_kept_as_bytes_never_decoded_into_the_text(
        session: SessionContext, workspace: Path) -> None:
    blob = bytes(range(256)) * 200  # 51,200 bytes with NULs
    (workspace / "data.bin").write_bytes(blob)
    result = _bash(session, "cat data.bin")
    assert "saved to: " in result.text
    saved = result.text.split("saved to: ", 1)[1].split("<", 1)[0].strip()
    assert Path(saved).read_bytes() == blob


def test_the_directory_marker_never_reaches_the_output(session: SessionContext) -> None:
    result = _bash(session, "echo out; echo err >&2")
    assert result.text == "out\nerr"
    assert "shellgate-cwd" not in result.text


def test_output_streams_as_progress_while_the_command_runs(session: SessionContext) -> None:
    seen: list[tuple[float, Progress]] = []
    use = ToolUse("toolu_p", "Bash", {"command": "echo first; sleep 0.5; echo second"})

    async def go() -> float:
        await Pipeline(session, [BASH]).run(use, lambda p: seen.append((time.monotonic(), p)))
        return time.monotonic()

    ended = asyncio.run(go())
    first = next(t for t, p in seen if "first" in p.text)
    assert ended - first > 0.4  # "first" arrived before the command ended
    assert all(p.tool_use_id == "toolu_p" and "shellgate-cwd" not in p.text for _, p in seen)


def test_a_timeout_kills_the_command_and_is_an_error(session: SessionContext) -> None:
    started = time.monotonic()
    result = _bash(session, "sleep 30", timeout=500)
    assert result.is_error and "timed out" in result.text
    assert time.monotonic() - started < 10


def test_a_timeout_above_ten_minutes_is_invalid_input(session: SessionContext) -> None:
    result = _bash(session, "true", timeout=600_001)
    assert result.is_error and "<tool_use_error>" in result.text


def test_cancelling_a_call_stops_its_process_tree(
        session: SessionContext, workspace: Path) -> None:
    session.approver = Answer(True)
    use = ToolUse("toolu_c", "Bash", {"command": "sleep 0.3; touch late; sleep 30"})

    async def go() -> ToolResultMessage:
        task = asyncio.ensure_future(Pipeline(session, [BASH]).run(use))
        await asyncio.sleep(0.15)
        task.cancel()
        return await task

    result = asyncio.run(go())
    assert result.is_error and "Interrupted" in result.text
    time.sleep(0.5)
    assert not (workspace / "late").exists()  # the tree did not go on


def _reported(session: SessionContext) -> list[str]:
    return [line for e in session.audit.events  # type: ignore[attr-defined]
            if e["event"] == "sandbox.reported" for line in e["lines"]]


def test_a_timed_out_command_still_reports_what_it_changed(
        session: SessionContext, workspace: Path) -> None:
    """The command decides whether it times out: its report may not depend
    on that (the result and the audit log both carry it)."""
    (workspace / "CLAUDE.md").write_text("mine\n")
    session.approver = Answer(True)
    result = _bash(session, "echo obey >> CLAUDE.md; sleep 30", timeout=1500)
    assert "obey" in (workspace / "CLAUDE.md").read_text()  # the control: it ran
    wanted = f"{workspace / 'CLAUDE.md'} was changed during the run: review it"
    assert result.is_error and "timed out" in result.text
    assert f"shellgate: {wanted}" in result.text, result.text
    assert wanted in _reported(session)


def test_a_cancelled_call_still_audits_what_its_command_changed(
        session: SessionContext, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("mine\n")
    session.approver = Answer(True)
    use = ToolUse("toolu_r", "Bash", {"command": "echo obey >> CLAUDE.md; sleep 30"})

    async def go() -> ToolResultMessage:
        task = asyncio.ensure_future(Pipeline(session, [BASH]).run(use))
        while "obey" not in (workspace / "CLAUDE.md").read_text():
            await asyncio.sleep(0.05)
        task.cancel()
        return await task

    result = asyncio.run(go())
    assert result.is_error and "Interrupted" in result.text
    assert f"{workspace / 'CLAUDE.md'} was changed during the run: review it" in _reported(
        session)


def test_what_the_analysis_says_drives_the_declarations(session: SessionContext) -> None:
    ctx = ToolContext(session, "t")
    reader, writer, mover = (BashInput(command=c) for c in ("git status", "rm -rf build", "cd ."))
    assert BASH.is_read_only(reader, ctx) and BASH.is_concurrency_safe(reader, ctx)
    ctx = ToolContext(session, "t")
    assert not BASH.is_read_only(writer, ctx) and BASH.is_destructive(writer, ctx)
    ctx = ToolContext(session, "t")
    assert BASH.is_read_only(mover, ctx) and not BASH.is_concurrency_safe(mover, ctx)
    ctx = ToolContext(session, "t")
    subject = BASH.permission_matcher(BashInput(command="git log | head -3"), ctx)
    assert subject.kind == "command" and subject.values == ("git log", "head -3")


@pytest.mark.parametrize("chunks", [
    [b"abc\n", b"\n\x1fshellgate-cwd-00:/x\n"],
    [b"abc\n\n", b"\x1fshellgate-cwd-00:/x\n"],
    [b"abc\n\n\x1fshell", b"gate-cwd-00:/x\n"],
    [b"ab", b"c\n\n\x1fshellgate-cwd-00:/x\n"],
])
def test_the_marker_is_held_back_however_the_chunks_fall(chunks: list[bytes]) -> None:
    marker = cwd_marker("00")
    held = MarkerFilter(marker)
    assert b"".join(held.feed(c) for c in chunks) == b"abc\n"
    assert split_marker(b"".join(chunks), marker) == (b"abc\n", "/x")


def test_the_results_dir_is_hidden_from_sandboxed_commands(workspace: Path) -> None:
    session = make_context(str(workspace), approver=Answer(True))  # the real results dir
    secret = Path(session.results_dir) / "probe.txt"
    secret.write_text("persisted")
    os.chmod(secret, 0o644)
    result = _bash(session, f"cat {secret}")
    assert "persisted" not in result.text
