"""sed: an allowlist of scripts that only print or substitute.

sed is a full editor and a backdoor around file-edit permissions:
``sed -n 'w ~/.bashrc'`` and ``s/x/y/w FILE`` write files, ``e`` /
``s///e`` execute the pattern space as a shell command, ``r FILE``/``R``
read other files into the output, ``W`` writes. Accepted scripts are
sequences (``;``-separated) of: line printing (``5p``, ``1,10p``, ``$p``,
``/re/p``; with ``-n``), ``d``, ``q``, ``=`` and ``s/re/repl/FLAGS`` with
FLAGS from ``g p i I m M 1-9``, each address possibly negated (``1!p``).
Refused outright: ``{}``
blocks, non-ASCII text (homoglyph delimiters), a backslash delimiter
(``s\\a\\b\\``), newlines, and script files (``-f``). ``-i`` turns every file
operand into a write.
"""

from __future__ import annotations

from regexes import regex
from values import valueclass

from .commands.flags import Arg, Spec, parse_args

# patterns the functions below use (module constants: see regexes/)
_SED_REGEX_ADDRESS_RE = regex(r"/(?:[^/\\]|\\.)*/")


_SED_SPEC = Spec(
    flags={
        "-n": Arg.NONE,
        "--quiet": Arg.NONE,
        "--silent": Arg.NONE,
        "-e": Arg.VALUE,
        "--expression": Arg.VALUE,
        "-E": Arg.NONE,
        "-r": Arg.NONE,
        "--regexp-extended": Arg.NONE,
        "-s": Arg.NONE,
        "--separate": Arg.NONE,
        "-z": Arg.NONE,
        "--null-data": Arg.NONE,
        "-u": Arg.NONE,
        "--unbuffered": Arg.NONE,
        "--posix": Arg.NONE,
        "--debug": Arg.NONE,
        "--sandbox": Arg.NONE,
        "-l": Arg.NUM,
        "--line-length": Arg.NUM,
        "-i": Arg.OPTIONAL,
        "--in-place": Arg.OPTIONAL,
        "--follow-symlinks": Arg.NONE,
        "-b": Arg.NONE,
        "--binary": Arg.NONE,
        "--help": Arg.NONE,
        "--version": Arg.NONE,
    }
)

_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*)"
# Used with .match(script, pos): no `^`, which would only match at index 0.
_RANGE_RE = regex(rf"\s*(?:{_ADDR}(?:\s*,\s*(?:{_ADDR}|\+\d+|~\d+))?)?\s*")
_SIMPLE_CMDS = frozenset("pdqQ=l")
_S_FLAGS_RE = regex(r"^[gpiImM1-9]*$")


# `r FILE`, `R FILE`, `w FILE`, `W FILE` commands and the `w FILE` flag of
# `s`: the file name runs to the end of the command.
_SCRIPT_FILE_RE = regex(r"(?:^|[;}\s\d$/])[rRwW]\s*([^;\s}][^;}\n]*)")


@valueclass
class SedFacts:
    in_place: bool
    files: tuple[str, ...]
    problem: str | None
    #: files named inside a refused script (`r ~/.ssh/id_rsa`, `s/a/b/w x`)
    script_files: tuple[str, ...] = ()
    #: operands of a sed call whose options could not be parsed
    unknown: tuple[str, ...] = ()


def analyze_sed(argv: tuple[str, ...]) -> SedFacts:
    p = parse_args(argv, _SED_SPEC)
    if p.problem:
        return SedFacts(False, (), f"sed: {p.problem}", unknown=argv[1:])
    in_place = p.has("-i", "--in-place")
    scripts = [v or "" for f, v in p.flags if f in ("-e", "--expression")]
    files = list(p.positionals)
    if not scripts:
        if not files:
            return SedFacts(in_place, (), "sed without a script")
        scripts, files = [files[0]], files[1:]
    quiet = p.has("-n", "--quiet", "--silent")
    for script in scripts:
        problem = sed_script_problem(script, quiet=quiet)
        if problem:
            named = tuple(m.group(1).strip() for s in scripts for m in _SCRIPT_FILE_RE.finditer(s))
            return SedFacts(in_place, tuple(files), problem, script_files=named)
    return SedFacts(in_place, tuple(files), None)


def sed_script_problem(script: str, *, quiet: bool) -> str | None:
    """Why ``script`` is not a harmless print/substitute script."""
    if not script.isascii():
        return "sed script contains non-ASCII characters"
    if "\n" in script:
        return "sed script contains a newline"
    if "{" in _outside_regexes(script) or "}" in _outside_regexes(script):
        return "sed blocks '{}' are not allowed"
    pos = 0
    n = len(script)
    while pos < n:
        m = _RANGE_RE.match(script, pos)
        pos = m.end() if m else pos
        if m and pos < n and script[pos] == "!":
            # negation (`1!p`, `/x/!d`) selects the other lines; the command
            # after it is judged like any other (`1!e` is still refused)
            pos += 1
            while pos < n and script[pos] in " \t":
                pos += 1
        if pos >= n:
            return "sed address without a command"
        cmd = script[pos]
        if cmd == "s":
            end, problem = _substitution_end(script, pos)
            if problem:
                return problem
            pos = end
        elif cmd in _SIMPLE_CMDS:
            if cmd == "p" and not quiet:
                return "sed line printing needs -n"
            pos += 1
        else:
            return f"sed command {cmd!r} is not allowed"
        while pos < n and script[pos] in " \t":
            pos += 1
        if pos < n:
            if script[pos] != ";":
                return f"unexpected {script[pos]!r} in sed script"
            pos += 1
    return None


def _substitution_end(script: str, start: int) -> tuple[int, str | None]:
    """Parse ``s<d>re<d>repl<d>flags`` at ``start``; return (end, problem)."""
    if start + 1 >= len(script):
        return start, "sed s without delimiter"
    delim = script[start + 1]
    if delim == "\\":
        return start, "sed s with a backslash delimiter"
    if delim.isalnum() or delim in " \t;":
        return start, f"sed s with delimiter {delim!r}"
    i = start + 2
    parts = 0
    while i < len(script) and parts < 2:
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            parts += 1
        i += 1
    if parts < 2:
        return i, "unterminated sed s command"
    j = i
    while j < len(script) and script[j] not in "; \t":
        j += 1
    flags = script[i:j]
    if not _S_FLAGS_RE.match(flags):
        bad = "".join(sorted(set(flags) - set("gpiImM123456789")))
        return j, f"sed s flag(s) {bad!r} not allowed (w writes a file, e executes)"
    return j, None


def _outside_regexes(script: str) -> str:
    """Script text with /regex/ bodies blanked (braces there are literal)."""
    return _SED_REGEX_ADDRESS_RE.sub("//", script)
