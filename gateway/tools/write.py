"""Write: create a file, or replace one whole — and the writing Edit
shares: loading the file a change starts from (read in this session and
unchanged since), and committing the change atomically where the policy
allows, through no link."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from values import valueclass

from ..context import ReadRecord, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid
from ..messages import ProgressCallback, TextBlock, ToolResult, ToolResultMessage
from ..resolver import real_path
from .base import BaseTool, Subject, build_tool
from .filetext import (
    SNIFF_BYTES,
    UTF8,
    Code,
    Encoding,
    FileInput,
    Refusal,
    check_path,
    detect_encoding,
    freshness,
    from_lf,
    line_count,
    not_regular,
    open_dir,
    os_error,
    pin,
    read_regular,
    recheck,
    sha256,
    unified_diff,
)
from .paths import Resolved, write_right
from .secret_writes import secret_refusal

#: the largest file Edit or Write will load to change
MAX_FILE_BYTES = 1 << 30


@valueclass
class Existing:
    """The file a change starts from, as loaded for it."""

    raw: bytes
    seen: os.stat_result
    #: None: not text (NUL bytes, invalid UTF-8, no BOM)
    encoding: Encoding | None


def load_existing(target: Resolved, ctx: ToolContext) -> Existing | Validation | None:
    """The file at ``target`` (None when there is none), or why no change
    may start from it: not a regular file, too large, not read in this
    session or changed since."""
    try:
        st = os.stat(target.real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return invalid(os_error(exc, target.display), Code.OS_ERROR)
    kind = not_regular(st.st_mode)
    if kind is not None:
        return invalid(f"{target.display} is {kind}, not a regular file", Code.NOT_A_FILE)
    try:
        raw, seen = read_regular(target.real, MAX_FILE_BYTES)
    except Refusal as refusal:
        return invalid(refusal.message, refusal.code)
    except OSError as exc:
        return invalid(os_error(exc, target.display), Code.OS_ERROR)
    stale = freshness(ctx, target, raw, seen)
    if stale is not None:
        return stale
    return Existing(raw, seen, detect_encoding(raw[:SNIFF_BYTES], whole=len(raw) <= SNIFF_BYTES))


@valueclass
class Change:
    """A change worked out and checked, not yet made."""

    target: Resolved
    kind: Literal["create", "update"]
    before: str
    after: str
    encoding: Encoding = UTF8
    newline: str = "\n"
    #: the file as the change was planned from (None: there was none)
    seen: os.stat_result | None = None


@valueclass
class FileChange:
    """What Edit and Write return: the kind of change, where, its diff."""

    type: Literal["create", "update"]
    file_path: str
    diff: str
    lines: int

    def text(self) -> str:
        if self.type == "create":
            return f"Created {self.file_path} ({self.lines} lines)."
        if not self.diff:
            return f"{self.file_path} was written with the content it already had."
        return f"Updated {self.file_path}:\n{self.diff}"


def change_message(result: ToolResult, tool_use_id: str) -> ToolResultMessage:
    data = result.data
    text = data.text() if isinstance(data, FileChange) else str(data)
    return ToolResultMessage(tool_use_id, (TextBlock(text),), result.is_error)


def _moved(change: Change) -> str | None:
    """Has the file changed between planning and writing (a formatter, a
    command running beside us)? Their change would be lost silently."""
    try:
        st = os.stat(change.target.real, follow_symlinks=False)
    except FileNotFoundError:
        return None if change.seen is None else "was removed"
    if change.seen is None:
        return "was created"
    same = (st.st_ino, st.st_size, st.st_mtime_ns) == (change.seen.st_ino, change.seen.st_size,
                                                       change.seen.st_mtime_ns)
    return None if same else "changed"


def _dir_objection(path: str, ctx: ToolContext) -> str | None:
    """Why a missing parent directory may not be created. Only a denial
    counts: an ask on a directory is an ask on every file below it too
    (sensitive entries cover what lies under them), already put to a
    person for the file itself."""
    verdict = write_right(Resolved(path, real_path(path)), ctx)
    return verdict.explain() if verdict and verdict.decision == Decision.DENY else None


def commit(real: str, payload: bytes, seen: os.stat_result | None,
           make: Callable[[str], str | None]) -> os.stat_result:
    """Write ``payload`` to ``real`` atomically: a temporary file made in
    the same directory (O_EXCL|O_NOFOLLOW: a link planted at its name is
    not followed), then renamed over the target. The rename replaces a
    link at the target's name instead of writing through it, and a hard
    link to a file elsewhere is cut off rather than changed. The replaced
    file's (``seen``) owner, group, permission bits (setuid/setgid
    dropped: they never vouched for this content) and extended attributes
    (ACLs, labels) carry over."""
    parent, name = os.path.split(real)
    dfd = open_dir(parent, make)
    try:
        temp = f".shellgate-{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o666 if seen is None else 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as out:
                if seen is not None:
                    _keep_identity(out.fileno(), real, seen)
                out.write(payload)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dfd)
            raise
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    finally:
        os.close(dfd)


def _keep_identity(fd: int, real: str, seen: os.stat_result) -> None:
    """Give the new file the old one's owner, mode and extended attributes.
    From a review: root's Edit of a file owned by `nobody` (mode 0640, an
    xattr) left it owned by root, the owner locked out. Where the owner
    cannot be kept (another user's file, edited without the right to give
    it back), the change is refused rather than the file taken over."""
    try:
        os.fchown(fd, seen.st_uid, seen.st_gid)
    except PermissionError:
        # Another user's file, or a group this user is not in: the new file
        # would be someone else's, or its group bits would grant another
        # group (from a review: `alice:www-data 0640` became readable by
        # alice's own group). Refused, never silently changed.
        raise Refusal(f"{real} belongs to uid {seen.st_uid} and gid {seen.st_gid}; a new copy "
                      "could not keep both, so it is left as it is", Code.OS_ERROR) from None
    os.fchmod(fd, stat.S_IMODE(seen.st_mode) & 0o777)
    for key in _xattrs(real):
        if key in _VOUCHING_XATTRS:
            continue  # like setuid: granted to the old content, not to this one
        with contextlib.suppress(OSError):  # a namespace this user may not set
            os.setxattr(fd, key, os.getxattr(real, key, follow_symlinks=False))


#: extended attributes that grant privilege to a file's content (file
#: capabilities: `setcap cap_net_admin+ep`), dropped as setuid bits are
_VOUCHING_XATTRS = frozenset({"security.capability", "security.SMACK64EXEC"})


def _xattrs(real: str) -> list[str]:
    try:
        return os.listxattr(real, follow_symlinks=False)
    except OSError:  # none, or a filesystem without them
        return []


def apply_change(change: Change, data: FileInput, ctx: ToolContext) -> ToolResult:
    """Make ``change``: the path checked once more right before, the file
    written, the session told (its new content counts as read; the
    filesystem plan is stale)."""
    now = recheck(data, ctx, write_right)
    if isinstance(now, str):
        return ToolResult(now, is_error=True)
    if now.real != change.target.real:
        return ToolResult(f"{data.file_path} now leads elsewhere; nothing was done", is_error=True)
    moved = _moved(change)
    if moved is not None:
        return ToolResult(f"{now.display} {moved} while the change was being made; read it "
                          "again", is_error=True)
    try:
        payload = change.encoding.encode(from_lf(change.after, change.newline))
    except UnicodeEncodeError as exc:
        return ToolResult(f"the new text has characters {change.encoding.codec} cannot encode "
                          f"({exc.reason})", is_error=True)
    try:
        st = commit(now.real, payload, change.seen, lambda path: _dir_objection(path, ctx))
    except Refusal as refusal:
        return ToolResult(refusal.message, is_error=True)
    except OSError as exc:
        return ToolResult(os_error(exc, now.display), is_error=True)
    finally:
        ctx.session.forget_plan()
    ctx.session.record_read(now.real, ReadRecord(sha256(payload), st.st_mtime_ns, st.st_size,
                                                 offset=None, limit=None, complete=True,
                                                 ctime_ns=st.st_ctime_ns, inode=st.st_ino))
    return ToolResult(FileChange(change.kind, now.display,
                                 unified_diff(change.before, change.after, now.display),
                                 line_count(change.after)))


def without_secrets(plan: Change | Validation, tool: str,
                    ctx: ToolContext) -> Change | Validation:
    """The change, unless it would introduce a secret into the file (see
    :mod:`.secret_writes`): refused before anything is written, and again
    at the act."""
    if isinstance(plan, Validation):
        return plan
    return secret_refusal(tool, plan.target, plan.before, plan.after, ctx) or plan


def write_permission(data: FileInput, ctx: ToolContext) -> PermissionResult:
    """Edit's and Write's own opinion: the policy's, else allowed."""
    target = pin(data, ctx)
    return write_right(target, ctx) or PermissionResult(
        Decision.ALLOW, "tool", f"{target.display} is inside the writable roots")


