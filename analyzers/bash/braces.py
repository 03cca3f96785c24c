"""Brace expansion, emulated exactly for the forms people type.

``echo {1..3}``, ``ls src/{a,b}.py`` and ``mkdir -p x/{bin,lib}`` asked
because one word becomes several after the checks ran (check 16): an
attacker writes ``git diff {@'{'0},--output=/tmp/pwned}`` and gets
``--output=`` past every option table. Expanding the word here, before any
command table sees it, turns the hidden option back into a word that is
judged like any other. Only words bash would expand the same way under any
setting are expanded:

- the word is unquoted, plain characters only (no ``$``, quotes, escapes,
  globs, ``~``: those interact with the expansion in ways not modelled);
- groups are not nested; a ``}`` without its ``{`` is refused;
- a group is a comma list, or a sequence ``N..M[..K]`` of integers without
  leading zeros, or of letters of one case (``{Z..a}`` walks through
  ``[ \\ ] ^ _ `` ` `` and is refused);
- at most :data:`MAX_BRACE_WORDS` words.

Anything else returns ``None`` and the word keeps asking. The emulation is
checked against the installed bash by ``tests/analyzers/test_braces.py``.
"""

from __future__ import annotations

from regexes import regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: the most words one brace word may expand to before it is refused
MAX_BRACE_WORDS = 256

_PLAIN_RE = regex(r"[A-Za-z0-9_./+:=@%,{}-]+")
_SEQUENCE_RE = regex(
    r"(?:(?P<n1>0|[1-9][0-9]{0,4})\.\.(?P<n2>0|[1-9][0-9]{0,4})"
    r"|(?P<l1>[a-z])\.\.(?P<l2>[a-z])|(?P<u1>[A-Z])\.\.(?P<u2>[A-Z]))"
    r"(?:\.\.(?P<step>[1-9][0-9]{0,3}))?"
)


def expand_braces(word: str) -> tuple[str, ...] | None:
    """The words bash makes of the unquoted ``word`` by brace expansion, or
    ``None`` when the word is outside the emulated forms."""
    if not _PLAIN_RE.fullmatch(word):
        return None
    parts: list[tuple[str, ...]] = []
    literal_start = i = 0
    while i < len(word):
        c = word[i]
        if c == "}":
            return None
        if c != "{":
            i += 1
            continue
        end = word.find("}", i)
        if end < 0:
            return None
        alternatives = _group(word[i + 1 : end])
        if alternatives is None:
            return None
        parts.append((word[literal_start:i],))
        parts.append(alternatives)
        i = literal_start = end + 1
    parts.append((word[literal_start:],))
    words = [""]
    for alternatives in parts:
        words = [w + a for w in words for a in alternatives]
        if len(words) > MAX_BRACE_WORDS:
            return None
    # bash removes a word the expansion left empty (`{,}` alone is nothing)
    return tuple(w for w in words if w)


def _group(body: str) -> tuple[str, ...] | None:
    if "{" in body:
        return None  # nested groups
    if "," in body:
        return tuple(body.split(","))
    m = _SEQUENCE_RE.fullmatch(body)
    if m is None:
        return None  # `{a}` and malformed sequences stay literal in bash
    step = int(m["step"] or 1)
    if m["n1"] is not None:
        return _steps(int(m["n1"]), int(m["n2"]), step, str)
    first, last = (m["l1"], m["l2"]) if m["l1"] is not None else (m["u1"], m["u2"])
    return _steps(ord(first), ord(last), step, chr)


def _steps(first: int, last: int, step: int, show: Callable[[int], str]) -> tuple[str, ...] | None:
    if abs(last - first) // step + 1 > MAX_BRACE_WORDS:
        return None
    direction = step if last >= first else -step
    return tuple(show(v) for v in range(first, last + (1 if direction > 0 else -1), direction))
