"""Stable numeric IDs of the 23 named security checks.

The numbers are the reference's (BASH_SECURITY_CHECK_IDS) and never change:
audit logs and telemetry record the number, not a message that may evolve.
"""

from __future__ import annotations

from values import valueclass

# the enum module costs a cold start 3.5 ms (values/choices.py); type
# checkers see it
TYPE_CHECKING = False
if TYPE_CHECKING:
    from enum import IntEnum
else:
    from values import IntEnum


class CheckId(IntEnum):
    INCOMPLETE_COMMANDS = 1
    JQ_SYSTEM_FUNCTION = 2
    JQ_FILE_ARGUMENTS = 3
    OBFUSCATED_FLAGS = 4
    SHELL_METACHARACTERS = 5
    DANGEROUS_VARIABLES = 6
    NEWLINES = 7
    DANGEROUS_PATTERNS_COMMAND_SUBSTITUTION = 8
    DANGEROUS_PATTERNS_INPUT_REDIRECTION = 9
    DANGEROUS_PATTERNS_OUTPUT_REDIRECTION = 10
    IFS_INJECTION = 11
    GIT_COMMIT_SUBSTITUTION = 12
    PROC_ENVIRON_ACCESS = 13
    MALFORMED_TOKEN_INJECTION = 14
    BACKSLASH_ESCAPED_WHITESPACE = 15
    BRACE_EXPANSION = 16
    CONTROL_CHARACTERS = 17
    UNICODE_WHITESPACE = 18
    MID_WORD_HASH = 19
    ZSH_DANGEROUS_COMMANDS = 20
    BACKSLASH_ESCAPED_OPERATORS = 21
    COMMENT_QUOTE_DESYNC = 22
    QUOTED_NEWLINE = 23


@valueclass
class Finding:
    """One fired check: its ID and a message naming what was seen."""

    check: CheckId
    message: str

    @property
    def id(self) -> int:
        return int(self.check)

    @property
    def name(self) -> str:
        return self.check.name

    def __str__(self) -> str:
        return f"[{self.id} {self.name}] {self.message}"
