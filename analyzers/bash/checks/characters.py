"""Character-level checks: bytes and escapes that display or tokenize
differently from how bash reads them."""

from __future__ import annotations

from regexes import regex

from ..ir import ParseStatus
from .base import CheckInput, check
from .ids import CheckId

# patterns the functions below use (module constants: see regexes/)
_QUOTED_DASH_RE = regex(r"(?:^|\s)(?:['\"]+-|-+['\"\\])|(?:^|\s)-[\w-]*['\"\\]")


_CONTROL_RE = regex("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f\ud800-\udfff]")


@check(CheckId.CONTROL_CHARACTERS)
def control_characters(inp: CheckInput) -> str | None:
    """C0/C1 control characters, NUL, and invalid UTF-8.

    Attack: ``\\x1b[2K`` escape sequences rewrite what the approving human
    sees; NUL truncates the command in C-based consumers while the shell
    drops it (``r\\0m``); backspaces (``\\b``) visually erase words.
    """
    m = _CONTROL_RE.search(inp.original)
    if m:
        ch = m.group(0)
        if "\ud800" <= ch <= "\udfff":
            return "invalid UTF-8 in command"
        return f"control character U+{ord(ch):04X}"
    return None


_UNICODE_WS_RE = regex(
    "[\u00a0\u00ad\u061c\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f"
    "\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)


@check(CheckId.UNICODE_WHITESPACE)
def unicode_whitespace(inp: CheckInput) -> str | None:
    """Unicode spaces, zero-width and bidi characters.

    Attack: ``ls\\u00a0-la;rm`` looks like spaces to a human but is one word
    to bash (or the reverse, in other tokenizers); bidi overrides reorder
    text on screen ("Trojan Source").
    """
    m = _UNICODE_WS_RE.search(inp.original)
    if m:
        return f"unicode whitespace or invisible character U+{ord(m.group(0)):04X}"
    return None


_ESCAPED_WS_RE = regex(r"(?<!\\)(?:\\\\)*\\[ \t]")


@check(CheckId.BACKSLASH_ESCAPED_WHITESPACE)
def backslash_escaped_whitespace(inp: CheckInput) -> str | None:
    """A backslash-escaped space or tab outside quotes.

    Attack: ``echo\\ x`` is one word (command ``echo x``) to bash but two to
    a naive splitter; ``cat ~/safe\\ /../.ssh/id_rsa`` confuses prefix-based
    path checks.
    """
    view = inp.views.fully_unquoted
    # a pattern with a backslash in it cannot match text without one (the
    # same for each `in` test before a search below: a scan of the text in
    # C instead of the regex engine at every position)
    if "\\" in view and _ESCAPED_WS_RE.search(view):
        return "backslash-escaped whitespace outside quotes"
    return None


_ESCAPED_OP_RE = regex(r"(?<!\\)(?:\\\\)*\\[;|&<>]")


@check(CheckId.BACKSLASH_ESCAPED_OPERATORS)
def backslash_escaped_operators(inp: CheckInput) -> str | None:
    """``\\;``, ``\\|``, ``\\&``, ``\\<``, ``\\>`` outside quotes.

    Attack: bash passes ``\\;`` as a literal argument, while splitters that
    unescape before splitting see an operator (or the reverse):
    ``cat x \\; rm -rf ~`` is one command to bash.
    """
    view = inp.views.fully_unquoted
    if "\\" not in view:
        return None
    terminators = 0 if inp.legacy else _find_exec_terminators(inp.argvs)
    for m in _ESCAPED_OP_RE.finditer(view):
        standalone = (
            m.group(0) == "\\;"
            and m.start() > 0
            and view[m.start() - 1].isspace()
            and _STANDALONE_END_RE.match(view, m.end()) is not None
        )
        if standalone and terminators > 0:
            # `find . -exec grep -l x {} \;`: the parse gave find a `;` word
            # ending its -exec; bash agrees (the word is `\;` alone).
            terminators -= 1
            continue
        return f"backslash-escaped operator {m.group(0)[-2:]!r}"
    return None


#: what may follow a `\;` word: a blank, an operator, the end
_STANDALONE_END_RE = regex(r"[\s;&|)]|$")


def _find_exec_terminators(argvs: tuple[tuple[str, ...], ...]) -> int:
    """How many ``;`` words end a find -exec/-execdir/-ok clause."""
    count = 0
    for argv in argvs:
        if not argv or argv[0] != "find":
            continue
        inside = False
        for word in argv[1:]:
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                inside = True
            elif word == ";" and inside:
                count += 1
                inside = False
    return count


# Any `#` that does not start a word, except `$#` and `${#name}`.
_MID_WORD_HASH_RE = regex(r"(?<=[^\s;&|()<>])(?<!\$)(?<!\$\{)#")


@check(CheckId.MID_WORD_HASH)
def mid_word_hash(inp: CheckInput) -> str | None:
    """A ``#`` inside a word.

    Attack: bash reads ``x#y`` as one literal word, but tokenizers that start
    a comment at any ``#`` (shell-quote) drop the rest of the line from
    analysis: ``ls x#;rm -rf ~`` hides ``rm`` from them. ``'x'#`` (quote
    directly before) counts too, hence the view that keeps quote chars.
    """
    view = inp.views.unquoted_keep_quote_chars
    m = _MID_WORD_HASH_RE.search(view) if "#" in view else None
    if m:
        return f"'#' in the middle of a word: {view[max(0, m.start() - 8) : m.end() + 8]!r}"
    return None


_ANSI_C_RE = regex(r"\$['\"]")


@check(CheckId.OBFUSCATED_FLAGS)
def obfuscated_flags(inp: CheckInput) -> str | None:
    """Flags built from quotes or escapes, and ANSI-C / locale strings.

    Attack: flag validators compare text; ``rg --p''re=sh``, ``find .
    -e"x"ec``, ``"-"exec`` and ``$'\\x2d\\x2dpre'`` all reach the program as a
    plain flag. Quoting after ``=`` (``--include='*.py'``) is ordinary and
    does not fire.
    """
    if inp.views.ansi_c or _ANSI_C_RE.search(inp.views.unquoted_keep_quote_chars):
        return "ANSI-C or locale quoting ($'...' / $\"...\")"
    if inp.parse.status is ParseStatus.PARSE_UNAVAILABLE:
        if _QUOTED_DASH_RE.search(inp.text):
            return "quotes or escapes inside a flag"
        return None
    for cmd in inp.parse.commands:
        for word in cmd.words[1:]:
            value = word.value
            if value is None or not value.startswith("-") or not word.quoted:
                continue
            flag_raw = word.raw.split("=", 1)[0]
            if any(c in flag_raw for c in "'\"\\$"):
                return f"quotes or escapes inside flag {word.raw[:40]!r}"
    return None
