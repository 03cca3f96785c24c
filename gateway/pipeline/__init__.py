"""One ``tool_use`` in, one ``tool_result`` out: :meth:`Pipeline.run` takes
every call through the eight stages and never raises. A bug anywhere is an
error result plus an ``internal_error`` event, and whatever was not proven
safe did not run."""

from __future__ import annotations

from .core import Pipeline
from .judge import Judgement, judge
from .results import (
    HARD_CAP_CHARS,
    MESSAGE_BUDGET_CHARS,
    classify_tool_error,
    fit_message,
    limit_result,
    persist_whole,
)

__all__ = [
    "HARD_CAP_CHARS",
    "MESSAGE_BUDGET_CHARS",
    "Judgement",
    "Pipeline",
    "classify_tool_error",
    "fit_message",
    "judge",
    "limit_result",
    "persist_whole",
]
