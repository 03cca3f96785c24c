"""The refusal Edit, Write and NotebookEdit make before writing: no secret
(found by :mod:`.secrets`) that the change would *introduce* (see
:func:`introduced`) goes into a file, unless the settings name the file in
``sandbox.filesystem.allowSecretWrites``.

What it stops: a model that saw a key (a command's output, a web page, an
environment dump) pastes it into a source file, a fixture or a config that
is committed and pushed. Reproducer: Write ``src/config.py`` with
``TOKEN = "ghp_…"`` — the token is in the repository's history from the
next commit on, and in every clone. A secret already in the file is not
news, and an unrelated edit of a file holding one goes through.

The globs are gitignore-style, as in the rest of the settings: ``*`` within
one path component, ``**`` across them, ``?`` and ``[…]``; a bare name
(``.env.local``, ``*.pem``) at any depth; ``~/`` the home; ``./`` or a
path with a ``/`` inside the workspace; ``/`` and ``//`` absolute (as the
sandbox key's other paths are); a directory covers what is inside it."""

from __future__ import annotations

import fnmatch
import functools
import os
import posixpath

from ..context import ToolContext
from ..decisions import Validation, invalid
from .filetext import Code
from .paths import Resolved
from .secrets import Finding, scan

#: the validation code of a refusal (one of the file tools' codes)
SECRET_CODE = Code.SECRET
#: how many of the secrets found a refusal names
_NAMED = 3
_SETTING = "sandbox.filesystem.allowSecretWrites"


def secret_refusal(tool: str, target: Resolved, before: str, after: str,
                   ctx: ToolContext) -> Validation | None:
    """Why ``tool`` may not turn ``before`` (the file as it is; ``""`` for
    a new one) into ``after`` at ``target``: the kinds of secret it would
    introduce and their lines, never the secrets themselves. ``None``: no
    new secret, or the settings allow secrets in this file."""
    found = introduced(before, after)
    if not found or secret_writes_allowed(target, ctx):
        return None
    return invalid(_message(tool, target.display, found), SECRET_CODE)


#: how far around a change a secret may reach: a secret touching the
#: changed text lies within this many characters of it (the longest armored
#: key the table reads is 16,000; its base64 form, 24,000)
MARGIN = 24_576
_CHUNK = 1 << 16
#: how many new secrets' texts are looked up in the old file one by one
#: (each a substring search, then a scan around each of a few places it
#: is); past that, the old file is scanned once, whole
_FEW_TEXTS = 8
_FEW_PLACES = 4


def _common_prefix(a: str, b: str) -> int:
    """The length ``a`` and ``b`` share at the start, compared a chunk at a
    time (a gigabyte file is not copied whole to find one changed line)."""
    n, i = min(len(a), len(b)), 0
    while i < n and a[i:i + _CHUNK] == b[i:i + _CHUNK]:
        i += _CHUNK
    while i < n and a[i] == b[i]:
        i += 1
    return min(i, n)


def _common_suffix(a: str, b: str, limit: int) -> int:
    """The length shared at the end, at most ``limit`` (what the prefix
    left: the two never overlap)."""
    n, i = min(len(a), len(b), limit), 0
    while i + _CHUNK <= n and a[len(a) - i - _CHUNK:len(a) - i] == b[len(b) - i - _CHUNK:
                                                                   len(b) - i]:
        i += _CHUNK
    while i < n and a[len(a) - i - 1] == b[len(b) - i - 1]:
        i += 1
    return i


def introduced(before: str, after: str) -> list[Finding]:
    """The secrets in ``after`` that ``before`` does not hold: only the
    text around the change is scanned, and a secret the file already held
    *as a secret* (moved, or untouched beside the change) is not news.
    Lines are counted in ``after``.

    Holding its characters is not enough: ``before`` may hold them where
    they were no secret — ``'Xghp_…'`` (no edge before the token), a bare
    forty-character value with no AWS name beside it — and an Edit then
    deletes the ``X`` or adds the name (reproducer: Write ``T = 'Xghp_…'``,
    then Edit ``'X`` into ``'``: the token was written, never refused)."""
    if before == after:
        return []
    head = _common_prefix(before, after)
    tail = _common_suffix(before, after, min(len(before), len(after)) - head)
    low, high = max(0, head - MARGIN), min(len(after), len(after) - tail + MARGIN)
    window = after[low:high]
    found = scan(window)
    if not found:
        return []
    known = _held(before, {window[f.start:f.end] for f in found})
    lines_before = after.count("\n", 0, low)
    return [Finding(f.kind, f.start + low, f.end + low, f.line + lines_before)
            for f in found if window[f.start:f.end] not in known]


