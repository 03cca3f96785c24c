"""awk with a literal program that only reads and prints.

``awk '{print $1}' FILE`` asked, although most awk one-liners only read
their input and print. An awk program can also run commands
(``system("…")``, ``print | "sh"``, ``"cmd" | getline``), write files
(``print > "~/.bashrc"``), read any file (``getline < "/etc/shadow"``) and
read the environment (``ENVIRON["AWS_SECRET_ACCESS_KEY"]``); gawk loads
extensions (``@load``) and mawk reads programs with ``-W exec``. So the
program is scanned with its strings, regular expressions and comments set
aside, and allowed only when none of those doors appears:

- no ``|`` (``||`` is logic), no ``getline``, ``system``, ``close``,
  ``ENVIRON``, ``PROCINFO``, ``@``-directives;
- no ``>`` at parenthesis depth 0 inside an action ``{ … }`` (there it
  redirects ``print``); in a pattern and inside parentheses it compares,
  as in ``$3 > 100 {print $1}`` and ``if ($1 > 5) print``.

Where a ``/`` opens a regular expression and where it divides is decided
as awk's lexer does, and a division that could be a regex holding a quote
is refused (see :func:`_code_only`). Options other than ``-F`` and ``-v`` (``-f`` reads the program
from a file, gawk's ``-o``/``-p``/``-d`` write files, mawk's ``-W``) ask.
"""

from __future__ import annotations

import re

from ..wrappers import skip_options

AWK_NAMES = frozenset({"awk", "gawk", "mawk", "nawk"})

#: getline reads files and commands, system runs one, close ends pipes;
#: ENVIRON holds the secrets, gawk's SYMTAB reaches it by a computed name
#: (`SYMTAB["ENV" "IRON"]`), PROCINFO and FUNCTAB steer the interpreter;
#: assigning ARGV/ARGC makes awk read a file nobody named
#: (`BEGIN{ARGV[1]="/etc/shadow"; ARGC=2} 1`)
_FORBIDDEN_WORDS = frozenset(
    {"getline", "system", "close", "ENVIRON", "PROCINFO", "SYMTAB", "FUNCTAB", "ARGV", "ARGC"}
)
#: words after which an operand (so a regex) comes: `print /x/`
_KEYWORDS = frozenset({"print", "printf", "return", "in", "do", "else", "getline", "delete",
                       "exit", "case", "default"})
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def awk_facts(argv: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """``(problem, files read)`` for an awk invocation."""
    i, unknown = skip_options(argv, frozenset(), frozenset({"-F", "-v"}))
    if unknown:
        return f"{unknown}: not known to be read-only", ()
    if i >= len(argv):
        return "awk without a program", ()
    problem = program_problem(argv[i])
    # Every operand is judged as a file; `var=value` operands too (fail closed).
    return (f"awk program: {problem}" if problem else None), tuple(
        a for a in argv[i + 1 :] if a != "-"
    )


def program_problem(program: str) -> str | None:
    """Why this awk program may do more than read its input and print."""
    code = _code_only(program)
    if code is None:
        return ("a string or regular expression does not end on its line, or a `/` may "
                "divide or open a regular expression")
    depth = 0
    braces = 0
    for pos, c in enumerate(code):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "{":
            braces += 1
        elif c == "}":
            braces -= 1
        elif c == "|" and not (code[pos + 1 : pos + 2] == "|" or code[pos - 1 : pos] == "|"):
            return "'|' pipes to or from a command"
        elif c == ">" and braces > 0 and depth <= 0:
            return "'>' in an action redirects output to a file"
        elif c == "@":
            return "'@' directives load code"
        elif c == "\\":
            return "a backslash outside strings (a continued line) is not analyzed"
    for word in _WORD_RE.findall(code):
        if word in _FORBIDDEN_WORDS:
            return f"{word} reaches beyond the input"
    return None


def _code_only(program: str) -> str | None:
    """The program with strings, regular expressions and comments blanked
    (each replaced by a space), or ``None`` when one does not end or a
    ``/`` may be read two ways.

    A ``/`` opens a regular expression where awk expects an operand: after
    an operator, ``( , { } ; ! ~ $``, a newline, the start, or a keyword
    (``print /x/``). After an operand (a name, a number, ``)``, ``]``, a
    literal, ``++``) it divides — except where the grammar says otherwise
    (``if (c) /re/``), which a scan cannot tell. Misread either way, a
    ``"`` or ``#`` inside the regex opens a string or a comment in the scan
    that hides real code (from a review: ``print /"/ | "sh …"; print /"/``
    ran sh). So a division followed on its line by another ``/`` with a
    ``"`` or ``#`` between them is refused."""
    out: list[str] = []
    i, n = 0, len(program)
    operand = False  # did the code so far end with an operand?
    while i < n:
        c = program[i]
        if c == "#":
            end = program.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == '"' or (c == "/" and not operand):
            after = _literal_end(program, i)
            if after is None:
                return None
            out.append(" ")
            operand = True
            i = after
            continue
        if c == "/" and _may_be_regex(program, i):
            return None
        if c.isalnum() or c == "_":
            j = i
            while j < n and (program[j].isalnum() or program[j] == "_"):
                j += 1
            word = program[i:j]
            out.append(word)
            operand = word not in _KEYWORDS
            i = j
            continue
        out.append(c)
        if c in ")]":
            operand = True
        elif c in "+-" and program[i + 1 : i + 2] == c:
            out.append(c)  # ++ / --: an operand's end when postfix
            operand = True
            i += 1
        elif not c.isspace() or c == "\n":
            operand = False
        i += 1
    return "".join(out)


def _may_be_regex(program: str, i: int) -> bool:
    """Could the division at ``i`` be a regex hiding a ``"`` or ``#``?"""
    line_end = program.find("\n", i)
    line = program[i + 1 : line_end if line_end >= 0 else len(program)]
    close = line.find("/")
    return close >= 0 and any(ch in line[:close] for ch in '"#')


def _literal_end(program: str, start: int) -> int | None:
    """The index after the string or regex opening at ``start``.

    Awks differ on whether a ``/`` inside a bracket expression ends a regex
    (``/[/]/``), and ``]`` first in a bracket or ``[:alpha:]`` classes make
    the bracket's end hard to find; a scan that ends a regex early could
    open a string inside it and hide code up to the next quote
    (``/[/"]/ … print > "f"``). A bracket holding ``/``, ``[`` or ``\\``, or
    starting with ``]``, is refused; every other regex ends at the same
    ``/`` however brackets are read."""
    quote = program[start]
    i = start + 1
    bracket = False
    while i < len(program):
        c = program[i]
        if c == "\n":
            return None
        if bracket:
            if c in "/[\\":
                return None
            bracket = c != "]"
        elif c == "\\":
            i += 2
            continue
        elif quote == "/" and c == "[":
            bracket = True
            rest = program[i + 1 : i + 3]
            if rest.startswith("]") or rest == "^]":
                return None
            if rest.startswith("^"):
                i += 1
        elif c == quote:
            return i + 1
        i += 1
    return None
