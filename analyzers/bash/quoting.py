"""Quote extraction: three views of a command with quoted content removed.

Text-level checks must not fire on ``echo '$(not run)'`` but must fire on
``echo "$(run)"`` — command substitution happens inside double quotes. So each
check reads the view that matches what bash would interpret:

``with_double_quotes``
    single-quoted content removed, double-quoted content kept (without the
    quote characters): substitutions and expansions are live here.
``fully_unquoted``
    all quoted content removed: operators, redirections, globs, braces and
    comments are live here.
``unquoted_keep_quote_chars``
    like ``fully_unquoted`` but the quote characters stay, so adjacency such as
    ``'x'#`` (quote directly before ``#``) is still visible.

Backslash escapes are kept in all views (``\\$(`` stays ``\\$(``): a check may
fire on an escaped form, never miss an unescaped one.

The scan knows nothing about comments, exactly like the reference. That is
what makes ``# it's`` desynchronize it; the same scan records the facts the
desync checks need (:attr:`QuoteViews.comment_quote_desync`,
:attr:`QuoteViews.quoted_newline_hash`, :attr:`QuoteViews.unterminated`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN_RE = re.compile(r"\\[\s\S]|'|\"|\n|#|[^\\'\"\n#]+")
_WORD_START_BEFORE = frozenset(" \t\n;&|()<>")
_HASH_LINE_RE = re.compile(r"[ \t]*#")


@dataclass(frozen=True, slots=True)
class QuoteViews:
    with_double_quotes: str
    fully_unquoted: str
    unquoted_keep_quote_chars: str
    #: a quote was still open at the end of the text
    unterminated: bool
    #: an unquoted word-initial ``#`` is followed on its line by a quote char
    comment_quote_desync: bool
    #: a newline inside quotes is followed by a line that starts with ``#``
    quoted_newline_hash: bool


def extract_quoted_content(command: str) -> QuoteViews:
    """Scan ``command`` once and build the three views and desync facts."""
    wdq: list[str] = []
    unq: list[str] = []
    keep: list[str] = []
    in_single = False
    in_double = False
    desync = False
    quoted_nl_hash = False
    prev = ""  # previous raw character outside any quote
    for m in _TOKEN_RE.finditer(command):
        tok = m.group(0)
        if in_single:
            if tok == "'" or (tok.startswith("\\") and tok.endswith("'")):
                # No escapes inside '...': in `\'` the backslash is literal and
                # the quote closes the string.
                in_single = False
                keep.append("'")
                prev = "'"
            elif tok == "\n" and _HASH_LINE_RE.match(command, m.end()):
                quoted_nl_hash = True
            continue
        if in_double:
            if tok == '"':
                in_double = False
                keep.append('"')
                prev = '"'
                continue
            if tok == "\n" and _HASH_LINE_RE.match(command, m.end()):
                quoted_nl_hash = True
            wdq.append(tok)
            continue
        if tok == "'":
            in_single = True
            keep.append("'")
        elif tok == '"':
            in_double = True
            keep.append('"')
        else:
            if tok == "#" and (not prev or prev in _WORD_START_BEFORE):
                line_end = command.find("\n", m.end())
                rest = command[m.end() : line_end if line_end >= 0 else len(command)]
                if "'" in rest or '"' in rest:
                    desync = True
            wdq.append(tok)
            unq.append(tok)
            keep.append(tok)
        prev = tok[-1]
    return QuoteViews(
        with_double_quotes="".join(wdq),
        fully_unquoted="".join(unq),
        unquoted_keep_quote_chars="".join(keep),
        unterminated=in_single or in_double,
        comment_quote_desync=desync,
        quoted_newline_hash=quoted_nl_hash,
    )
