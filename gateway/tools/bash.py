"""Bash: a command run in the sandbox, judged by the analyzer first.

The analysis drives everything the tool declares — read-only, concurrency,
destructive, the permission answer and its warnings — and the exit-code
semantics (``grep`` exit 1 is "no matches", not an error). Execution always
goes through :mod:`sandbox`; ``dangerouslyDisableSandbox`` is a permission
question of its own (always asked), never a default. The working directory
persists across calls of a session; environment changes do not."""

from __future__ import annotations

import asyncio
import codecs
import os
import secrets
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from analyzers import BashAnalysis, Classification, ParseStatus, Verdict
from values import field, fields, replace, valueclass

from ..context import SessionContext, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid, needs_person
from ..messages import (
    BlobBlock,
    Block,
    Progress,
    ProgressCallback,
    TextBlock,
    ToolResult,
    ToolResultMessage,
)
from ..pathnames import inside
from ..workspace import analyze_in_workspace, analyze_light, analyze_with_facts, needs_facts
from .base import BaseTool, SearchOrRead, Subject, build_tool
from .bash_output import (
    MarkerFilter,
    audit_report,
    cwd_marker,
    cwd_trap,
    is_binary,
    split_marker,
    stdout_image,
    whole_image,
)
from .command_patterns import command_matches
from .images import Fitted

if TYPE_CHECKING:
    from sandbox import BackgroundProcess, ExecResult

DEFAULT_TIMEOUT_MS = 120_000
#: commands up to this long are analyzed inline (their cost is a fraction
#: of a millisecond); longer ones on a thread
INLINE_ANALYSIS_CHARS = 2_000
MAX_TIMEOUT_MS = 600_000


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(description="The command to execute")
    timeout: int | None = Field(
        default=None, ge=1, le=MAX_TIMEOUT_MS,
        description=f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS}); a command run "
        "in the background has none")
    description: str | None = Field(
        default=None, description="Clear, concise description of what this command does "
        "in 5-10 words")
    run_in_background: bool | None = Field(
        default=None, description="Run the command in the background and return at once with "
        "its task id: TaskOutput reads its output, TaskStop stops it. timeout does not apply: "
        "it runs until it ends, is stopped, or the session closes")
    dangerouslyDisableSandbox: bool | None = Field(
        default=None, description="Run without the sandbox. Always needs a person's approval; "
        "do not set it unless asked to")


@valueclass
class BashOutput:
    """How the command ended, output still in bytes."""

    stdout: bytes
    stderr: str
    exit_code: int | None
    signal: int | None = None
    timed_out: bool = False
    #: the sandbox dropped the middle of the output (over its cap)
    truncated: bool = False
    meaning: str | None = None
    is_error: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: stdout as the image the model is shown (resized when large), when
    #: it is one whole image that can be decoded
    image: Fitted | None = None


#: security check 10 (an output redirection) is not a reason to keep rules
#: away: the redirection's target is checked as an Edit of that file instead
_REDIRECTION_CHECK = 10


async def _with_image(result: ToolResult) -> ToolResult:
    """A command that printed one whole image shows it as an image, made
    fit for the model (a large plot resized): decoded off the event loop —
    a big image takes a few hundred milliseconds."""
    out = result.data
    if (not isinstance(out, BashOutput) or out.truncated
            or whole_image(out.stdout) is None):
        return result
    fitted = await asyncio.to_thread(stdout_image, out.stdout)
    if fitted is None:
        return result
    return ToolResult(BashOutput(**{**_fields(out), "image": fitted}), result.new_messages,
                      result.context_modifier, result.is_error)


def rules_apply(analysis: BashAnalysis) -> bool:
    """May allow rules lift the analyzer's ask? As the analyzer says — and
    also when the only check that fired is the output redirection one: the
    decider then holds each target to the Edit rules (``Bash(echo:*)`` is
    not ``Edit(~/.bashrc)``)."""
    if analysis.rules_apply:
        return True
    return (analysis.parse is ParseStatus.SIMPLE and not analysis.parse_reasons
            and not analysis.hard_limits and bool(analysis.findings)
            and all(f.id == _REDIRECTION_CHECK for f in analysis.findings)
            and not any(p.sensitive is not None for s in analysis.subcommands for p in s.paths)
            and not any(s.nested for s in analysis.subcommands))