def _held(before: str, texts: set[str]) -> set[str]:
    """Which of ``texts`` are secrets in ``before``: a few looked up where
    they are, many by one scan of the whole (a substring search per text
    would be quadratic)."""
    if len(texts) > _FEW_TEXTS:
        return texts & {before[f.start:f.end] for f in scan(before)}
    return {text for text in texts if _held_at(before, text)}


def _held_at(before: str, text: str) -> bool:
    """Is ``text`` a secret at one of the first few places ``before`` holds
    it (past those it counts as new: refused, not let through)?"""
    at = before.find(text)
    for _ in range(_FEW_PLACES):
        if at < 0:
            return False
        low = max(0, at - MARGIN)
        if any(f.start + low == at and f.end - f.start == len(text)
               for f in scan(before[low:at + len(text) + MARGIN])):
            return True
        at = before.find(text, at + 1)
    return False


def _message(tool: str, path: str, found: list[Finding]) -> str:
    named = [f"{f.kind} (line {f.line})" for f in found[:_NAMED]]
    more = len(found) - len(named)
    if more:
        named.append(f"{more} more")
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return (f"{tool} refused: the new content of {path} holds {listed}. Secrets are kept out "
            "of files the model writes (a committed file leaks them to every clone); have the "
            "code read it from an environment variable or a file it loads at run time. A file "
            f"meant to hold secrets can be listed in {_SETTING} in the user's settings.")


def secret_writes_allowed(target: Resolved, ctx: ToolContext) -> bool:
    """Do the session's ``allowSecretWrites`` globs name the file — both
    as named and where it leads (a link named ``.env.local`` into ``src/``
    is not the dotenv file the glob meant)?"""
    session = ctx.session
    globs = session.allow_secret_writes
    if not globs:
        return False
    # the home as given and where it leads: the real path is written with the latter
    homes = dict.fromkeys((posixpath.normpath(session.home), os.path.realpath(session.home)))
    return all(any(glob_matches(g, path, workspace=session.workspace, home=home)
                   for g in globs for home in homes)
               for path in dict.fromkeys((target.display, target.real)))


def glob_matches(pattern: str, path: str, *, workspace: str, home: str) -> bool:
    """Does the gitignore-style ``pattern`` (see the module's docstring)
    match the absolute, normalized ``path`` or a directory holding it?"""
    anchored = _anchor(pattern, workspace, home)
    parts = tuple(p for p in path.split("/") if p)
    if anchored is None:  # a bare name: at any depth
        return _match(("**", *_split(pattern)), parts)
    return _match(_split(anchored), parts)


def _anchor(pattern: str, workspace: str, home: str) -> str | None:
    body = pattern.rstrip("/") or "/"
    if body.startswith("/"):
        return posixpath.normpath("/" + body.lstrip("/"))
    if body == "~" or body.startswith("~/"):
        return posixpath.normpath(home + body[1:])
    if body in (".", "..") or "/" in body:
        return posixpath.normpath(posixpath.join(workspace, body))
    return None


def _split(pattern: str) -> tuple[str, ...]:
    return tuple(p for p in pattern.split("/") if p)


def _match(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """Component by component; ``**`` is any number of components (none
    too); once the pattern is used up, what remains is inside the
    directory it named."""

    @functools.cache
    def at(i: int, j: int) -> bool:
        if i == len(pattern):
            return True
        if pattern[i] == "**":
            return any(at(i + 1, k) for k in range(j, len(path) + 1))
        return j < len(path) and fnmatch.fnmatchcase(path[j], pattern[i]) and at(i + 1, j + 1)

    return at(0, 0)
