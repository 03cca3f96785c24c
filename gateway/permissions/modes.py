"""Permission modes, Claude Code's five, and what each changes.

    default            ask for whatever no rule allows
    acceptEdits        file edits allowed, and mkdir/touch/mv/cp inside the
                       working directories
    plan               read-only tools only: anything else is denied
    dontAsk            never ask: anything not allowed beforehand is denied
    bypassPermissions  no prompts — but hard limits, sensitive and protected
                       paths, deny and ask rules, and the sandbox still hold
"""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    DONT_ASK = "dontAsk"
    BYPASS = "bypassPermissions"

    @classmethod
    def parse(cls, value: str) -> Mode | None:
        for mode in cls:
            if mode.value.lower() == value.strip().lower():
                return mode
        return None


MODE_NAMES = ", ".join(m.value for m in Mode)

#: commands acceptEdits allows when every path they name is inside the
#: working directories (Claude Code's list is the same four plus rm and
#: sed; removing is not an edit here, and sed has its own analysis)
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp"})
