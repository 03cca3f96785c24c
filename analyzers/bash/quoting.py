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

from regexes import ASCII, regex
from values import valueclass

# One tokenizer per quoting state; the scan switches between them.
# Unquoted, `$'...'` (ANSI-C) is one token: `\'` inside it does not end it.
_UNQUOTED_RE = regex(r"\$'(?:\\[\s\S]|[^\\'])*'|\\[\s\S]?|'|\"|\n|#|\$|[^\\'\"\n#$]+")
_DOUBLE_RE = regex(r"\\[\s\S]?|\"|\n|[^\\\"\n]+")
_SINGLE_RE = regex(r"'|\n|[^'\n]+")
_WORD_START_BEFORE = frozenset(" \t\n;&|()<>")
_HASH_LINE_RE = regex(r"[ \t]*#")


@valueclass
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
    #: an ANSI-C ``$'...'`` string appears outside other quotes
    ansi_c: bool = False


def extract_quoted_content(command: str) -> QuoteViews:
    """Scan ``command`` once and build the three views and desync facts."""
    wdq: list[str] = []
    unq: list[str] = []
    keep: list[str] = []
    state = "none"  # "none" | "single" | "double"
    desync = False
    quoted_nl_hash = False
    ansi_c = False
    prev = ""  # previous raw character outside any quote
    pos, n = 0, len(command)
    while pos < n:
        if state == "single":
            m = _SINGLE_RE.match(command, pos)
        elif state == "double":
            m = _DOUBLE_RE.match(command, pos)
        else:
            m = _UNQUOTED_RE.match(command, pos)
        assert m is not None  # every tokenizer matches any character
        tok = m.group(0)
        pos = m.end()
        if state != "none":
            close = "'" if state == "single" else '"'
            if tok == close:
                state = "none"
                keep.append(close)
                prev = close
            elif tok == "\n" and _HASH_LINE_RE.match(command, pos):
                quoted_nl_hash = True
            if state == "double" and tok != '"':
                wdq.append(tok)
            continue
        if tok.startswith("$'") and len(tok) > 2:
            keep.append("''")  # quoted content, like '...'
            ansi_c = True
            prev = "'"
            continue
        if tok == "'":
            state = "single"
            keep.append("'")
        elif tok == '"':
            state = "double"
            keep.append('"')
        else:
            if tok == "#" and (not prev or prev in _WORD_START_BEFORE):
                line_end = command.find("\n", pos)
                rest = command[pos : line_end if line_end >= 0 else n]
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
        unterminated=state != "none",
        comment_quote_desync=desync,
        quoted_newline_hash=quoted_nl_hash,
        ansi_c=ansi_c,
    )


# shlex.quote's own test for a word that needs no quotes (shlex itself is not
# imported: it compiles this with re at import, a cost of every cold start)
_NEEDS_QUOTES_RE = regex(r"[^\w@%+=:,./-]", ASCII)


def shell_quote(word: str) -> str:
    """``shlex.quote``: ``word`` as one shell word (a test holds the two
    equal)."""
    if not word:
        return "''"
    if _NEEDS_QUOTES_RE.search(word) is None:
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def shell_join(argv: tuple[str, ...] | list[str]) -> str:
    """``shlex.join``: the words as one command line that splits back to them."""
    return " ".join(shell_quote(word) for word in argv)