class WriteInput(FileInput):
    file_path: str = Field(description="The absolute path to the file to write (must be "
                                       "absolute, not relative)")
    content: str = Field(description="The content to write to the file")


def _plan(data: WriteInput, target: Resolved, ctx: ToolContext) -> Change | Validation:
    existing = load_existing(target, ctx)
    if existing is None:
        return Change(target, "create", "", data.content)
    if isinstance(existing, Validation):
        return existing
    encoding = existing.encoding or UTF8
    return Change(target, "update", encoding.decode(existing.raw, "replace"), data.content,
                  encoding, "\n", existing.seen)


def _validate(data: WriteInput, ctx: ToolContext) -> Validation:
    target = check_path(data, ctx, write_right)
    if isinstance(target, Validation):
        return target
    plan = without_secrets(_plan(data, target, ctx), "Write", ctx)
    return plan if isinstance(plan, Validation) else VALID


def _call(data: WriteInput, ctx: ToolContext) -> ToolResult:
    target = recheck(data, ctx, write_right)
    if isinstance(target, str):
        return ToolResult(target, is_error=True)
    plan = without_secrets(_plan(data, target, ctx), "Write", ctx)
    if isinstance(plan, Validation):
        return ToolResult(plan.message, is_error=True)
    return apply_change(plan, data, ctx)


