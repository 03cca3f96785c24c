"""Small helpers the verbs share."""

from __future__ import annotations

import os


def abs_dir(value: str | None) -> str:
    return os.path.abspath(value) if value else os.getcwd()


def home() -> str:
    return os.path.expanduser("~")


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:500]
