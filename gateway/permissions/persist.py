""""Always allow": the rule a person approved goes into shellgate's state
directory, one file per project (:func:`gateway.pathnames.answers_file`),
read back as the user's own settings.

It went into the project's ``.claude/settings.local.json`` (Claude Code's
place): a repository's file, which a clone may bring and which shellgate
then judged as a repository's — refusing its own saved rule for a code
runner ("a repository's settings cannot allow every Bash call"). The state
directory is hidden from every sandboxed command and file tool, so no
model can grant itself a rule there either."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable

from .settings import MAX_SETTINGS_BYTES


def save_allow_rule(path: str, rule: str, project: str) -> str:
    """Add ``rule`` to ``permissions.allow`` of the answers file at
    ``path`` (made, with its directories, private to the user), which
    names ``project``; returns ``path``. Raises ``OSError``/``ValueError``
    with a one-line reason when the file cannot be kept whole (it is never
    overwritten when it holds something other than a JSON object)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    _plain(os.path.dirname(path), stat.S_ISDIR)
    _plain(path, stat.S_ISREG)
    data: dict[str, object] = {}
    mode = 0o600
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise ValueError(f"{path} is not a regular file; not changed")
            raw = fh.read(MAX_SETTINGS_BYTES + 1)
            mode = os.fstat(fh.fileno()).st_mode & 0o777
    except FileNotFoundError:
        raw = b""
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ValueError(f"{path} is too large to edit")
    if raw.strip():
        loaded = json.loads(raw.decode("utf-8-sig"))
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} does not hold a JSON object; not changed")
        data = loaded
    perms = data.setdefault("permissions", {})
    if not isinstance(perms, dict):
        raise ValueError(f"{path}: 'permissions' is not an object; not changed")
    allow = perms.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ValueError(f"{path}: 'permissions.allow' is not a list; not changed")
    if rule not in allow:
        allow.append(rule)
    data["project"] = os.path.realpath(project)  # for a person reading the file
    _plain(os.path.dirname(path), stat.S_ISDIR)  # made by us, or still what we checked
    import tempfile  # noqa: PLC0415 - only to save a rule: not every cold start

    fd, tmp = tempfile.mkstemp(prefix=".settings.", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _plain(path: str, kind: Callable[[int], bool]) -> None:
    """Refuse a link, or anything but a directory / a regular file, where
    the answers go: a link there would send a rule somewhere else (from a
    review: `sub/.claude` planted as a link to a managed-settings.d
    directory, when the answers lived in the project)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or not kind(st.st_mode):
        raise ValueError(f"{path} is a link or not what settings live in; not changed")