_PROMPT = """\
Writes a file: creates it (with any missing parent directories) or replaces it whole.
- file_path must be absolute.
- Replacing an existing file needs a Read of it in this session first, and no change on disk \
since; otherwise the write is refused.
- Prefer Edit to change part of an existing file: Write sends and replaces everything.
- Writes go only inside the writable roots (the workspace and added directories); protected \
and sensitive paths are refused, dotenv files need a person's approval.
- The file's encoding (UTF-8, or UTF-16 with a byte-order mark) is kept; content is written \
as given."""


class WriteTool(BaseTool[WriteInput]):
    name = "Write"
    input_model = WriteInput

    def description(self, data: WriteInput | None = None) -> str:
        return "Create a file or replace its whole content"

    def prompt(self) -> str:
        return _PROMPT

    def activity_description(self, data: WriteInput, cwd: str = "") -> str:
        return f"Writing {data.shown_path(cwd)}"

    def summary(self, data: WriteInput, cwd: str = "") -> str:
        return data.shown_path(cwd)

    def permission_matcher(self, data: WriteInput, ctx: ToolContext) -> Subject:
        # the path as named and where it leads: an allow rule must hold
        # for both, a deny for either (`ln -s ~/.aws/credentials notes`)
        target = pin(data, ctx)
        return Subject("path", tuple(dict.fromkeys((target.display, target.real))), "write")

    async def validate_input(self, data: WriteInput, ctx: ToolContext) -> Validation:
        return await asyncio.to_thread(_validate, data, ctx)

    async def check_permissions(self, data: WriteInput, ctx: ToolContext) -> PermissionResult:
        return write_permission(data, ctx)

    async def call(self, data: WriteInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        return await asyncio.to_thread(_call, data, ctx)

    def map_result(self, result: ToolResult, tool_use_id: str) -> ToolResultMessage:
        return change_message(result, tool_use_id)


WRITE = build_tool(WriteTool())
