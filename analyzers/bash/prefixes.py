"""Stable command prefixes and the permission rules to suggest.

``git commit -m "fix"`` -> prefix ``git commit`` -> ``Bash(git commit:*)``.
No prefix when the second word is a flag (``ls -la``) or a path-ish operand,
and never for a bare shell or wrapper: ``Bash(bash:*)`` or ``Bash(sudo:*)``
would allow every command there is.
"""

from __future__ import annotations

import re
import shlex

from .wrappers import BARE_WRAPPERS

#: Rules suggested for one compound command are capped; past the cap a
#: prompt should describe "similar commands" instead of listing them.
MAX_SUGGESTED_RULES = 5

_SUBCOMMAND_RE = re.compile(r"^[a-z][a-z0-9]*(?:[-_:][a-z0-9]+)*$")
_NO_PREFIX = BARE_WRAPPERS | frozenset(
    {
        "python",
        "python3",
        "node",
        "perl",
        "ruby",
        "php",
        "lua",
        "deno",
        "bun",
        "awk",
        "gawk",
        "busybox",
        "fish",
        "pwsh",
        "powershell",
        "osascript",
        "tclsh",
        "expect",
    }
)


def command_prefix(argv: tuple[str, ...]) -> str | None:
    """The stable two-word prefix of an effective argv, or ``None``."""
    if len(argv) < 2:
        return None
    name, second = argv[0], argv[1]
    if name in _NO_PREFIX or "/" in name or not re.fullmatch(r"[A-Za-z0-9._+-]+", name):
        return None
    if not _SUBCOMMAND_RE.match(second):
        return None
    return f"{name} {second}"


def suggest_rule(argv: tuple[str, ...], text: str) -> str:
    """``Bash(prefix:*)`` when there is a prefix, else an exact rule."""
    prefix = command_prefix(argv)
    if prefix is not None:
        return f"Bash({prefix}:*)"
    exact = shlex.join(argv) if argv else text.strip()
    return f"Bash({exact})"
