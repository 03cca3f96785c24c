"""The intermediate representation the parsers produce.

A command line becomes a flat tuple of :class:`SimpleCommand` values, in source
order, each with its words already unquoted. Both the tree-sitter parser and the
legacy splitter produce this IR so everything downstream has one shape to read.
"""

from __future__ import annotations

from values import valueclass

# the enum module costs a cold start 3.5 ms (values/choices.py); type
# checkers see it
TYPE_CHECKING = False
if TYPE_CHECKING:
    from enum import StrEnum
else:
    from values import StrEnum


class ParseStatus(StrEnum):
    """How far the structure of a command was understood.

    ``simple``: every word has a static value; the command is a list of simple
    commands joined by ``&&``, ``||``, ``;``, ``|``, ``&``, subshells or groups.
    ``too-complex``: something that cannot be resolved statically (substitution,
    unresolved expansion, control flow, syntax error). Never read-only.
    ``parse-unavailable``: tree-sitter is missing; the legacy splitter was used.
    """

    SIMPLE = "simple"
    TOO_COMPLEX = "too-complex"
    PARSE_UNAVAILABLE = "parse-unavailable"


@valueclass
class Word:
    """One shell word after quote removal.

    ``value`` is ``None`` when the word contains an expansion whose value is not
    statically known (``$X``, ``$(...)``, ``${...}``). ``glob`` marks an unquoted
    ``*``, ``?`` or ``[`` (pathname expansion may turn it into many words);
    ``brace`` marks unquoted ``{a,b}``/``{1..3}`` (one word becomes several).
    ``quoted`` is true when any part of the word was quoted or escaped.
    ``pipe`` marks a word that is one ``<(…)`` process substitution: a
    ``/dev/fd/N`` path to the output of commands analyzed on their own.
    """

    raw: str
    value: str | None
    quoted: bool = False
    glob: bool = False
    brace: bool = False
    pipe: bool = False

    @property
    def is_static(self) -> bool:
        return self.value is not None and not self.brace


@valueclass
class Assignment:
    """``NAME=value`` (or ``NAME+=value``) written before a command or alone."""

    name: str
    value: Word
    append: bool = False


@valueclass
class Redirect:
    """One redirection: ``op`` is the operator as written (``>``, ``>>``, ``<``,
    ``&>``, ``>&``, ``<&``, ``>|``, ``<<``, ``<<<`` ...), ``fd`` the explicit
    descriptor if any, ``target`` the file or descriptor word (``None`` for a
    here-document, whose body is in ``heredoc``)."""

    op: str
    target: Word | None
    fd: int | None = None
    heredoc: str | None = None
    heredoc_quoted: bool = False

    @property
    def is_output(self) -> bool:
        return ">" in self.op

    @property
    def is_fd_dup(self) -> bool:
        """``2>&1``, ``>&2``, ``<&0``, ``>&-``: duplicates or closes a descriptor."""
        if self.op not in (">&", "<&"):
            return False
        value = self.target.value if self.target else None
        return value is not None and (value.isdigit() or value == "-")


@valueclass
class SimpleCommand:
    """One simple command: assignments, words and redirects, in source order.

    ``op`` is the operator that joins this command to the previous one
    (``None`` for the first), one of ``&&``, ``||``, ``;``, ``|``, ``|&``, ``&``.
    ``scope`` counts the subshell nesting so that ``(cd x) && ls`` does not move
    the working directory of ``ls``. ``nested`` is set for commands found inside
    a substitution or a control-flow body (collected only for hard limits).
    """

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    text: str = ""
    op: str | None = None
    scope: tuple[int, ...] = ()
    nested: bool = False
    #: inside a ``<(…)``: runs beside the command reading it, its output
    #: goes to that command, never down the surrounding pipe
    substituted: bool = False

    @property
    def argv(self) -> tuple[str, ...]:
        """Static argv; dynamic words appear as the empty string."""
        return tuple(w.value if w.value is not None else "" for w in self.words)

    @property
    def name(self) -> str | None:
        if not self.words:
            return None
        return self.words[0].value


@valueclass
class ParseResult:
    """What a parser produced: status, best-effort commands and why.

    ``commands`` is always filled as far as the parser got, even when the status
    is ``too-complex``: hard limits (``rm -rf /`` inside ``$(...)``) are looked
    for in every command found, not only in analyzable ones.
    """

    status: ParseStatus
    commands: tuple[SimpleCommand, ...]
    reasons: tuple[str, ...] = ()
    text: str = ""
    #: ``<(…)`` process substitutions whose commands were analyzed on their
    #: own (check 8 leaves exactly these alone)
    input_pipes: int = 0
