"""The 23 named security checks, one function each, registered by ID.

Each check reads a :class:`CheckInput` (the command text, its quote views, the
parse and the effective argv of every subcommand) and returns a message when
it fires. Any fired check makes a command ineligible for automatic approval.
"""

from __future__ import annotations

from . import characters, commands, redirection, structure, substitution
from .base import REGISTRY, CheckInput, run_checks
from .commands import ZSH_DANGEROUS_COMMANDS
from .ids import CheckId, Finding
from .substitution import COMMAND_SUBSTITUTION_PATTERNS, SubstitutionPattern

__all__ = [
    "COMMAND_SUBSTITUTION_PATTERNS",
    "REGISTRY",
    "ZSH_DANGEROUS_COMMANDS",
    "CheckId",
    "CheckInput",
    "Finding",
    "SubstitutionPattern",
    "run_checks",
]

# The modules register their checks on import; all 23 must be present.
_MODULES = (characters, commands, redirection, structure, substitution)
if set(REGISTRY) != set(CheckId):  # pragma: no cover - programming error
    raise RuntimeError(f"checks missing: {sorted(set(CheckId) - set(REGISTRY))}")
