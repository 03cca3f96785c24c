"""What every check reads, and the registry the checks add themselves to."""

from __future__ import annotations

from values import valueclass

from ..ir import ParseResult, ParseStatus
from ..quoting import QuoteViews
from .ids import CheckId, Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


@valueclass
class CheckInput:
    """The facts a check may look at.

    ``text`` is the command as analyzed (NUL bytes and line continuations
    removed); ``original`` is what the caller passed. ``argvs`` are the
    effective argv of every subcommand after wrappers and safe environment
    assignments were stripped, including payloads of ``bash -c``.
    """

    text: str
    original: str
    views: QuoteViews
    parse: ParseResult
    argvs: tuple[tuple[str, ...], ...]

    @property
    def legacy(self) -> bool:
        return self.parse.status is ParseStatus.PARSE_UNAVAILABLE


if TYPE_CHECKING:
    CheckFn = Callable[[CheckInput], str | None]

#: Every check by ID; filled by :func:`check` at import time (run in ID order).
REGISTRY: dict[CheckId, CheckFn] = {}


def check(check_id: CheckId) -> Callable[[CheckFn], CheckFn]:
    """Register a check function. It returns a message when it fires."""

    def register(fn: CheckFn) -> CheckFn:
        if check_id in REGISTRY:  # pragma: no cover - programming error
            raise RuntimeError(f"check {check_id!r} registered twice")
        REGISTRY[check_id] = fn
        return fn

    return register


def run_checks(inp: CheckInput) -> tuple[Finding, ...]:
    """Run all 23 checks; every one that fires becomes a :class:`Finding`."""
    if len(_ORDER) != len(REGISTRY):
        _ORDER[:] = sorted(REGISTRY.items())
    findings: list[Finding] = []
    for check_id, run in _ORDER:
        message = run(inp)
        if message:
            findings.append(Finding(check_id, message))
    return tuple(findings)


#: the registry in ID order, sorted once it is filled (the checks register
#: at import; one more registered later sorts it again)
_ORDER: list[tuple[CheckId, CheckFn]] = []
