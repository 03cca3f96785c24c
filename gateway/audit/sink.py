"""The audit sink: every event of every call appended, chained, to a file —
or the call does not happen.

Where: :func:`audit_location`. A path ending in ``.jsonl`` is one file that
grows for ever; any other path is a directory of daily files
``YYYY-MM-DD.jsonl`` (the UTC date). Directories are created 0700, files
0600: the log holds what the agent did, for its owner only.

The day link: the first line of a day's file chains to the last line of
the newest earlier file, so the files form one chain and deleting a whole
day breaks it where the next day begins.

Locking: several gateways (processes) and threads may write the same log.
Each append holds an exclusive ``flock`` — on ``.lock`` in the directory, or
on the single file itself — around "find the last line, compute ``prev``,
append, record the head (:mod:`.heads`), close". Without it two writers
would both chain to the same line and the log would fork, or record an
older head over a newer one. The file appended to is the newest of today's name and
the newest file present: a writer whose clock is a little behind never
appends to yesterday behind a line that already began today.

A partial last line (a crash, or a full disk, in the middle of a write):
the next writer ends it with a newline and chains to its bytes as they are.
Verification then reports exactly that line (not JSON) and every later line
still verifies — a crash costs one line, not the rest of the log.

Fail closed: any failure (no directory, no permission, full disk, a lock
that cannot be taken) raises :class:`~.chain.AuditError` with one line; the
pipeline turns that into "nothing was run". Nothing here is swallowed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from regexes import regex
from values import valueclass

from ..pathnames import AUDIT_LOG_ENV, audit_path
from .chain import AuditError, audit_key, seal, utc_stamp
from .heads import Head, heads_dir, record_head
from .redact import MAX_CHARS, scrub

if TYPE_CHECKING:
    from structlog.typing import EventDict, WrappedLogger

__all__ = ["LOG_ENV", "FileAudit", "audit_location", "daily_name", "is_daily_name"]

#: the environment variable naming the log (the ``--audit-log`` flag wins)
LOG_ENV: Final = AUDIT_LOG_ENV
LOCK_NAME: Final = ".lock"
_DAILY = regex(r"\d{4}-\d{2}-\d{2}\.jsonl")
_CHUNK = 65536


def audit_location(flag: str | None, env: Mapping[str, str]) -> Path:
    """Where the log is: ``--audit-log``, else ``$SHELLGATE_AUDIT_LOG``, else
    ``$XDG_STATE_HOME/shellgate/audit/`` (``~/.local/state`` when unset or
    not absolute, as the XDG spec says). Always an absolute path."""
    return Path(audit_path(flag, env))


def is_daily_name(name: str) -> bool:
    return _DAILY.fullmatch(name) is not None


def daily_name(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d") + ".jsonl"


def _utcnow() -> datetime:
    return datetime.now(UTC)


@valueclass
class _Tail:
    """The last line of the log: its bytes, and whether it lacks its newline
    (and in which file it is)."""

    raw: bytes
    partial: bool
    path: Path


def _last_line(fd: int, path: Path) -> _Tail | None:
    """The file's last line, read backwards from the end (a year of log is
    not read to append one line). None for an empty file."""
    size = os.fstat(fd).st_size
    if size == 0:
        return None
    partial = os.pread(fd, 1, size - 1) != b"\n"
    pos = size if partial else size - 1
    chunks: list[bytes] = []
    while pos > 0:
        step = min(_CHUNK, pos)
        pos -= step
        block = os.pread(fd, step, pos)
        cut = block.rfind(b"\n")
        if cut >= 0:
            chunks.append(block[cut + 1:])
            break
        chunks.append(block)
    return _Tail(b"".join(reversed(chunks)), partial, path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError("short write")
        view = view[written:]


def _lock(fd: int, timeout: float) -> None:
    """An exclusive flock, waited for at most ``timeout`` seconds: a writer
    stopped while holding it (``kill -STOP``) must not hang every gateway
    on the machine — past the wait, the call fails closed instead."""
    deadline = time.monotonic() + timeout
    pause = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise AuditError(f"the audit log stayed locked by another writer for "
                                 f"{timeout:g}s") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.005)


def _make_dir(path: Path) -> None:
    if path.is_dir():
        return
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)  # the umask may have taken bits off; never added any


class FileAudit:
    """The :class:`~gateway.context.AuditSink` that writes the chained log.

    ``key``: the HMAC key (``SHELLGATE_AUDIT_KEY``, see :func:`.audit_key`),
    or None for a plain SHA-256 chain. ``fsync``: also flush each line to
    the disk before returning (survives a power cut; costs a disk round
    trip per event). ``lock_timeout``: how long to wait for another writer
    before failing. ``clock`` is for tests."""

    def __init__(self, location: Path | str, *, key: bytes | None = None, fsync: bool = False,
                 lock_timeout: float = 10.0, clock: Callable[[], datetime] = _utcnow,
                 limit: int = MAX_CHARS, heads: Path | None = None) -> None:
        self.location = Path(location)
        #: where the chain's head is recorded after each append (see .heads):
        #: the state directory's, out of every sandboxed command's reach
        self.heads = heads if heads is not None else heads_dir(os.environ)
        self.single = self.location.suffix == ".jsonl"
        #: what to hide from sandboxed commands and file tools: the directory
        #: of daily files, or the one file
        self.root = self.location
        self._key = key
        self._fsync = fsync
        self._lock_timeout = lock_timeout
        self._clock = clock
        self._lock = threading.Lock()
        # The event goes through a structlog-shaped processor chain
        # (redaction and bounding) to the writer, called here directly:
        # importing structlog costs a process 60 ms (it imports rich for its
        # console renderer), and every `shellgate hook` and `run` is a new
        # process. The chaining is not a processor: ``prev`` depends on the
        # file's last line, which may only be read under the file lock, and
        # processors run before the logger is called, outside any lock.
        # Rendering is ours too: the exact bytes written are the bytes the
        # next line hashes.
        self._processors = (_bounded(limit),)
        self._writer = _Writer(self)
        try:
            _make_dir(self.location.parent if self.single else self.location)
        except OSError as exc:
            raise AuditError(f"audit log {self.location}: {_why(exc)}") from None
        #: the log's real path: what its head is recorded under
        self._real = os.path.realpath(self.location)

    @classmethod
    def from_env(cls, flag: str | None = None, env: Mapping[str, str] | None = None,
                 **options: Any) -> FileAudit:
        """The log the user configured: location from the flag or the
        environment, key from ``SHELLGATE_AUDIT_KEY``, the head recorded in
        the environment's state directory."""
        env = os.environ if env is None else env
        options.setdefault("heads", heads_dir(env))
        return cls(audit_location(flag, env), key=audit_key(env), **options)

    @property
    def keyed(self) -> bool:
        return self._key is not None

    def emit(self, event: str, **fields: Any) -> None:
        """Append one event; raises :class:`AuditError` if it was not written."""
        try:
            record: EventDict = {**fields, "event": event}
            for processor in self._processors:
                record = processor(self._writer, "msg", record)
            self._writer.msg(**record)
        except AuditError:
            raise
        except Exception as exc:
            raise AuditError(f"audit log {self.location}: {_why(exc)}") from None

    # -- under the locks -------------------------------------------------

    def _append(self, event: str, fields: dict[str, Any]) -> None:
        with self._lock:
            if self.single:
                self._append_single(event, fields)
            else:
                self._append_daily(event, fields)

    def _append_single(self, event: str, fields: dict[str, Any]) -> None:
        fd = os.open(self.location, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            _lock(fd, self._lock_timeout)
            tail = _last_line(fd, self.location)
            line = self._write(fd, event, fields, tail, tail is not None and tail.partial)
            self._record_head(fd, self.location.name, line)
        finally:
            os.close(fd)  # releases the lock

    def _append_daily(self, event: str, fields: dict[str, Any]) -> None:
        _make_dir(self.location)
        lock = os.open(self.location / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            _lock(lock, self._lock_timeout)
            names = sorted(n for n in os.listdir(self.location) if is_daily_name(n))
            now = self._clock()
            target = max([daily_name(now), *names[-1:]])
            tail = None
            for name in reversed(names):  # the newest file holding a line
                tail = self._tail_of(self.location / name)
                if tail is not None:
                    break
            # O_NOFOLLOW: the directory is ours; a daily file that is a
            # symlink (to ~/.bashrc) would make the gateway append elsewhere
            fd = os.open(self.location / target, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                         | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                ends_partial = tail is not None and tail.partial and tail.path.name == target
                created = target not in names
                line = self._write(fd, event, fields, tail, ends_partial, now=now)
                self._record_head(fd, target, line)
            finally:
                os.close(fd)
            if created and self._fsync:
                _fsync_dir(self.location)
        finally:
            os.close(lock)

    @staticmethod
    def _tail_of(path: Path) -> _Tail | None:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            return _last_line(fd, path)
        finally:
            os.close(fd)

    def _record_head(self, fd: int, name: str, line: bytes) -> None:
        """Record where the log now ends, still under the log's lock (two
        writers must not record an older head over a newer one)."""
        record_head(self.heads, Head(log=self._real, file=name, size=os.fstat(fd).st_size,
                                     sha256=hashlib.sha256(line).hexdigest()))

    def _write(self, fd: int, event: str, fields: dict[str, Any], tail: _Tail | None,
               ends_partial: bool, now: datetime | None = None) -> bytes:
        moment = now if now is not None else self._clock()
        line = seal(event, fields, ts=utc_stamp(moment),
                    last_line=None if tail is None else tail.raw, key=self._key)
        # a partial line left by a crash is ended first, so this line starts
        # a line of its own (and chains to the partial bytes as they are)
        _write_all(fd, (b"\n" if ends_partial else b"") + line + b"\n")
        if self._fsync:
            os.fsync(fd)
        return line


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


class _Writer:
    """The "logger" at the end of the processor chain (structlog's shape)."""

    def __init__(self, sink: FileAudit) -> None:
        self._sink = sink

    def msg(self, **record: Any) -> None:
        event = str(record.pop("event"))
        self._sink._append(event, record)


def _bounded(limit: int) -> Callable[[WrappedLogger, str, EventDict], EventDict]:
    """The structlog processor that makes every field fit for the log:
    redacted, cut, JSON-able (:func:`.redact.scrub`)."""

    def processor(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
        event = event_dict.pop("event")
        fields = scrub(event_dict, limit=limit)
        name = scrub(str(event), limit=200)
        return {"event": name if isinstance(name, str) else name["head"], **fields}

    return processor
