"""Claude Code's command patterns, shared by Bash permission rules and the
sandbox's ``excludedCommands``: exact (``npm test``), the legacy prefix
(``npm run:*``, only at the end; ``npm run`` alone or followed by a space)
and ``*`` wildcards (a single trailing `` *`` keeps the word boundary and
may match nothing: ``ls *`` is ``ls`` and ``ls -la``, never ``lsof``)."""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=2048)
def _compile(content: str) -> tuple[str, re.Pattern[str] | None, str | None]:
    """(kind, regex, literal) for a rule's content.

    Fixed: the content was used as written while the command is stripped,
    so a rule with a stray space (``Bash( rm:*)``, ``Bash(npm test )``) or
    a doubled one before the trailing star (``Bash(ls  *)``) matched
    nothing — a deny that protected nothing; and the prefix form kept the
    backslash of ``\\*`` (``Bash(echo \\*:*)`` never matched ``echo *``).
    """
    content = content.strip()
    if content.endswith(":*") and not content.endswith("\\:*"):
        return "prefix", None, content[:-2].rstrip().replace("\\*", "*")
    stars = [i for i, ch in enumerate(content) if ch == "*" and (i == 0 or content[i - 1] != "\\")]
    if not stars:
        return "exact", None, content.replace("\\*", "*")
    if stars == [len(content) - 1] and content.endswith(" *"):
        head = _literal(content[:-2].rstrip())
        return "wildcard", re.compile(head + "(?: .*)?", re.DOTALL), None
    parts: list[str] = []
    last = 0
    for i in stars:
        parts.append(_literal(content[last:i]))
        parts.append(".*")
        last = i + 1
    parts.append(_literal(content[last:]))
    return "wildcard", re.compile("".join(parts), re.DOTALL), None


def _literal(text: str) -> str:
    return re.escape(text.replace("\\*", "*"))


def command_matches(content: str, command: str) -> bool:
    """Does the rule content match this one command's text?"""
    kind, regex, literal = _compile(content)
    text = command.strip()
    if kind == "prefix":
        assert literal is not None
        return text == literal or text.startswith(literal + " ")
    if kind == "exact":
        return text == literal
    assert regex is not None
    return regex.fullmatch(text) is not None
