"""Verification of the hash chain (``shellgate audit verify``).

Every line's ``prev`` is recomputed from the exact bytes of the line before
it — across files too: the first line of a later file must chain to the
last line of the file before. Each break is reported as ``FILE:LINE:
reason``, where LINE is the line whose link fails: an edited line N shows as
a break at N+1 (its successor no longer matches it), a deleted line or day
as a break where the chain resumes, an inserted line at the line after it.

What a chain alone cannot see: lines cut off the end (the remaining lines
still chain) and a wholesale rewrite by someone who can recompute every
link. Hence the **head**: the hash of the last line, printed on success for
the user to record elsewhere; ``expect_head`` fails unless some line still
hashes to it. (The head each writer records in the state directory, out of
every sandboxed command's reach, is checked beside this by
``shellgate audit verify``: :mod:`.heads`.)

Exit status (:attr:`Verification.status`): 0 verified; 1 broken (any
problem); 2 could not verify (a keyed chain without the key). A log given
without its beginning (a single daily file, or a directory whose older days
were removed) is verified from its first line on, with a note — status 0:
pruning old days is allowed, and is indistinguishable from deleting them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from values import field, valueclass

from .chain import GENESIS, HMAC_SHA256, KEY_ENV, SHA256, digest, parse_line
from .lines import MAX_LINE_BYTES, log_lines

__all__ = ["Problem", "Verification", "verify"]

#: problems kept (the first is what matters; the rest show the extent)
MAX_PROBLEMS: Final = 100
#: what an over-long line stands for in the chain: no line hashes to a
#: link to it, so the line after it is reported too
_UNREADABLE: Final = b"\0a line too long to read"


@valueclass
class Problem:
    path: Path
    line: int | None
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}" if self.line else \
            f"{self.path}: {self.reason}"


@valueclass
class Verification:
    files: tuple[Path, ...]
    lines: int
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]
    #: the hash (or HMAC) of the last line; None if it cannot be computed
    head: str | None
    head_kind: str | None
    #: the first line given is the first line ever (prev = zeros)
    from_genesis: bool
    #: where the chain first becomes keyed, if anywhere
    keyed_from: tuple[Path, int] | None
    #: the chain is keyed and no key was given: links were not checked
    needs_key: bool

    @property
    def ok(self) -> bool:
        return not self.problems and not self.needs_key

    @property
    def status(self) -> int:
        return 1 if self.problems else 2 if self.needs_key else 0


def _normal_head(text: str) -> str:
    text = text.strip().lower()
    for prefix in (f"{HMAC_SHA256}:", f"{SHA256}:"):
        text = text.removeprefix(prefix)
    return text


@valueclass(frozen=False, slots=False)
class _Walk:
    key: bytes | None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lines: int = 0
    prev_raw: bytes | None = None
    prev_kind: str | None = None
    prev_where: tuple[Path, int] | None = None
    from_genesis: bool = False
    keyed_from: tuple[Path, int] | None = None
    needs_key: bool = False
    head_at: tuple[Path, int] | None = None

    def problem(self, path: Path, line: int | None, reason: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(path, line, reason))

    def check(self, path: Path, number: int, raw: bytes, complete: bool) -> str | None:
        """What is wrong with this line's own link, if anything; updates the
        walk's idea of the chain's kind."""
        record, bad = parse_line(raw)
        if not complete:
            return "the file ends in a partial line (a write cut short, or a truncation)"
        if record is None:
            return f"{bad} (a damaged or hand-edited line)"
        kind, prev = record.get("chain"), record.get("prev")
        if kind not in (SHA256, HMAC_SHA256) or not isinstance(prev, str):
            return "no chain link (chain or prev missing or unknown)"
        was, self.prev_kind = self.prev_kind, kind
        if kind == HMAC_SHA256:
            self.keyed_from = self.keyed_from or (path, number)
            self.needs_key = self.needs_key or self.key is None
        if prev == GENESIS:
            if self.prev_raw is None:
                self.from_genesis = True
                return None
            return ("the chain starts over here: this line does not link to the one before "
                    "(the log before it was replaced, or this line was written by hand)")
        if self.prev_raw is None:
            self.notes.append(f"{path}:{number} chains to an earlier line that was not given "
                              "(an earlier file): the lines before it are not checked")
            return None
        if was == HMAC_SHA256 and kind == SHA256:
            return (f"the chain loses its key here (hmac-sha256, then sha256): written "
                    f"without {KEY_ENV} — or rewritten by someone without the key")
        if kind == HMAC_SHA256 and self.key is None:
            return None  # cannot be checked: needs_key says so
        if hmac.compare_digest(digest(self.prev_raw, kind, self.key), prev):
            return None
        return self._mismatch(path, number, kind, prev)

    def _mismatch(self, path: Path, number: int, kind: str, prev: str) -> str:
        assert self.prev_raw is not None and self.prev_where is not None
        before_path, before_line = self.prev_where
        if before_path != path:
            where = (f"the last line of {before_path.name} (a file between them was deleted, "
                     f"or that file's end was changed)")
        else:
            where = (f"line {before_line} (line {before_line} was changed, or lines were "
                     f"deleted or inserted between them)")
        reason = f"prev does not match {where}"
        if kind == HMAC_SHA256:
            if prev == hashlib.sha256(self.prev_raw).hexdigest():
                return (f"{reason}: a plain SHA-256 where an HMAC belongs (recomputed "
                        "without the key)")
            return f"{reason}, or {KEY_ENV} is not the key it was written with"
        return reason


def verify(files: Sequence[Path], *, key: bytes | None = None,
           expect_head: str | None = None) -> Verification:
    """Walk every line of ``files`` in order and check each link."""
    walk = _Walk(key)
    expected = _normal_head(expect_head) if expect_head else None
    last_raw: bytes | None = None
    for path in files:
        for number, read, complete in log_lines(path):
            walk.lines += 1
            if read is None:
                walk.problem(path, number, f"the line is longer than {MAX_LINE_BYTES} bytes: "
                             "no event shellgate writes; not read")
                # the next line's link is to this one: it cannot match
                walk.prev_raw, walk.prev_where, last_raw = _UNREADABLE, (path, number), None
                continue
            raw = read
            reason = walk.check(path, number, raw, complete)
            if reason is not None:
                walk.problem(path, number, reason)
            if expected is not None and expected in _hashes(raw, key):
                walk.head_at = (path, number)
            walk.prev_raw, walk.prev_where, last_raw = raw, (path, number), raw
    head_kind = walk.prev_kind or SHA256
    head = None
    if last_raw is not None and not (head_kind == HMAC_SHA256 and key is None):
        head = digest(last_raw, head_kind, key)
    if expected is not None:
        _check_head(walk, files, expected)
    if key is not None and walk.lines and walk.keyed_from is None:
        # a break, not a note: with the key at hand the person expects a
        # keyed log, and a script reads the status (from a review: a keyed
        # log re-chained from zero with plain sha256 verified with 0)
        where = files[0] if files else Path("?")
        walk.problem(where, 1, f"the chain holds no keyed link: {KEY_ENV} is set, so these "
                     "lines were written — or rewritten — without it")
    return Verification(files=tuple(files), lines=walk.lines, problems=tuple(walk.problems),
                        notes=tuple(walk.notes), head=head, head_kind=head_kind,
                        from_genesis=walk.from_genesis, keyed_from=walk.keyed_from,
                        needs_key=walk.needs_key)


def _hashes(raw: bytes, key: bytes | None) -> tuple[str, ...]:
    plain = hashlib.sha256(raw).hexdigest()
    return (plain,) if key is None else (plain, digest(raw, HMAC_SHA256, key))


def _check_head(walk: _Walk, files: Sequence[Path], expected: str) -> None:
    if walk.head_at is None:
        where = files[-1] if files else Path(".")
        walk.problem(where, None, f"the recorded head {expected[:16]}… is not the hash of any "
                     "line: lines after it were removed, or the log was rewritten")
        return
    path, number = walk.head_at
    if walk.prev_where is not None and walk.prev_where != walk.head_at:
        walk.notes.append(f"the recorded head is {path}:{number}; lines were written after it")