class BashTool(BaseTool[BashInput]):
    name = "Bash"
    input_model = BashInput
    search_hint = "run shell commands"
    max_result_size_chars = 30_000

    def description(self, data: BashInput | None = None) -> str:
        if data is not None and data.description:
            return data.description
        return "Run a bash command in the sandbox"

    def prompt(self) -> str:
        return (
            "Executes a bash command inside a sandbox: the workspace is writable, the rest of "
            "the filesystem read-only, secrets hidden, the network off. The working directory "
            "persists between calls (never outside the workspace); shell variables and "
            "functions do not. Prefer Read, Edit, Write, Glob and Grep over cat, sed, find "
            "and grep. Commands the analyzer proves read-only run without asking; others "
            f"need approval. timeout is in milliseconds (default {DEFAULT_TIMEOUT_MS}, max "
            f"{MAX_TIMEOUT_MS}). Output above 30000 characters is saved to a file and "
            "previewed. run_in_background starts a long command (a server, a watcher) and "
            "returns its task id at once; read it with TaskOutput, stop it with TaskStop.")

    # -- the analysis ------------------------------------------------------
    def analysis(self, data: BashInput, ctx: ToolContext) -> BashAnalysis:
        """The analyzer's view of the command in the session's current
        directory, computed once per call and directory."""
        session = ctx.session
        moved = _cwd_still_there(session)
        if moved:
            ctx.notes.append(moved)
        key = (data.command, session.cwd)
        cached = ctx.analysis
        if isinstance(cached, tuple) and cached[0] == key:
            result: BashAnalysis = cached[1]
            return result
        analysis = analyze_in_workspace(data.command, session.cwd,
                                        extra_dirs=tuple(session.extra_dirs), home=session.home)
        ctx.analysis = (key, analysis)
        return analysis

    async def prepare(self, data: BashInput, ctx: ToolContext) -> None:
        """The analysis, its cheap first pass inline (a thread hop would
        cost more than it: ~0.2 ms); only a walk of the workspace (a tree
        read, a path through a link) goes to a thread."""
        session = ctx.session
        if isinstance(ctx.analysis, tuple) and ctx.analysis[0] == (data.command, session.cwd):
            return
        moved = _cwd_still_there(session)
        if moved:
            ctx.notes.append(moved)
        extra = tuple(session.extra_dirs)
        if len(data.command) > INLINE_ANALYSIS_CHARS:
            # a long command may take the analyzer long (or fail slowly):
            # never on the event loop, where it would stall every other call
            light = await asyncio.to_thread(analyze_light, data.command, session.cwd,
                                            extra_dirs=extra, home=session.home)
        else:
            light = analyze_light(data.command, session.cwd, extra_dirs=extra, home=session.home)
        analysis = light if not needs_facts(light) else await asyncio.to_thread(
            analyze_with_facts, light, extra_dirs=extra, home=session.home)
        ctx.analysis = ((data.command, session.cwd), analysis)

    def is_read_only(self, data: BashInput, ctx: ToolContext) -> bool:
        return self.unsandboxed(data, ctx) is None and self.analysis(data, ctx).allowed

    def unsandboxed(self, data: BashInput, ctx: ToolContext) -> str | None:
        """Why the command would run outside the sandbox (None: it runs
        inside): it asks to, or a subcommand is one of the settings'
        ``sandbox.excludedCommands`` (matched as Bash rules are, on the
        command as written and without its wrappers)."""
        if data.dangerouslyDisableSandbox:
            return "the command asks to run WITHOUT the sandbox (dangerouslyDisableSandbox)"
        settings = ctx.session.sandbox_settings
        excluded = tuple(getattr(settings, "excluded_commands", ()) or ())
        if not excluded:
            return None
        for sub in self.analysis(data, ctx).subcommands:
            views = (sub.text, shlex.join(sub.argv)) if sub.argv else (sub.text,)
            for pattern in excluded:
                if any(command_matches(pattern, v) for v in views):
                    return (f"{sub.text.strip()!r} is in sandbox.excludedCommands ({pattern}): "
                            "the whole command runs WITHOUT the sandbox")
        return None

    def is_concurrency_safe(self, data: BashInput, ctx: ToolContext) -> bool:
        """A reader, and one that leaves the session's directory alone: a
        `cd` changes state the next call depends on, so it runs alone and
        its change holds before anything after it starts. A background
        command's `cd` moves nothing but itself."""
        if data.run_in_background:
            return self.is_read_only(data, ctx)
        return self.is_read_only(data, ctx) and not any(
            s.cd is not None for s in self.analysis(data, ctx).subcommands)

    def is_destructive(self, data: BashInput, ctx: ToolContext) -> bool:
        return self.analysis(data, ctx).is_destructive

    def is_search_or_read(self, data: BashInput, ctx: ToolContext) -> SearchOrRead:
        kind = self.analysis(data, ctx).classification
        return SearchOrRead(kind is Classification.SEARCH, kind is Classification.READ,
                            kind is Classification.LIST)

    def interrupt_behavior(self) -> Literal["cancel", "block"]:
        return "cancel"

    def permission_matcher(self, data: BashInput, ctx: ToolContext) -> Subject:
        analysis = self.analysis(data, ctx)
        return Subject("command", tuple(s.text for s in analysis.subcommands if s.argv)
                       or (data.command,), analysis=analysis)

    def classifier_input(self, data: BashInput) -> str:
        return data.command

    async def validate_input(self, data: BashInput, ctx: ToolContext) -> Validation:
        """Running without the sandbox needs a person, always: no hook,
        rule or mode may allow it (from a review: a hook that allowed
        `cat *` let `cat ~/.ssh/id_rsa` with the sandbox off run unasked)."""
        outside = self.unsandboxed(data, ctx)
        if data.run_in_background:
            from .tasks import background_refusal  # noqa: PLC0415

            refused = background_refusal(ctx.session, outside)
            if refused is not None:
                return invalid(f"run_in_background: {refused}")
        if outside is not None:
            return needs_person(outside)
        return VALID

    async def check_permissions(self, data: BashInput, ctx: ToolContext) -> PermissionResult:
        analysis = self.analysis(data, ctx)
        checks = tuple(dict.fromkeys(f.id for f in analysis.findings))
        common: dict[str, Any] = {
            "check_ids": checks, "hint": analysis.hint, "warnings": analysis.warnings,
            "suggestions": analysis.suggested_rules, "rules_apply": rules_apply(analysis),
            # a dotenv file or another "ask"-level sensitive path: a person's call
            "needs_person": any(p.sensitive is not None
                                for s in analysis.subcommands for p in s.paths)}
        decision = {Verdict.ALLOW: Decision.ALLOW, Verdict.ASK: Decision.ASK,
                    Verdict.DENY: Decision.DENY}[analysis.verdict]
        allow_outside = getattr(ctx.session.sandbox_settings, "allow_unsandboxed_commands", None)
        if data.dangerouslyDisableSandbox and allow_outside is False:
            return PermissionResult(
                Decision.DENY, "settings", "sandbox.allowUnsandboxedCommands is false: no "
                "command runs outside the sandbox", rule="sandbox.allowUnsandboxedCommands",
                check_ids=checks, hint="run it without dangerouslyDisableSandbox")
        if self.unsandboxed(data, ctx) is not None and decision is not Decision.DENY:
            # the analyzer's denial stands first (a hard limit, a secret);
            # otherwise the person is told both what the sandbox flag does
            # and what the analyzer found
            said = ("the analyzer finds it read-only" if decision is Decision.ALLOW
                    else f"the analyzer says: {analysis.reason}")
            # (the validation's ask says "WITHOUT the sandbox"; the decider
            # puts the two together)
            return PermissionResult(
                Decision.ASK, "tool", said,
                **{**common, "hint": "leave dangerouslyDisableSandbox unset to run it sandboxed"})
        if common["rules_apply"] and not analysis.rules_apply:
            common["hint"] = ("approve it, or allow the command with a Bash rule and each "
                              "redirection's target with an Edit rule (or acceptEdits mode)")
        return PermissionResult(decision, "analyzer", analysis.reason, **common)

    # -- running -----------------------------------------------------------
    async def call(self, data: BashInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        from sandbox import RunFailed, SandboxError, start_background  # noqa: PLC0415

        session = ctx.session
        checked = ctx.analysis[0][1] if isinstance(ctx.analysis, tuple) else None
        if checked != session.cwd:
            # the permission decision was about another directory (it was
            # removed meanwhile, or another call moved the session): fail closed
            return ToolResult(f"The working directory changed after the command was checked "
                              f"({checked} -> {session.cwd}); nothing was run. Run it again.",
                              is_error=True)
        nonce = secrets.token_hex(8)
        marker = cwd_marker(nonce)
        # The trap prints where the command ended up, after it, to stderr;
        # set on its own line before the command, so no text of the command
        # can swallow it (an unterminated heredoc makes the whole script a
        # syntax error: nothing runs, and the directory stays). A command
        # that forges the line gains nothing a `cd` would not give it: the
        # directory is checked against the allowed ones all the same.
        script = f"{cwd_trap(nonce)}\n{data.command}"
        streams = _Streams(ctx, on_progress, marker)
        timeout = (data.timeout or DEFAULT_TIMEOUT_MS) / 1000
        unsandboxed = self.unsandboxed(data, ctx)
        backend = "none" if unsandboxed is not None else session.backend
        task, limit = None, timeout
        if data.run_in_background or session.auto_background_ms is not None:
            from .bash_background import new_task  # noqa: PLC0415
            from .tasks import MAX_TASK_LIFETIME_S, background_refusal  # noqa: PLC0415

            if data.run_in_background:
                # checked again at the act, with no await before the task is
                # added: validation alone let 26 calls gathered at once start
                # 26 tasks past the limit of 16 (from a review)
                refused = background_refusal(session, unsandboxed)
                if refused is not None:
                    return ToolResult(f"run_in_background: {refused}", is_error=True)

            task = new_task(ctx, data.command, marker, self.analysis(data, ctx).exit_meaning,
                            unsandboxed, None if data.run_in_background else streams.feed)
            if task is not None:
                # a task's only limit is its lifetime; a foreground budget is
                # kept by follow(), so that a command past it can move, not die
                limit = MAX_TASK_LIFETIME_S
        # the audit log says where it ran before it runs
        session.audit.emit("sandbox.started", session_id=session.session_id,
                           call_id=ctx.call_id, tool_use_id=ctx.tool_use_id,
                           backend=backend or "auto", profile=session.policy.profile)
        process = start_background(
            ["/bin/bash", "-c", script], session.policy, cwd=session.cwd,
            workspace=session.workspace, env=session.command_env(), timeout=limit,
            backend=backend, on_output=streams.feed if task is None else task.feed)
        try:
            if task is None:
                result = await asyncio.to_thread(process.wait)
            else:
                from .bash_background import follow  # noqa: PLC0415

                budget = max((session.auto_background_ms or 0) / 1000, timeout)
                got = await follow(task, process, ctx,
                                   None if data.run_in_background else budget)
                if isinstance(got, ToolResult):
                    return got
                result = got
        except asyncio.CancelledError:
            stopped = await asyncio.shield(asyncio.to_thread(_stop, process))
            if stopped is not None:
                # no result goes back, but what the guards found is not lost
                audit_report(ctx.session, ctx.call_id, ctx.tool_use_id, stopped)
            raise
        except RunFailed as exc:
            # it ran: the guards' reports still go back, with what failed
            result = replace(exc.result, problems=(str(exc), *exc.result.problems))
        except SandboxError as exc:
            return ToolResult(f"The sandbox could not start, so the command did not run: {exc}",
                              is_error=True)
        if result is None:  # pragma: no cover - wait() without a timeout returns a result
            return ToolResult("The command ended without a result", is_error=True)
        audit_report(ctx.session, ctx.call_id, ctx.tool_use_id, result)
        return await _with_image(self._finish(data, ctx, result, marker))

    def _finish(self, data: BashInput, ctx: ToolContext, result: ExecResult,
                marker: bytes) -> ToolResult:
        """The ended command's result: its output, its exit code's meaning
        and the session's new directory."""
        session = ctx.session
        stderr, new_cwd = split_marker(result.stderr, marker)
        analysis = self.analysis(data, ctx)
        code = result.exit_code
        meaning = analysis.exit_meaning(code) if code is not None else None
        from sandbox import report_lines, shown  # noqa: PLC0415 - loaded by the run already

        notes = report_lines(result, ending=False)
        if result.killed_reason:
            notes = (shown(f"killed: {result.killed_reason}"), *notes)
        output = BashOutput(
            stdout=result.stdout, stderr=stderr.decode("utf-8", "replace"), exit_code=code,
            signal=result.signal, timed_out=result.timed_out, truncated=result.truncated,
            meaning=meaning.message if meaning else None,
            is_error=result.timed_out or code is None or (meaning is not None
                                                          and meaning.is_error),
            notes=notes)
        modifier, cwd_note = _cwd_modifier(session, new_cwd)
        extra = tuple(n for n in (*ctx.notes, cwd_note) if n)
        if extra:
            output = BashOutput(**{**_fields(output), "notes": (*output.notes, *extra)})
        return ToolResult(output, context_modifier=modifier, is_error=output.is_error)

    def map_result(self, result: ToolResult, tool_use_id: str) -> ToolResultMessage:
        out = result.data
        if not isinstance(out, BashOutput):
            return super().map_result(result, tool_use_id)
        blocks: list[Block] = []
        if out.image is not None and not out.stderr.strip():
            blocks.append(out.image.block)
            text = out.image.note
        elif is_binary(out.stdout):
            # never decoded into the conversation: kept, and persisted when large
            blocks.append(BlobBlock("application/octet-stream", out.stdout))
            text = ""
        else:
            text = out.stdout.decode("utf-8", "replace").rstrip("\n")
        parts = [text] if text else []
        if out.stderr.strip():
            parts.append(out.stderr.rstrip("\n"))
        if out.timed_out:
            parts.append("Command timed out; its process tree was killed.")
        elif out.signal is not None:
            parts.append(f"Command was killed by signal {out.signal}.")
        elif out.exit_code not in (0, None):
            parts.append(f"Exit code {out.exit_code}"
                         + (f" ({out.meaning})" if out.meaning else ""))
        parts += [f"shellgate: {n}" for n in out.notes]
        if parts or not blocks:
            blocks.insert(0, TextBlock("\n".join(parts) if parts else "(no output)"))
        return ToolResultMessage(tool_use_id, tuple(blocks), out.is_error)

    # -- describing ----------------------------------------------------------
    def summary(self, data: BashInput, cwd: str = "") -> str:
        return data.description or _one_line(data.command, 80)

    def activity_description(self, data: BashInput, cwd: str = "") -> str:
        return f"Running {data.description or _one_line(data.command, 40)}"

    def user_facing_name(self, data: BashInput | None = None) -> str:
        if data is not None and data.dangerouslyDisableSandbox:
            return "Bash (unsandboxed)"
        return "Bash"

    def render_group(self, calls: Sequence[tuple[BashInput, ToolResultMessage | None]],
                     cwd: str = "") -> str:
        lines = []
        for data, res in calls:
            mark = "" if res is None else (" ✗" if res.is_error else " ✓")
            lines.append(f"$ {_one_line(data.command, 100)}{mark}")
        return "\n".join(lines)


class _Streams:
    """Turns the sandbox's output chunks (on its thread) into progress: one
    incremental decoder per stream (a character split between chunks is
    decoded whole), the cwd marker held back from stderr."""

    def __init__(self, ctx: ToolContext, on_progress: ProgressCallback, marker: bytes) -> None:
        self.ctx, self.on_progress = ctx, on_progress
        self.decoders = {s: codecs.getincrementaldecoder("utf-8")("replace")
                         for s in ("stdout", "stderr")}
        self.filter = MarkerFilter(marker)

    def feed(self, stream: str, data: bytes) -> None:
        if stream == "stderr":
            data = self.filter.feed(data)
        text = self.decoders[stream].decode(data)
        if text:
            kind: Literal["stdout", "stderr"] = "stdout" if stream == "stdout" else "stderr"
            self.on_progress(Progress(self.ctx.tool_use_id, "Bash", kind, text))


def _cwd_modifier(session: SessionContext, new_cwd: str | None
                  ) -> tuple[Any, str | None]:
    """The change to the session's directory a command made (``cd sub``),
    if it stays inside the allowed directories; a command that ended
    elsewhere leaves the directory where it was, and says so."""
    def forget(s: SessionContext) -> None:
        s.forget_plan()  # the command may have changed the tree

    if new_cwd is None or new_cwd == session.cwd:
        return forget, None
    real = os.path.realpath(new_cwd)
    if not any(inside(real, d) for d in session.allowed_dirs) or not os.path.isdir(real):
        return forget, (f"the working directory stays {session.cwd}: {new_cwd} is outside the "
                        "allowed directories")

    def move(s: SessionContext) -> None:
        s.cwd = real
        s.forget_plan()

    return move, None


def _cwd_still_there(session: SessionContext) -> str | None:
    """A directory removed since the last call (`rm -rf` of the very
    directory the session was in): the session goes back to the workspace,
    and says so, rather than failing every later call."""
    if os.path.isdir(session.cwd):
        return None
    gone, session.cwd = session.cwd, session.workspace
    return f"the working directory {gone} no longer exists; back in {session.workspace}"


def _stop(process: BackgroundProcess) -> ExecResult | None:
    """Stop a run whose call was cancelled; its result, or None (the run
    itself failed: nothing more can be learnt here)."""
    try:
        return process.stop()
    except Exception as exc:
        from sandbox import RunFailed  # noqa: PLC0415

        return exc.result if isinstance(exc, RunFailed) else None


def _fields(out: BashOutput) -> dict[str, Any]:
    return {f: getattr(out, f) for f in (spec.name for spec in fields(BashOutput))}


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


BASH = build_tool(BashTool())
