"""What Read, Edit and Write share: the input's path (pinned once per call,
checked again before the act), link-proof opening, encodings and line
endings, curly-quote matching, the "read and unchanged since?" check, and
the unified diff a change is shown as."""

from __future__ import annotations

import codecs
import difflib
import errno
import hashlib
import os
import stat
from collections.abc import Callable
from enum import IntEnum

from pydantic import BaseModel, ConfigDict, Field

from values import valueclass

from ..context import ReadRecord, ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid, needs_person
from .paths import Resolved, resolve


class Code(IntEnum):
    """Stable codes of the file tools' validation failures: the model reads
    the message, logs and tests the code."""

    RELATIVE = 2
    POLICY = 3
    MISSING = 4
    NOT_A_FILE = 5
    OS_ERROR = 6
    NOT_READ = 7
    CHANGED = 8
    TOO_LARGE = 9
    NOT_TEXT = 10
    NO_CHANGE = 11
    NOTEBOOK = 12
    NOT_FOUND = 13
    AMBIGUOUS = 14
    EXISTS = 15
    #: the content would bring a secret into the file (:mod:`.secret_writes`)
    SECRET = 16


class Refusal(Exception):
    """An expected refusal found while opening or writing (a path that is
    not a regular file, a directory the policy will not let us create);
    caught at the tool's edge and turned into an error result."""

    def __init__(self, message: str, code: Code) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# -- the input's path ------------------------------------------------------

class FileInput(BaseModel):
    """The part every file tool's input shares."""

    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The absolute path to the file")

    def shown_path(self, cwd: str = "") -> str:
        """The path relative to the working directory ``cwd`` when inside it."""
        path = self.file_path
        if not cwd or not path.startswith("/"):
            return path
        rel = os.path.relpath(os.path.normpath(path), cwd)
        return path if rel == ".." or rel.startswith("../") else rel


def is_absolute(path: str) -> bool:
    return path.startswith(("/", "~/")) or path == "~"


@valueclass
class _Pin:
    file_path: str
    target: Resolved


def pin(data: FileInput, ctx: ToolContext) -> Resolved:
    """The path as the first stage to see this call resolved it, kept in
    the call's context: the permission stage judges that one, and the act
    refuses to go anywhere else (see :func:`recheck`)."""
    held = ctx.analysis
    if isinstance(held, _Pin) and held.file_path == data.file_path:
        return held.target
    target = resolve(data.file_path, ctx)
    ctx.analysis = _Pin(data.file_path, target)
    return target


Right = Callable[[Resolved, ToolContext], PermissionResult | None]


def check_path(data: FileInput, ctx: ToolContext, right: Right) -> Resolved | Validation:
    """validate_input's path stage, before anything touches the file: a
    relative path is invalid; a denied one passes validation untouched (the
    permission stage denies it); a dotenv one asks (and is not opened: even
    "old_string not found" would tell what it holds)."""
    if not is_absolute(data.file_path):
        return invalid(f"file_path must be an absolute path, not {data.file_path!r} "
                       f"(the working directory is {ctx.session.cwd})", Code.RELATIVE)
    target = pin(data, ctx)
    verdict = right(target, ctx)
    if verdict is None:
        return target
    if verdict.decision == Decision.DENY:
        # Left untouched (not even a stat: whether a hidden file exists is
        # itself a fact) and left to the permission stage, which denies it
        # with its reason and source and puts the denial in the audit log.
        return VALID
    return needs_person(verdict.reason)


