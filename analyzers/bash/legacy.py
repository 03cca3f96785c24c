"""The legacy splitter: regex tokenization when tree-sitter is unavailable.

It produces the same IR as the tree-sitter parser but understands less: any
``$``-expansion or backtick makes a word dynamic, control-flow keywords,
here-documents and unbalanced quotes are recorded as reasons (which make the
command ineligible for automatic approval). All 23 checks still run on the
text, several of them in their stricter legacy form.
"""

from __future__ import annotations

from regexes import VERBOSE, regex

from .ir import Assignment, ParseResult, ParseStatus, Redirect, SimpleCommand, Word
from .quoting import extract_quoted_content
from .words import expand_tilde, unquote_word

# patterns the functions below use (module constants: see regexes/)
_COMMENT_CONTINUATION_RE = regex(r"#[^\n]*\\\n")
_EXPANSION_START_RE = regex(r"\$[({\[]|`|[<>]\(")
#: a `$` followed by what starts no parameter, expansion or substitution
_LONE_DOLLAR_RE = regex(r"\$(?![A-Za-z_0-9{(\[@*#?$!-])")
_FD_DIGITS_RE = regex(r"\d+")
_LINE_CONTINUATION_RE = regex(r"(?<!\\)((?:\\\\)*)\\\n")
_SINGLE_QUOTED_RE = regex(r"'[^']*'")
_SURROGATE_RE = regex("[\ud800-\udfff]")


