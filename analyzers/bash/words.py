"""Word-level helpers shared by both parsers: quote removal, ANSI-C decoding,
glob/brace/tilde detection.

Every function here is pure and operates on text. The tree-sitter parser calls
them per word piece; the legacy splitter calls :func:`unquote_word` on whole
words.
"""

from __future__ import annotations

from regexes import DOTALL, regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

#: variables that hold no secrets: printing one is read-only (the
#: environment is not scrubbed where the command runs unsandboxed)
NON_SECRET_VARS = frozenset({"PATH", "HOME", "PWD", "OLDPWD", "SHELL", "USER", "LOGNAME", "LANG",
                             "TERM", "HOSTNAME", "SHLVL", "TZ", "LC_ALL", "EDITOR", "VISUAL"})

#: Characters that trigger pathname expansion when unquoted.
GLOB_CHARS = frozenset("*?[")

# `{a,b}` or `{1..3}`. Used on a "mask" of the word where quoted characters
# are replaced by NUL, so `'{a,b}'` is not a brace expansion but `{'a',b}` is.
# Deliberately loose: bash skips a `}` with no comma before it, so
# `{@'{'0},--output=x}` is one expansion; any `{` .. `,`/`..` .. `}` counts.
_BRACE_RE = regex(r"\{[^\s]*?(?:,|\.\.)[^\s]*?\}")

_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_RE = regex(
    r"\\(?:(?P<simple>[abeEfnrtv\\'\"?])|(?P<oct>[0-7]{1,3})|x(?P<hex>[0-9A-Fa-f]{1,2})"
    r"|u(?P<u4>[0-9A-Fa-f]{1,4})|U(?P<u8>[0-9A-Fa-f]{1,8})|c(?P<ctl>.))",
    DOTALL,
)


def decode_ansi_c(body: str) -> str:
    """Decode the body of a ``$'...'`` string the way bash does.

    Why: ``$'\\x72\\x6d' -rf /`` is ``rm -rf /``; a check that only reads the
    raw text sees no ``rm``. Decoding lets hard limits see through the disguise.
    A NUL (``\\0``, ``\\x00``) ends the string in bash, so it ends it here too.
    """

    def repl(m: re.Match[str]) -> str:
        if (s := m.group("simple")) is not None:
            return _ANSI_SIMPLE[s]
        if (o := m.group("oct")) is not None:
            return chr(int(o, 8) & 0xFF)
        if (h := m.group("hex")) is not None:
            return chr(int(h, 16))
        if (u := m.group("u4") or m.group("u8")) is not None:
            code = int(u, 16)
            return chr(code) if code <= 0x10FFFF else "\ufffd"
        ctl = m.group("ctl")
        return chr(ord(ctl.upper()) & 0x1F) if ctl != "?" else "\x7f"

    decoded = _ANSI_RE.sub(repl, body)
    nul = decoded.find("\0")
    return decoded if nul < 0 else decoded[:nul]


def unescape_unquoted(text: str) -> tuple[str, str]:
    """Remove backslash escapes from an unquoted word fragment.

    Returns ``(value, mask)``: ``mask`` has the same length as ``value`` and
    holds the character itself where it was unquoted, ``\\x00`` where it was
    escaped — the mask is what glob and brace detection look at.
    """
    if "\\" not in text:
        return text, text
    out: list[str] = []
    mask: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            i += 2
            if nxt == "\n":  # line continuation: removed entirely
                continue
            out.append(nxt)
            mask.append("\0")
            continue
        out.append(c)
        mask.append(c)
        i += 1
    return "".join(out), "".join(mask)


_DQ_ESCAPABLE = frozenset('$`"\\\n')


def unescape_double(text: str) -> str:
    """Backslash handling inside double quotes: only ``$ ` " \\`` and newline
    are escapable; any other backslash stays literal."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in _DQ_ESCAPABLE:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def has_glob(mask: str) -> bool:
    return not GLOB_CHARS.isdisjoint(mask)


def has_brace(mask: str) -> bool:
    return "{" in mask and _BRACE_RE.search(mask) is not None


def expand_tilde(value: str, mask: str, home: str | None, cwd: str | None) -> str:
    """Tilde expansion of a word's leading unquoted ``~`` / ``~/...``.

    With ``home`` unknown the ``~`` stays literal; path analysis then treats the
    path as under the (unknown) home directory, never inside the workspace.
    ``~+`` is the working directory; ``~user`` and ``~-`` stay literal.
    """
    if not mask.startswith("~"):
        return value
    slash = value.find("/")
    prefix = value if slash < 0 else value[:slash]
    rest = "" if slash < 0 else value[slash:]
    if prefix == "~" and home is not None:
        return home.rstrip("/") + rest if rest or home == "/" else home
    if prefix == "~+" and cwd is not None:
        return cwd + rest
    return value


_QUOTED_PART_RE = regex(r"'[^']*'|\"(?:\\.|[^\"\\])*\"|\\.", DOTALL)


def unquote_word(raw: str) -> tuple[str, bool, bool, bool]:
    """Quote removal for one word of the legacy splitter.

    Returns ``(value, quoted, glob, brace)``. Handles '…', "…", and backslash
    escapes; ``$'…'`` is decoded. Expansions are not performed (the caller
    decides whether ``$`` makes the word dynamic).
    """
    out: list[str] = []
    mask: list[str] = []
    quoted = False
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "$" and i + 1 < n and raw[i + 1] == "'":
            end = _ansi_end(raw, i + 2)
            decoded = decode_ansi_c(raw[i + 2 : end])
            out.append(decoded)
            mask.append("\0" * len(decoded))
            quoted = True
            i = end + 1
            continue
        if c in "'\"":
            m = _QUOTED_PART_RE.match(raw, i)
            if m is None:  # unterminated: the rest is quoted
                body = raw[i + 1 :]
                i = n
            else:
                body = m.group(0)[1:-1]
                i = m.end()
            text = body if c == "'" else unescape_double(body)
            out.append(text)
            mask.append("\0" * len(text))
            quoted = True
            continue
        if c == "\\" and i + 1 < n:
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
                mask.append("\0")
            quoted = True
            i += 2
            continue
        out.append(c)
        mask.append(c)
        i += 1
    m_str = "".join(mask)
    return "".join(out), quoted, has_glob(m_str), has_brace(m_str)


def _ansi_end(raw: str, start: int) -> int:
    """Index of the closing quote of a ``$'...'`` body starting at ``start``."""
    i, n = start, len(raw)
    while i < n:
        if raw[i] == "\\":
            i += 2
            continue
        if raw[i] == "'":
            return i
        i += 1
    return n
