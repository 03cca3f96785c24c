"""The gateway's permission decision and the values around it.

``Decision`` is ordered: ``max()`` of several is the strictest (codex's
execpolicy). Denials are values, never exceptions."""

from __future__ import annotations

from enum import IntEnum

from values import valueclass


class Decision(IntEnum):
    ALLOW = 0
    ASK = 1
    DENY = 2

    def __str__(self) -> str:
        return self.name.lower()


@valueclass
class PermissionResult:
    """A decision and everything that explains it: who decided (``source``:
    ``tool``, ``analyzer``, ``default``, ``approver``, later a settings
    file), the rule that matched, the check IDs that fired, and what would
    change it (``hint``)."""

    decision: Decision
    source: str
    reason: str
    rule: str | None = None
    check_ids: tuple[int, ...] = ()
    hint: str = ""
    #: rules a person could save to allow this next time (Bash's prefixes)
    suggestions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    #: an ask only a person may answer: no rule, mode or hook lifts it (a
    #: sensitive path's "ask" level, running without the sandbox)
    needs_person: bool = False
    #: may allow rules lift the tool's ask? Not for a Bash command the
    #: analyzer could not prove (a check fired, the parse was too complex):
    #: a rule names a command, and such a command may be another one
    rules_apply: bool = True
    #: the permission mode in force when it was decided (for the audit log)
    mode: str = ""

    def explain(self) -> str:
        """One paragraph for a denial: the reason, the checks, the rule and
        its source, and what would change it."""
        reason = self.reason.rstrip(".")
        parts = [reason[:1].upper() + reason[1:] + "."]
        if self.check_ids:
            parts.append("Checks: " + ", ".join(f"#{c}" for c in self.check_ids) + ".")
        parts.append(f"Decided by: {self.source}" + (f" (rule {self.rule})" if self.rule else "")
                     + ".")
        if self.hint:
            hint = self.hint.rstrip(".")
            parts.append(hint[:1].upper() + hint[1:] + ".")
        return " ".join(parts)


@valueclass
class Validation:
    """What a tool's ``validate_input`` answers: valid; invalid (an error
    result the model can correct, with a stable ``code``); or ``ask`` — the
    input is well formed but needs a person (a dotenv file for Read)."""

    ok: bool = True
    message: str = ""
    code: int = 0
    ask: bool = False


VALID = Validation()


def invalid(message: str, code: int = 1) -> Validation:
    return Validation(False, message, code)


def needs_person(message: str) -> Validation:
    return Validation(False, message, 0, ask=True)