def recheck(data: FileInput, ctx: ToolContext, right: Right) -> Resolved | str:
    """The path again, at the moment of the act; an error text if it may
    not be touched now. Reproducer: Edit ``notes`` (a link to a workspace
    file, allowed), then a background command re-points the link at
    ``~/.bashrc`` before the write: the write must not follow it."""
    if not is_absolute(data.file_path):
        return f"file_path must be an absolute path, not {data.file_path!r}"
    held = ctx.analysis
    pinned = held.target if isinstance(held, _Pin) and held.file_path == data.file_path else None
    now = resolve(data.file_path, ctx)
    if pinned is not None and pinned.real != now.real:
        return (f"{data.file_path} now leads to {now.real}, not to {pinned.real} as when it "
                "was checked (a link changed); nothing was done")
    verdict = right(now, ctx)
    if verdict is None:
        return now
    if verdict.decision == Decision.DENY:
        return verdict.explain()
    if pinned is None:  # an ask no permission stage put to a person
        return f"{verdict.reason}; it was not approved, so nothing was done"
    return now


def os_error(exc: OSError, path: str) -> str:
    """An OS failure named by its errno: never the file's content."""
    code = exc.errno or 0
    name = errno.errorcode.get(code, "error")
    return f"{path}: {name} ({os.strerror(code) if code else exc})"


# -- opening without following links ---------------------------------------

_DIR_FLAGS = (getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW
              | os.O_CLOEXEC)
#: O_NONBLOCK: a FIFO swapped in after the stat opens at once instead of
#: waiting for a writer forever; on a regular file it changes nothing
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def not_regular(mode: int) -> str | None:
    """What a file is when it is not a regular file (None when it is)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_dir(path: str, make: Callable[[str], str | None] | None = None) -> int:
    """A descriptor of directory ``path`` (resolved, absolute), reached from
    ``/`` one component at a time following no link: a component swapped
    for a link since the path was resolved and checked fails (ENOTDIR)
    instead of leading elsewhere. With ``make``, a missing component is
    created once ``make(its path)`` has no objection."""
    fd = os.open("/", _DIR_FLAGS)
    walked = ""
    try:
        for part in (p for p in path.split("/") if p):
            walked += "/" + part
            try:
                step = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if make is None:
                    raise
                objection = make(walked)
                if objection is not None:
                    raise Refusal(objection, Code.POLICY) from None
                os.mkdir(part, 0o777, dir_fd=fd)
                step = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(real: str) -> int:
    """A read descriptor of the regular file at ``real``, opened through
    :func:`open_dir` and never a FIFO, device or link."""
    parent, name = os.path.split(real)
    dfd = open_dir(parent)
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dfd)
    finally:
        os.close(dfd)
    kind = not_regular(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise Refusal(f"{real} is {kind}, not a regular file", Code.NOT_A_FILE)
    return fd


def read_regular(real: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The whole file and its stat (taken before the read: a change during
    it then shows as a changed mtime later)."""
    with os.fdopen(open_regular(real), "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size > max_bytes:
            raise Refusal(f"{real} is {st.st_size} bytes, over the {max_bytes} bytes a file "
                          "tool handles", Code.TOO_LARGE)
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew since the stat
        raise Refusal(f"{real} is over the {max_bytes} bytes a file tool handles",
                      Code.TOO_LARGE)
    return data, st


# -- encodings and line endings --------------------------------------------

SNIFF_BYTES = 8192

#: UTF-32 before UTF-16: FF FE 00 00 also starts with UTF-16-LE's mark
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))


@valueclass
class Encoding:
    """A text file's codec and byte-order mark, kept across a rewrite."""

    codec: str
    bom: bytes = b""

    def decode(self, data: bytes, errors: str = "strict") -> str:
        return data[len(self.bom):].decode(self.codec, errors)

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.codec)


UTF8 = Encoding("utf-8")


