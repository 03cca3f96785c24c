"""Stable command prefixes and the permission rules to suggest.

``git commit -m "fix"`` -> prefix ``git commit`` -> ``Bash(git commit:*)``.
No prefix when the second word is a flag (``ls -la``) or a path-ish operand,
and never for a bare shell or wrapper: ``Bash(bash:*)`` or ``Bash(sudo:*)``
would allow every command there is.
"""

from __future__ import annotations

from regexes import regex

from .quoting import shell_join
from .wrappers import BARE_WRAPPERS

#: Rules suggested for one compound command are capped; past the cap a
#: prompt should describe "similar commands" instead of listing them.
# patterns the functions below use (module constants: see regexes/)
_PLAIN_NAME_RE = regex(r"[A-Za-z0-9._+-]+")


MAX_SUGGESTED_RULES = 5

_SUBCOMMAND_RE = regex(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
#: Commands whose second word is an operand (a file, a pattern), never a
#: subcommand: `rm a b` must not suggest `Bash(rm a:*)`.
_NO_SUBCOMMANDS = frozenset(
    "rm cp mv ln mkdir rmdir touch chmod chown chgrp cat head tail less more ls tree du wc "
    "stat file grep egrep fgrep rg find sed awk sort uniq cut tr diff cmp echo printf tee "
    "xxd od base64 md5sum sha256sum realpath readlink basename dirname which type test".split()
)
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
    if name in _NO_PREFIX or "/" in name or not _PLAIN_NAME_RE.fullmatch(name):
        return None
    if name in _NO_SUBCOMMANDS:
        return None
    if not _SUBCOMMAND_RE.match(second):
        return None
    return f"{name} {second}"


def suggest_rule(argv: tuple[str, ...], text: str, *, prefix: bool = True) -> str:
    """``Bash(prefix:*)`` when there is a stable prefix, else an exact rule.

    ``prefix=False`` (the command runs under sudo, xargs, or with an unsafe
    environment assignment) always gives the exact rule of the source text:
    ``Bash(npm run:*)`` is not a fair rule for ``sudo npm run build``.
    """
    found = command_prefix(argv) if prefix else None
    if found is not None:
        return f"Bash({found}:*)"
    exact = shell_join(argv) if argv and prefix else text.strip()
    return f"Bash({exact})"
