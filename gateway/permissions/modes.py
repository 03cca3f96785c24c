"""Permission modes, Claude Code's five, and what each changes.

    default            ask for whatever no rule allows
    acceptEdits        file edits allowed, and mkdir/touch/mv/cp inside the
                       working directories
    plan               read-only tools only: anything else is denied
    dontAsk            never ask: anything not allowed beforehand is denied
    bypassPermissions  no prompts — but hard limits, sensitive and protected
                       paths, deny and ask rules, and the sandbox still hold

The session may switch itself into plan mode (EnterPlanMode) and, with a
person's approval, back (ExitPlanMode): its own mode, when it has one,
holds over the settings' one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..context import SessionContext
    from ..tools import AnyTool, Subject


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


#: tools that change files or run commands: plan mode never lets them run,
#: whatever their class declares
NEVER_IN_PLAN = frozenset({"Bash", "Edit", "Write", "NotebookEdit", "MultiEdit", "WebFetch"})


def session_mode(value: str | None) -> Mode | None:
    """The mode the session switched itself to (``None``: the settings'
    holds). A value that names no mode is taken as plan — the strictest
    a session can be in — rather than as the settings' mode."""
    if value is None:
        return None
    return Mode.parse(value) or Mode.PLAN


def plan_exempt(tool: AnyTool, subject: Subject | None) -> bool:
    """May plan mode run ``tool`` although it is not read-only? Only if its
    class declares it (never its input), its calls name no command, path
    or domain that rules would see, and it is none of the tools that
    change files or run commands."""
    # the tools are loaded by any session that asks; the settings loader
    # (which a cold `shellgate run` uses) does not
    from ..tools.session_tools import exempt_in_plan_mode  # noqa: PLC0415

    return (exempt_in_plan_mode(tool) and tool.name not in NEVER_IN_PLAN
            and subject is not None and subject.kind == "none")


def start_session_mode(context: SessionContext, mode: Mode) -> None:
    """A session whose settings start it in plan mode is in plan mode by
    its own state too, so that ExitPlanMode can leave it — for the default
    mode, not back into plan mode."""
    if mode is Mode.PLAN and context.mode is None:
        context.mode, context.mode_before = Mode.PLAN.value, Mode.DEFAULT.value