def detect_encoding(head: bytes, *, whole: bool) -> Encoding | None:
    """The encoding of a file starting with ``head`` (``whole``: that is all
    of it), or None for binary: NUL bytes or invalid UTF-8 with no BOM. An
    incremental decoder, so a character cut at the end of ``head`` is fine."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return Encoding(codec, bom)
    if b"\0" in head:
        return None
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=whole)
    except UnicodeDecodeError:
        return None
    return UTF8


def to_lf(text: str) -> tuple[str, str]:
    """``text`` with CRLF made LF, and the file's line ending: CRLF when
    most lines end so. A mixed file is written back all in its majority
    ending (what an editor set to it does)."""
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf > text.count("\n") - crlf else "\n"
    return text.replace("\r\n", "\n"), newline


def from_lf(text: str, newline: str) -> str:
    return text if newline == "\n" else text.replace("\n", newline)


def line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


# -- matching with curly quotes --------------------------------------------

#: one character for one: indexes in the straightened text are the original's
_STRAIGHTEN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})
_OPENERS = frozenset(" \t\n\r([{—–-")


def _find_all(haystack: str, needle: str) -> list[int]:
    found: list[int] = []
    at = haystack.find(needle)
    while at != -1:
        found.append(at)
        at = haystack.find(needle, at + len(needle))
    return found


def find_spans(text: str, needle: str) -> list[int]:
    """Where ``needle`` (not empty) occurs, without overlap: exactly, else
    with curly quotes taken as straight on both sides (a model types
    ``"`` where the file has ``“``)."""
    return _find_all(text, needle) or _find_all(text.translate(_STRAIGHTEN),
                                                needle.translate(_STRAIGHTEN))


def _curl(quote: str, before: str, after: str) -> str:
    if quote == "'" and before.isalnum() and after.isalnum():
        return "’"  # an apostrophe: don't, it's
    opening = before == "" or before in _OPENERS
    if quote == '"':
        return "“" if opening else "”"
    return "‘" if opening else "’"


def restyle_quotes(new: str, found: str) -> str:
    """``new`` in the quote style of the text it replaces: curly where that
    text had curly quotes of the same kind."""
    kinds = {q for q, curly in (('"', "“”"), ("'", "‘’")) if any(c in found for c in curly)}
    if not kinds:
        return new
    return "".join(_curl(c, new[i - 1] if i else "", new[i + 1: i + 2]) if c in kinds else c
                   for i, c in enumerate(new))


def splice(text: str, starts: list[int], old: str, new: str) -> str:
    """``text`` with ``old`` (as found at each start) replaced by ``new``."""
    parts: list[str] = []
    last = 0
    for start in starts:
        found = text[start:start + len(old)]
        parts += [text[last:start], new if found == old else restyle_quotes(new, found)]
        last = start + len(old)
    parts.append(text[last:])
    return "".join(parts)


# -- read and unchanged since? ---------------------------------------------

def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_STALE = {
    Code.NOT_READ: "{path} has not been read in this session. Read it first, then write it.",
    Code.CHANGED: "{path} has changed on disk since it was read (by the user, a command or a "
                  "formatter). Read it again before changing it.",
}


def staleness(record: ReadRecord | None, data: bytes, st: os.stat_result) -> Code | None:
    """None when the file is as a Read of this session saw it. The whole
    file's hash is compared too (a same-size change within the mtime's
    granularity, or a forged mtime, still counts); a touched file whose
    content is the same passes only when that read saw all of it."""
    if record is None:
        return Code.NOT_READ
    if not record.sha256:
        # a file too large for Read to hash: its size, times and inode
        # decide — the change time too, which no `touch -d` or utime sets
        # back (from a review: a same-size change with the mtime restored
        # passed when only size and mtime were compared)
        same_stat = ((record.mtime_ns, record.size, record.ctime_ns, record.inode)
                     == (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino))
        return None if same_stat else Code.CHANGED
    same = record.sha256 == sha256(data)
    if same and (record.complete or (record.mtime_ns, record.size) == (st.st_mtime_ns,
                                                                       st.st_size)):
        return None
    return Code.CHANGED


def freshness(ctx: ToolContext, target: Resolved, data: bytes,
              st: os.stat_result) -> Validation | None:
    code = staleness(ctx.session.last_read(target.real), data, st)
    return None if code is None else invalid(_STALE[code].format(path=target.display), code)


def unified_diff(before: str, after: str, path: str, context: int = 3) -> str:
    return "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                          fromfile=path, tofile=path, n=context, lineterm=""))
