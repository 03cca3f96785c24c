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
as awk's lexer does; where the scan cannot tell, every reading is scanned
(see :func:`_readings`). Options other than ``-F`` and ``-v`` (``-f`` reads
the program from a file, gawk's ``-o``/``-p``/``-d`` write files, mawk's
``-W``) ask.
"""

from __future__ import annotations

from regexes import regex

from ..wrappers import skip_options

#: getline reads files and commands, system runs one, close ends pipes;
#: ENVIRON holds the secrets, gawk's SYMTAB reaches it by a computed name
#: (`SYMTAB["ENV" "IRON"]`), PROCINFO and FUNCTAB steer the interpreter;
#: assigning ARGV/ARGC makes awk read a file nobody named
#: (`BEGIN{ARGV[1]="/etc/shadow"; ARGC=2} 1`)
_FORBIDDEN_WORDS = frozenset(
    {"getline", "system", "close", "ENVIRON", "PROCINFO", "SYMTAB", "FUNCTAB", "ARGV", "ARGC"}
)
_WORD_RE = regex(r"[A-Za-z_][A-Za-z0-9_]*")


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
    """Why this awk program may do more than read its input and print —
    under every reading of it the scan cannot rule out (see :func:`_readings`)."""
    readings = _readings(program)
    if readings is None:
        return ("its text cannot be read one way only (a string or regex that does not end "
                "on its line, a slash mawk reads apart, a number glued to a name)")
    if not readings:
        return f"more than {_MAX_READINGS} ways to read its slashes"
    for code in readings:
        problem = _code_problem(code)
        if problem:
            return problem
    return None


def _code_problem(code: str) -> str | None:
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


#: the most readings of one program's slashes before it is refused
_MAX_READINGS = 64


def _readings(program: str) -> list[str] | None:
    """The program with strings, regular expressions and comments blanked
    (each replaced by a space), once for every way to read its slashes;
    ``None`` when a literal does not end; ``[]`` when there are too many.

    A ``/`` opens a regular expression where awk expects an operand: at the
    start, after an operator, ``( , { } ; ! ~ $`` or a newline. After a
    number, a literal or ``]`` it divides. After a name (a keyword like
    ``print`` included) or ``)`` it may be either: ``length /x+/`` is a
    regex to mawk (a builtin, not a variable), ``if (c) /re/`` one to every
    awk, ``n / 2`` a division. Read one way when awk reads the other, the
    scan goes out of step — a ``"`` inside the regex opens a string that
    hides code, a slash after it opens a regex that hides the next
    statement (from two reviews: ``print /"/ | "sh …"; print /"/`` and
    ``x = length /x+/; system(…); y = 1 / 2`` ran sh). So both readings are
    scanned, and the program is allowed only if every one is harmless."""
    out: list[str] = []
    stack: list[tuple[int, bool, str, list[str]]] = [(0, False, "start", [])]
    while stack:
        if len(out) + len(stack) > _MAX_READINGS:
            return []
        i, operand, sure, code = stack.pop()
        ended = _scan(program, i, operand, sure, code, stack)
        if ended is None:
            return None
        out.append("".join(code))
    return out


def _scan(program: str, i: int, operand: bool, sure: str, code: list[str],
          stack: list[tuple[int, bool, str, list[str]]]) -> bool | None:
    """Scan from ``i`` to the end into ``code``; at a slash that may be read
    two ways, push the regex reading on ``stack`` and go on as division.
    ``sure``: what the last token makes of a slash after it ("regex",
    "division" or "either")."""
    n = len(program)
    while i < n:
        c = program[i]
        if c == "#":
            end = program.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "/" and operand and sure == "after-increment":
            # mawk starts a regex after `x++ /` one character late: no scan
            # agrees with it there (from a review)
            return None
        if c == "/" and operand and sure == "either":
            after = _literal_end(program, i)
            if after == _REFUSED:
                return None  # a regex reading that cannot be scanned is not skipped
            if after != _UNENDED:  # the regex reading, scanned later
                stack.append((after, True, "division", [*code, " "]))
            code.append("/")  # this scan: a division
            operand, sure = False, "regex"
            i += 1
            continue
        if c == '"' or (c == "/" and not operand):
            after = _literal_end(program, i)
            if after < 0:
                return None
            code.append(" ")
            operand, sure = True, "division"
            i = after
            continue
        number = _NUMBER_RE.match(program, i)
        if number is not None:
            j = number.end()
            if j < n and (program[j].isalnum() or program[j] == "_"):
                return None  # `1length`: mawk reads a number, then a name
            code.append(program[i:j])
            operand, sure = True, "division"
            i = j
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (program[j].isalnum() or program[j] == "_"):
                j += 1
            word = program[i:j]
            code.append(word)
            # after a name a slash may divide (`n / 2`) or open a regex
            # (`print /x/`, `length /x+/`, a builtin; `$length /x+/` too).
            # Which names are keywords differs between awks (`case` is
            # gawk's, a variable to mawk: from a review, `x = case / 2;
            # system(…); y = 1 / 1` hid system), so every name gets both
            operand, sure = True, "either"
            i = j
            continue
        code.append(c)
        if c == "]":
            operand, sure = True, "division"
        elif c == ")":
            operand, sure = True, "either"
        elif c in "+-" and program[i + 1 : i + 2] == c:
            code.append(c)
            operand, sure = True, "after-increment"
            i += 1
        elif not c.isspace() or c == "\n":
            operand, sure = False, "regex"
        i += 1
    return True


#: what :func:`_literal_end` says of a literal that does not end on its line
_UNENDED = -1
#: ... and of a regex whose bracket expression it does not read
_REFUSED = -2
_NUMBER_RE = regex(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _literal_end(program: str, start: int) -> int:
    """The index after the string or regex opening at ``start``, or
    :data:`_UNENDED` when it does not end on its line, :data:`_REFUSED`
    when its brackets are not read.

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
            return _UNENDED
        if bracket:
            if c in "/[\\":
                return _REFUSED
            bracket = c != "]"
        elif c == "\\":
            i += 2
            continue
        elif quote == "/" and c == "[":
            bracket = True
            rest = program[i + 1 : i + 3]
            if rest.startswith("]") or rest == "^]":
                return _REFUSED
            if rest.startswith("^"):
                i += 1
        elif c == quote:
            return i + 1
        i += 1
    return _UNENDED
