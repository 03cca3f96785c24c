"""Small helpers the verbs share."""

from __future__ import annotations

import os


def abs_dir(value: str | None) -> str:
    return os.path.abspath(value) if value else os.getcwd()


def home() -> str:
    return os.path.expanduser("~")


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:500]


def settings_flag(path: str | None) -> str | None:
    """A `--settings` file, refused (a usage error, one line) when it cannot
    be read as a JSON object: the user named it for what it says, and a
    run without its rules and sandbox narrowing would lose them silently.
    (Mistakes inside a readable file are said and cost only their key.)"""
    if path is None:
        return None
    import json  # noqa: PLC0415 - only with a settings file

    from ..errors import UsageError  # noqa: PLC0415

    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(1 << 20).decode("utf-8-sig") or "{}")
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageError(f"cannot read settings {path!r}: {one_line(exc)}") from None
    if not isinstance(data, dict):
        raise UsageError(f"cannot read settings {path!r}: not a JSON object")
    return path
