"""Grep: ripgrep, run inside the sandbox, read-only.

Unlike Glob, Grep reads file contents, so it does not read them in this
process: ripgrep runs under the session's own sandbox policy with the
workspace made read-only, no writable path and no network. What a hidden
path holds is not there for it to print.

The one thing the sandbox leaves visible that Grep must still never print
is the project's own dotenv files (the sandbox hides only *other*
projects'; the project's tools need their ``.env``). They are excluded by
negative ``--iglob``s, which ripgrep applies after every ``--glob`` the
model's ``glob`` becomes (the last matching glob wins), and a dotenv path
named explicitly is refused, since ripgrep searches an explicit path
whatever the globs say."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from regexes import regex

from ..context import SessionContext, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid
from ..messages import ProgressCallback, ToolResult
from ..pathnames import inside
from . import paths
from .base import ReadOnlyTool, SearchOrRead, Subject, build_tool
from .glob import VCS_DIRS, root_of, search_permission

if TYPE_CHECKING:
    from sandbox import BackgroundProcess, ExecResult, SandboxPolicy

#: a search that takes longer is stopped (its partial output is dropped)
TIMEOUT_S = 60.0
#: how long a cancelled search may take to stop its process tree
STOP_S = 5.0
MAX_COLUMNS = 500
MAX_ERROR_CHARS = 300
#: The dotenv names the sensitive list covers (``.env``, ``.env.*``,
#: direnv's ``.envrc``, ``.envs/`` directories). Case-insensitive: on a
#: case-insensitive filesystem (macOS) `.ENV` is what a dotenv loader opens
#: as `.env`. Templates (`.env.example`) are excluded too: re-including them
#: would take a positive glob, and in ripgrep any positive glob turns the
#: search into "only files matching one" — Read opens a template instead.
DOTENV_GLOBS = (".env", ".env.*", ".envrc", ".envs")
#: ripgrep file types are plain names (`py`, `ts`, `cpp`); anything else is refused
_TYPE_RE = regex(r"[A-Za-z0-9_+.-]{1,40}")

OutputMode = Literal["content", "files_with_matches", "count"]


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(min_length=1, max_length=8192, description=(
        "The regular expression to search for (ripgrep syntax: literal braces need "
        'escaping, `interface\\{\\}` finds `interface{}`)'))
    path: str | None = Field(default=None, description=(
        "File or directory to search (absolute, or relative to the working directory); "
        "the working directory when omitted"))
    glob: str | None = Field(default=None, max_length=1024, description=(
        'Glob to filter files, e.g. "*.js" or "*.{ts,tsx}" (several: separate with spaces)'))
    output_mode: OutputMode = Field(default="files_with_matches", description=(
        '"content": matching lines (context, line numbers, head_limit apply); '
        '"files_with_matches" (default): file paths; "count": matches per file'))
    before: int | None = Field(default=None, alias="-B", ge=0, le=1000, description=(
        "Lines to show before each match (content mode only)"))
    after: int | None = Field(default=None, alias="-A", ge=0, le=1000, description=(
        "Lines to show after each match (content mode only)"))
    context: int | None = Field(default=None, alias="-C", ge=0, le=1000, description=(
        "Lines to show before and after each match (content mode only)"))
    line_numbers: bool | None = Field(default=None, alias="-n", description=(
        "Show line numbers (content mode only; default true)"))
    ignore_case: bool | None = Field(default=None, alias="-i", description=(
        "Case-insensitive search"))
    only_matching: bool | None = Field(default=None, alias="-o", description=(
        "Print only the matched parts of lines (content mode); count matches, not lines"))
    type: str | None = Field(default=None, description=(
        "ripgrep file type to search (js, py, rust, go, java …); more efficient than glob "
        "for standard types"))
    head_limit: int | None = Field(default=None, ge=0, description=(
        "Keep only the first N lines (content), files, or count entries; 0 or omitted: all"))
    offset: int | None = Field(default=None, ge=0, description=(
        "Skip the first N lines / entries before head_limit applies (default 0)"))
    multiline: bool | None = Field(default=None, description=(
        "Let patterns span lines, `.` matching newlines too (rg -U --multiline-dotall)"))


# -- the command -----------------------------------------------------------------------

def build_argv(rg: str, data: GrepInput, target: str, excludes: Sequence[str] = ()) -> list[str]:
    """ripgrep's argv for ``data`` searching ``target`` (a path as shown to
    the model, relative to the working directory or absolute). Every value
    the model gave is attached to its option (``--glob=…``, ``-e PATTERN``)
    and the path comes after ``--``: no input can become an option
    (reproducer: pattern ``--pre=sh`` would otherwise run ``sh`` on every
    file searched)."""
    argv = [rg, "--no-config",  # an RIPGREP_CONFIG_PATH file could add --pre
            "--hidden", "--no-follow", "--color=never", "--no-heading",
            f"--max-columns={MAX_COLUMNS}", *_mode_flags(data)]
    if data.ignore_case:
        argv.append("--ignore-case")
    if data.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    if data.type:
        argv.append(f"--type={data.type}")
    argv += [f"--glob={g}" for g in (data.glob or "").split()]
    # The last matching glob decides, and ripgrep (13) adds every --iglob
    # after every --glob: as --iglob, placed last too, the exclusions win
    # over any glob the model gives. Reproducer with the exclusions as
    # --glob before the model's: `glob: ".env"` printed the project's keys.
    argv += [f"--glob=!{d}" for d in VCS_DIRS]
    argv += [f"--iglob=!{g}" for g in DOTENV_GLOBS]
    # the settings' bare-name Read deny rules (`Read(*.pem)`): left out of
    # every search, as the dotenv files are
    argv += [f"--iglob=!{g}" for g in excludes]
    return [*argv, "-e", data.pattern, "--", target]


def _mode_flags(data: GrepInput) -> list[str]:
    if data.output_mode == "files_with_matches":
        return ["--files-with-matches"]
    if data.output_mode == "count":
        return ["--count-matches" if data.only_matching else "--count", "--with-filename",
                "--sort=path"]
    flags = ["--sort=path",  # a stable order: offset pages through the same list
             "--line-number" if data.line_numbers is not False else "--no-line-number"]
    if data.only_matching:
        flags.append("--only-matching")
    flags += [f"{opt}={n}" for opt, n in (("--context", data.context),
                                           ("--before-context", data.before),
                                           ("--after-context", data.after)) if n is not None]
    return flags


def search_policy(policy: SandboxPolicy) -> SandboxPolicy:
    """The session's policy, made read-only: ripgrep never needs to write,
    nor to reach the network."""
    from sandbox import NetworkPolicy  # noqa: PLC0415

    fs = policy.filesystem.model_copy(update={"workspace": "read", "allow_write": ()})
    return policy.model_copy(update={"filesystem": fs, "network": NetworkPolicy()})


def search_env(session: SessionContext) -> dict[str, str]:
    """The session's environment with ``HOME`` set to the session's home:
    the sandbox hides the secrets of the home named by ``HOME``, and the
    permission check used the session's plan, built for ``session.home``.
    Reproducer: a session with ``home=/tmp/h`` and ``HOME=/root`` in the
    environment, ``Grep SECRET`` from /tmp/h printed ``.ssh/id_rsa``."""
    env = session.command_env()
    env.pop("RIPGREP_CONFIG_PATH", None)  # --no-config already; one guard more
    return env


def credential_files(root: str, cwd: str) -> tuple[list[str], str | None, int]:
    """Exclusions for the files below the directory ``root`` that git's
    configuration there reads and that hold a credential: an included file
    under a name of its own (from a review: `.git/config` including the
    work tree's `creds.inc`, and a search of the project printed its
    token), a `~/.gitconfig` with a proxy password when the search covers
    the home. `.git` itself is never searched. ripgrep anchors a glob at
    its own working directory (``cwd``), not at the path it searches (a
    search of `conf` printed `conf/creds.inc`); below another directory,
    the file's path under the root is matched at any depth. A repository
    nested below the root counts as the root's own does (its included
    files are searched with the rest of the tree), and so does a file an
    include names that git reads only elsewhere (another branch's).

    Directories the workspace walk has not reached yet are left out of the
    search; with the reason, when git could not say what its configuration
    holds (then nothing is searched: from a review, such answers were
    dropped and the search printed the token), and how many directories
    were left out."""
    if not os.path.isdir(root):
        return [], None, 0  # a file searched alone was judged as a read of it
    from sandbox import (  # noqa: PLC0415
        config_secrets,
        dotenv_below,
        repositories_secrets,
        runtime_dir,
    )

    walked = dotenv_below([root], runtime_dir)
    held = (*config_secrets(root), *repositories_secrets([root], list(walked.repositories)))
    unknown = next((where for where, key, _ in held if key == "<unknown>"), None)
    if unknown is not None:
        return [], unknown.strip("<>"), 0
    out = [_below(where, root, cwd) for where, _key, _scope in held
           if where.startswith("/") and inside(where, root) and where != root]
    # not walked yet (a fresh tree past the walk's budget): its nested
    # repositories are unknown, so it is not searched this time
    skipped = [_below(d, root, cwd) + "/**" for d in walked.unknown
               if inside(d, root) and d != root]
    return list(dict.fromkeys(out + skipped)), None, len(skipped)


def _below(where: str, root: str, cwd: str) -> str:
    if inside(where, cwd):
        return "/" + _glob_literal(os.path.relpath(where, cwd))
    return "**/" + _glob_literal(os.path.relpath(where, root))


def _glob_literal(path: str) -> str:
    return _GLOB_SPECIAL.sub(r"\\\g<0>", path)


#: what a ripgrep glob gives a meaning to, escaped in a literal path
_GLOB_SPECIAL = regex(r"[\\*?\[\]{}!]")


def target_of(root: paths.Resolved, cwd: str) -> str:
    """The path ripgrep is given, and so prints: relative to the working
    directory when inside it (``.`` for the directory itself), else
    absolute. The real path: what the permission check was about."""
    if root.real == cwd:
        return "."
    if root.real.startswith(cwd.rstrip("/") + "/"):
        return os.path.relpath(root.real, cwd)
    return root.real


# -- running ---------------------------------------------------------------------------

async def run_search(argv: list[str], ctx: ToolContext) -> ExecResult | None:
    """ripgrep in the sandbox on a worker thread; a cancelled task stops
    the whole sandboxed process tree before the cancellation goes on."""
    from sandbox import start_background  # noqa: PLC0415

    session = ctx.session
    process = start_background(argv, search_policy(session.policy), cwd=session.cwd,
                               workspace=session.workspace, env=search_env(session),
                               timeout=TIMEOUT_S, backend=session.backend)
    try:
        return await asyncio.to_thread(process.wait)
    except asyncio.CancelledError:
        await asyncio.shield(asyncio.to_thread(stop_process, process))
        raise


def stop_process(process: BackgroundProcess) -> None:
    """Stop ``process`` and wait for it (a stop that comes before the
    sandbox has started it is remembered by the process itself)."""
    with contextlib.suppress(Exception):  # the run's own error: it is over
        process.stop(timeout=STOP_S)


def rg_binary(session: SessionContext) -> str | None:
    """ripgrep from ``PATH``, never from a directory a sandboxed command
    can write: a planted ``rg`` there would run with the project's ``.env``
    in view and none of the globs above. Reproducer: ``PATH`` starting with
    ``./node_modules/.bin`` (npm scripts do that) and a Bash call writing
    ``node_modules/.bin/rg``: the next Grep ran that script, sandboxed but
    with ``.env`` readable (see the test of a planted ripgrep)."""
    writable = [os.path.realpath(d) for d in (*session.allowed_dirs,
                                              *session.fs_plan().writable)]

    def trusted(path: str) -> bool:
        real = os.path.realpath(path)
        return os.path.isabs(path) and not any(
            inside(real, w) for w in writable)

    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        found = shutil.which("rg", path=entry) if trusted(entry) else None
        if found is not None and trusted(found):
            return found
    return None


# -- the result ------------------------------------------------------------------------

def first_error(stderr: str) -> str:
    """ripgrep's error as one line (a regex error spans four)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "ripgrep failed"
    detail = next((line for line in lines[1:] if line.startswith("error:")), None)
    text = lines[0] if detail is None else f"{lines[0].rstrip(':')}: {detail[6:].strip()}"
    return text[:MAX_ERROR_CHARS]


def page(items: list[str], data: GrepInput) -> tuple[list[str], str]:
    """``offset`` then ``head_limit``, and a note when something was cut."""
    start = data.offset or 0
    end = start + data.head_limit if data.head_limit else None
    shown = items[start:end]
    if len(shown) == len(items):
        return shown, ""
    return shown, (f"(showing {len(shown)} from offset {start} of {len(items)}; "
                   "use offset and head_limit to page)")


def newest_first(files: list[str], cwd: str) -> list[str]:
    """Claude Code's order for a file list: most recently modified first."""
    def mtime(path: str) -> float:
        try:
            return os.stat(os.path.join(cwd, path)).st_mtime
        except OSError:
            return 0.0
    return sorted(files, key=lambda p: (-mtime(p), p))


def render(data: GrepInput, lines: list[str]) -> str:
    """The lines ripgrep printed, as the output mode shows them."""
    if not lines:
        return "No matches found"
    shown, note = page(lines, data)
    if data.output_mode == "files_with_matches":
        body = [f"Found {len(lines)} file{'s' if len(lines) != 1 else ''}", *shown]
    elif data.output_mode == "count":
        counts = (line.rpartition(":")[2] for line in lines)
        total = sum(int(c) for c in counts if c.isdigit())
        body = [*shown, "", f"Found {total} total "
                f"{'occurrences' if data.only_matching else 'matching lines'} across "
                f"{len(lines)} file{'s' if len(lines) != 1 else ''}"]
    else:
        body = shown
    return "\n".join([*body, note] if note else body)


_CUT_MARKER = regex(r"\[\.\.\. \d+ bytes of output truncated \.\.\.\]")


def outcome(result: ExecResult | None, target: str) -> tuple[list[str], list[str], str]:
    """(lines, notes, error) from ripgrep's run: exit 1 is "no matches",
    exit 2 an error unless it printed results too (an unreadable file among
    readable ones)."""
    if result is None:
        return [], [], "ripgrep ended without a result"
    if result.timed_out:
        return [], [], f"the search timed out after {TIMEOUT_S:g} s; narrow the path or pattern"
    if result.exec_error:
        return [], [], f"ripgrep could not run: {result.exec_error}"
    if result.exit_code not in (0, 1, 2):
        return [], [], f"ripgrep was stopped (exit {result.exit_code}, signal {result.signal})"
    text = result.stdout_text
    lines = text.removesuffix("\n").split("\n") if text else []
    if target == ".":  # rg prints `./a.py` for `.`; the model asked about `a.py`
        lines = [line[2:] if line.startswith("./") else line for line in lines]
    notes = []
    if result.truncated:
        lines = [line for line in lines if not _CUT_MARKER.fullmatch(line)]
        notes.append("(ripgrep printed more than the sandbox keeps; its middle was dropped: "
                     "narrow the pattern, path or glob)")
    if result.exit_code == 2 and not lines:
        return [], [], first_error(result.stderr_text)
    if result.exit_code == 2:
        notes.append(f"(some files could not be searched: {first_error(result.stderr_text)})")
    return lines, notes, ""


# -- the tool --------------------------------------------------------------------------

_PROMPT = """Searches file contents with ripgrep (regular expressions).
- ALWAYS use Grep for content search; never run grep or rg through Bash.
- Full regex syntax ("log.*Error", "function\\s+\\w+"); literal braces need escaping \
(`interface\\{\\}`).
- Filter files with `glob` ("*.js", "**/*.{ts,tsx}") or `type` ("py", "rust").
- output_mode: "files_with_matches" (default, newest first), "content" (matching lines; \
-A/-B/-C context, -n line numbers, -o only the matches), "count" (matches per file).
- `multiline: true` lets a pattern span lines. head_limit and offset page through long \
results.
- Runs in the sandbox, read-only: it sees what sandboxed commands see. Dotenv files (.env, \
.env.*, .envrc, .envs/) are never searched; symbolic links are not followed; version-control \
directories are skipped."""


class GrepTool(ReadOnlyTool[GrepInput]):
    name = "Grep"
    input_model = GrepInput
    search_hint = "search file contents with regular expressions (ripgrep)"
    max_result_size_chars = 30_000

    def description(self, data: GrepInput | None = None) -> str:
        return "Search file contents with a regular expression (ripgrep, in the sandbox)"

    def prompt(self) -> str:
        return _PROMPT

    def activity_description(self, data: GrepInput, cwd: str = "") -> str:
        return f"Searching for {data.pattern}"

    def summary(self, data: GrepInput, cwd: str = "") -> str:
        return f'pattern: "{data.pattern}"' + (f", path: {data.path}" if data.path else "")

    def is_search_or_read(self, data: GrepInput, ctx: ToolContext) -> SearchOrRead:
        return SearchOrRead(is_search=True)

    def permission_matcher(self, data: GrepInput, ctx: ToolContext) -> Subject:
        # the path as named and where it leads: an allow rule must hold
        # for both, a deny for either (`ln -s ~/.aws/credentials notes`)
        target = root_of(data.path, ctx)
        return Subject("path", tuple(dict.fromkeys((target.display, target.real))), "read")

    async def validate_input(self, data: GrepInput, ctx: ToolContext) -> Validation:
        values = (data.pattern, data.path or "", data.glob or "", data.type or "")
        if any("\0" in v for v in values):
            return invalid("the input contains a NUL character", 1)
        if data.type is not None and not _TYPE_RE.fullmatch(data.type):
            return invalid(f"{data.type!r} is not a ripgrep file type name", 2)
        root = root_of(data.path, ctx)
        right = paths.read_right(root, ctx)
        if right is not None and right.decision is Decision.DENY:
            # not even a stat: whether a hidden path exists is itself a fact
            # (from a review: "is not a directory" vs "does not exist" told
            # what ~/.ssh holds); the permission stage denies it
            return VALID
        if not os.path.exists(root.real):
            return invalid(f"{root.display} does not exist", 3)
        return VALID

    async def check_permissions(self, data: GrepInput, ctx: ToolContext) -> PermissionResult:
        root = root_of(data.path, ctx)
        right = paths.read_right(root, ctx)
        if right is not None and right.decision == Decision.ASK:
            # A dotenv path named explicitly: ripgrep searches an explicit
            # path whatever the globs say (`rg -g '!.env' KEY .env` prints
            # the key), so no approval may let Grep search it.
            return PermissionResult(Decision.DENY, right.source, "Grep never searches dotenv "
                                    f"files ({right.reason})", rule=right.rule,
                                    hint="Read opens one, with a person's approval")
        return search_permission(root, ctx, "Grep")

    async def call(self, data: GrepInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        from sandbox import SandboxError  # noqa: PLC0415

        rg = await asyncio.to_thread(rg_binary, ctx.session)
        if rg is None:
            return ToolResult("ripgrep (rg) is not installed (outside the working "
                              "directories); Grep needs it", is_error=True)
        cwd = ctx.session.cwd
        target = target_of(root_of(data.path, ctx), cwd)
        held, unknown, skipped = await asyncio.to_thread(
            credential_files, root_of(data.path, ctx).real, ctx.session.cwd)
        if unknown is not None:
            return ToolResult(f"Grep cannot tell which files below {target} hold credentials "
                              f"in git's configuration ({unknown}); search a narrower path",
                              is_error=True)
        try:
            result = await run_search(
                build_argv(rg, data, target, (*ctx.session.search_excludes, *held)), ctx)
        except SandboxError as exc:
            return ToolResult(f"The sandbox could not start: {exc}", is_error=True)
        lines, notes, error = outcome(result, target)
        if error:
            return ToolResult(error, is_error=True)
        if skipped:
            notes = [*notes, f"({skipped} directories not searched yet: the workspace is still "
                             "being looked through for repositories; search again)"]
        if data.output_mode == "files_with_matches":
            lines = await asyncio.to_thread(newest_first, lines, cwd)
        return ToolResult("\n".join([render(data, lines), *notes]))


GREP = build_tool(GrepTool())