_TOKEN_RE = regex(
    r"""
    (?P<ws>[ \t]+)
  | (?P<nl>\n)
  | (?P<comment>\#[^\n]*)
  | (?P<op>&&|\|\||\|&|;;|[;&|()])
  | (?P<redir>(?:\d+|\{\w+\})?(?:>>|>&-?|>\||<<<|<<-|<<|<&-?|<>|&>>|&>|>|<))
  | (?P<word>(?:[^\s;&|()<>'"\\$`]|\\[\s\S]|'[^']*'|"(?:\\[\s\S]|[^"\\])*"|\$'(?:\\[\s\S]|[^'\\])*'
              |\$|`[^`]*`)+)
  | (?P<bad>[\s\S])
    """,
    VERBOSE,
)
_DYNAMIC_RE = regex(r"\$[\w{(\[@*#?$!-]|`")
_ASSIGN_RE = regex(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_KEYWORDS = frozenset(
    {
        "if",
        "then",
        "elif",
        "else",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "function",
        "select",
        "[[",
        "]]",
        "coproc",
    }
)


_HOME_RE = regex(r"\$(?:HOME\b|\{HOME\})")


def _word(raw: str, home: str | None, cwd: str | None, reasons: list[str]) -> Word:
    if home is not None and "HOME" in raw and "'" not in raw:
        # $HOME is the one variable the legacy splitter resolves, so that
        # `rm -rf $HOME` still meets its hard limit.
        raw = _HOME_RE.sub(lambda _: home, raw)
    live = _SINGLE_QUOTED_RE.sub("", raw)
    if _DYNAMIC_RE.search(live):
        reasons.append(f"expansion in {raw[:40]!r} (legacy parser)")
        return Word(raw, None, True)
    value, quoted, glob, brace = unquote_word(raw)
    if raw.startswith("~"):
        value = expand_tilde(value, value, home, cwd)
    return Word(raw, value, quoted, glob, brace)


def parse_legacy(
    command: str,
    *,
    home: str | None = None,
    cwd: str | None = None,
    variables: dict[str, str] | None = None,
) -> ParseResult:
    """The legacy splitter: any expansion makes a word dynamic, so known
    ``variables`` are not used here."""
    reasons: list[str] = []
    text = command.replace("\0", "")
    if text != command:
        reasons.append("NUL byte in command")
    if _COMMENT_CONTINUATION_RE.search(text):
        # bash ends a comment at the newline; joining the lines first made
        # `ls # \<newline>cat /etc/shadow` one comment (from a review)
        reasons.append("a line continuation after a '#' (legacy parser)")
    text = _LINE_CONTINUATION_RE.sub(r"\1", text)
    # The regex tokens below cannot follow `$(...)` nesting; any substitution
    # outside single quotes makes the whole line unanalyzable here.
    views = extract_quoted_content(text)
    if _EXPANSION_START_RE.search(views.with_double_quotes):
        reasons.append("substitution (legacy parser)")
    if _LONE_DOLLAR_RE.search(views.with_double_quotes):
        # `g=$=`, `echo $=[`: a `$` that starts no expansion is literal to
        # bash and a syntax error to tree-sitter; read as text here, the
        # legacy reading allowed what tree-sitter does not (atheris)
        reasons.append("a '$' that starts no expansion (legacy parser)")
    if "((" in views.fully_unquoted:
        reasons.append("arithmetic command (( )) (legacy parser)")
    if _SURROGATE_RE.search(text):
        reasons.append("invalid UTF-8 in command")
    commands: list[SimpleCommand] = []
    words: list[Word] = []
    assignments: list[Assignment] = []
    redirects: list[Redirect] = []
    pending_redirect: tuple[str, int | None] | None = None
    op: str | None = None
    scope: list[int] = []
    next_scope = 0
    start = 0
    #: the last thing read closed a subshell: `(ls); x` has a command before `;`
    closed_group = False
    #: the last thing read opened one: `()` holds no command
    opened_group = False

    def flush(end: int, next_op: str | None) -> None:
        nonlocal words, assignments, redirects, op, start
        bang = bool(words) and words[0].value == "!"
        if words and words[0].value in ("{", "}", "!"):
            if words[0].value != "!":
                reasons.append("command group (legacy parser)")
            words = words[1:]
        if bang and op in ("|", "|&"):
            # bash refuses `a | ! b` (a syntax error); tree-sitter's reading
            # is not analyzed, nor is this one
            reasons.append("'!' after '|' (legacy parser)")
        if bang and not (words or assignments or redirects):
            # `ls; !` runs an empty negated pipeline to bash and is an error
            # to tree-sitter; read as nothing, it made `!` allowed (atheris)
            reasons.append("a `!` with no command after it (legacy parser)")
        if words or assignments or redirects:
            if words and words[0].value in _KEYWORDS:
                reasons.append(f"control flow {words[0].value!r} (legacy parser)")
            commands.append(
                SimpleCommand(
                    tuple(words),
                    tuple(assignments),
                    tuple(redirects),
                    text[start:end].strip(),
                    op,
                    tuple(scope),
                )
            )
        words, assignments, redirects = [], [], []
        op = next_op
        start = end

    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        tok = m.group(0)
        if kind in ("ws", "comment"):
            continue
        after_group, closed_group = closed_group, False
        after_open, opened_group = opened_group, False
        if kind == "bad":
            reasons.append(f"unparsable character {tok!r} (legacy parser)")
            continue
        if pending_redirect is not None and kind != "word":
            reasons.append("redirection without a target")
            pending_redirect = None
        if kind == "nl":
            flush(m.start(), ";")
        elif kind == "op":
            if tok == "(":
                if words or assignments or redirects:
                    # `ls (echo)` is a syntax error to bash (`f ()` a function):
                    # read as `ls; (echo)` it was allowed (found by the fuzzer)
                    reasons.append("'(' after a word (legacy parser)")
                next_scope += 1
                scope.append(next_scope)
                flush(m.end(), op)
                opened_group = True
            elif tok == ")":
                if after_open:
                    # `()`, `():`: an empty subshell is a syntax error to
                    # bash; read as nothing, `():` was allowed (atheris)
                    reasons.append("'( )' with no command in it (legacy parser)")
                flush(m.start(), ";")
                closed_group = True
                if scope:
                    scope.pop()
                else:
                    reasons.append("unbalanced ')'")
            else:
                if tok == ";;":
                    reasons.append("';;' outside case")
                if not (words or assignments or redirects or after_group):
                    # `ls;&`, `: | &`, `ls & &`: an operator with no command
                    # before it is a syntax error to bash and to tree-sitter;
                    # read as nothing, `:;&` was allowed (found by atheris)
                    reasons.append(f"{tok!r} with no command before it (legacy parser)")
                flush(m.start(), tok)
                start = m.end()
        elif kind == "redir":
            fd_m = _FD_DIGITS_RE.match(tok)
            op_text = tok[fd_m.end() :] if fd_m else tok
            if op_text.startswith("{"):
                reasons.append("named file descriptor")
                op_text = op_text[op_text.index("}") + 1 :]
            fd = int(fd_m.group(0)) if fd_m else None
            if op_text in (">&-", "<&-"):
                redirects.append(Redirect(op_text, None, fd))
            elif op_text in ("<<", "<<-"):
                reasons.append("here-document (legacy parser)")
                pending_redirect = (op_text, fd)
            else:
                pending_redirect = (op_text, fd)
        else:  # word
            if pending_redirect is not None:
                r_op, fd = pending_redirect
                pending_redirect = None
                target = _word(tok, home, cwd, reasons)
                redirects.append(
                    Redirect(r_op, None if r_op.startswith("<<") and r_op != "<<<" else target, fd)
                )
                continue
            if not words and _ASSIGN_RE.match(tok):
                name, _, value = tok.partition("=")
                append = name.endswith("+")
                assignments.append(
                    Assignment(name.rstrip("+"), _word(value, home, cwd, reasons), append)
                )
                continue
            words.append(_word(tok, home, cwd, reasons))
    if pending_redirect is not None:
        reasons.append("redirection without a target")
    if not (words or assignments or redirects) and op in ("|", "|&", "&&", "||"):
        # `:|&`: a pipe or a list with nothing after it is incomplete to
        # bash (which reads on) and an error to tree-sitter
        reasons.append(f"{op!r} with no command after it (legacy parser)")
    flush(len(text), None)
    if scope:
        reasons.append("unbalanced '('")
    return ParseResult(
        ParseStatus.PARSE_UNAVAILABLE, tuple(commands), tuple(dict.fromkeys(reasons)), text
    )
