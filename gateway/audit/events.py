"""The audit log's one vocabulary: the event names the pipeline sends and
the fields each carries.

Every event is one JSON line. ``ts`` (UTC, ISO-8601, microseconds, ``Z``)
and ``event`` come first; then, when there is one, the ids every event of a
call shares (``session_id``, ``call_id``, ``tool_use_id``); then the event's
own fields; then ``chain`` and ``prev`` (see :mod:`gateway.audit.chain`).

=====================  ==========================================================
event                  fields
=====================  ==========================================================
``tool.requested``     ``tool``, ``input`` (the call's input, redacted and cut)
``tool.validated``     ``ok`` (bool), ``error`` (the validation message, or null)
``permission.decided`` ``tool``, ``decision`` (``allow`` | ``ask`` | ``deny``),
                       ``source``, ``rule``, ``reason``, ``checks`` (check IDs,
                       ints), ``mode``, ``hard_limit`` (bool), ``subject``
                       (strings: what was judged — subcommands, paths)
``sandbox.started``    ``backend``, ``profile``
``sandbox.reported``   ``lines`` (what the post-run guards found: the
                       ``shellgate:`` lines of the run, escaped),
                       ``tampered`` (paths they undid or renamed aside)
``tool.completed``     ``tool``, ``outcome``, ``is_error``, ``exit_code``,
                       ``duration_ms``, ``bytes``, ``truncated``
``internal_error``     ``stage``, ``error``
``settings.loaded``    ``sources``, ``problems``
``hook.ran``           ``hook_event``, ``tool``, ``command``, ``source``,
                       ``exit_code``, ``timed_out``, ``duration_ms``,
                       ``decision``, ``block``, ``updated_input``, ``error``
``hook.input_updated`` ``tool``, ``input`` (what a hook had run instead)
``task.ended``         ``task_id``, ``status``, ``exit_code``, ``duration_ms``,
                       ``reason``
=====================  ==========================================================

The table is the contract between the pipeline (which decides what to send)
and ``shellgate audit`` (which reads it). The sink does not enforce it: an
unknown event or an extra field is written as given (redacted and bounded
like everything else) — an audit log that drops what it does not recognise
would hide exactly the events a newer pipeline added.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "DECISIONS",
    "EVENTS",
    "HOOK_INPUT_UPDATED",
    "HOOK_RAN",
    "IDS",
    "INTERNAL_ERROR",
    "PERMISSION_DECIDED",
    "SANDBOX_REPORTED",
    "SANDBOX_STARTED",
    "SETTINGS_LOADED",
    "TASK_ENDED",
    "TOOL_COMPLETED",
    "TOOL_REQUESTED",
    "TOOL_VALIDATED",
]

TOOL_REQUESTED: Final = "tool.requested"
TOOL_VALIDATED: Final = "tool.validated"
PERMISSION_DECIDED: Final = "permission.decided"
SANDBOX_STARTED: Final = "sandbox.started"
SANDBOX_REPORTED: Final = "sandbox.reported"
TOOL_COMPLETED: Final = "tool.completed"
INTERNAL_ERROR: Final = "internal_error"
SETTINGS_LOADED: Final = "settings.loaded"
HOOK_RAN: Final = "hook.ran"
HOOK_INPUT_UPDATED: Final = "hook.input_updated"
TASK_ENDED: Final = "task.ended"

#: every known event and its fields, in the order they are written
EVENTS: Final[dict[str, tuple[str, ...]]] = {
    TOOL_REQUESTED: ("tool", "input"),
    TOOL_VALIDATED: ("ok", "error"),
    PERMISSION_DECIDED: ("tool", "decision", "source", "rule", "reason", "checks", "mode",
                         "hard_limit", "subject"),
    SANDBOX_STARTED: ("backend", "profile"),
    SANDBOX_REPORTED: ("lines", "tampered"),
    TOOL_COMPLETED: ("tool", "outcome", "is_error", "exit_code", "duration_ms", "bytes",
                     "truncated"),
    INTERNAL_ERROR: ("stage", "error"),
    SETTINGS_LOADED: ("sources", "problems"),
    HOOK_RAN: ("hook_event", "tool", "command", "source", "exit_code", "timed_out",
               "duration_ms", "decision", "block", "updated_input", "error"),
    HOOK_INPUT_UPDATED: ("tool", "input"),
    TASK_ENDED: ("task_id", "status", "exit_code", "duration_ms", "reason"),
}

#: the ids that follow ``ts`` and ``event`` on every line that has them
IDS: Final = ("session_id", "call_id", "tool_use_id")

#: the values of ``permission.decided``'s ``decision``, loosest first
DECISIONS: Final = ("allow", "ask", "deny")
