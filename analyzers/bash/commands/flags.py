"""A small getopt: parse argv against a declared option table.

The table is an allowlist. An option that is not in it — including an
abbreviation GNU getopt would accept (``--compress-prog`` for
``--compress-program``, ``--outp`` for ``--output``) — is reported as unknown,
and the command is then not read-only. Exact long names only.
"""

from __future__ import annotations

from regexes import regex
from values import field, valueclass

# the enum module costs a cold start 3.5 ms (values/choices.py); type
# checkers see it
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from enum import Enum
else:
    from values import Enum

# patterns the functions below use (module constants: see regexes/)
_NUMERIC_SHORTHAND_RE = regex(r"-\d+")


class Arg(Enum):
    NONE = "none"  # a switch
    VALUE = "value"  # takes one argument (attached or next word)
    NUM = "num"  # takes a numeric argument
    READ = "read"  # takes a path that is read
    OPTIONAL = "optional"  # long form only, value only as --opt=value
    VALUE2 = "value2"  # takes two arguments (jq --arg NAME VALUE)


_NUM_RE = regex(r"^[+-]?\d[\w.]*$")


@valueclass
class ParsedArgs:
    flags: tuple[tuple[str, str | None], ...]
    positionals: tuple[str, ...]
    reads: tuple[str, ...]  # paths given as values of READ options
    problem: str | None = None

    def has(self, *names: str) -> bool:
        return any(f in names for f, _ in self.flags)

    def value(self, *names: str) -> str | None:
        for f, v in self.flags:
            if f in names:
                return v
        return None


@valueclass
class Spec:
    """How one command is called.

    ``flags`` maps every accepted option (``-n``, ``--lines``) to its
    argument kind. ``numeric_shorthand`` accepts ``-20`` (head/tail).
    ``max_positional`` caps positionals (``uniq in out`` writes ``out``).
    ``paths`` says which positionals are read paths: ``"all"``,
    ``"after-first"`` (grep PATTERN FILE…) or ``"none"``. ``check`` adds
    command-specific validation and returns a problem or ``None``.
    """

    flags: Mapping[str, Arg] = field(default_factory=dict)
    numeric_shorthand: bool = False
    max_positional: int | None = None
    paths: str = "all"
    default_path: str | None = None
    check: Callable[[ParsedArgs], str | None] | None = None
    #: ``False`` for tools whose parser is not getopt (xxd matches option
    #: prefixes, tree takes values from the next word inside a cluster):
    #: each ``-word`` must then be a listed option as a whole
    clusters: bool = True


def spec(
    switches: str = "",
    valued: str = "",
    *,
    reads: str = "",
    optional: str = "",
    long: Mapping[str, Arg] | None = None,
    **kw: object,
) -> Spec:
    """Shorthand: ``switches`` lists single-letter switches (``"lah"``),
    ``valued`` single-letter options taking a value, ``reads`` those whose
    value is a file that is read, ``optional`` those whose value can only be
    attached (``-w16``), ``long`` the rest."""
    table: dict[str, Arg] = {f"-{c}": Arg.NONE for c in switches}
    table.update({f"-{c}": Arg.VALUE for c in valued})
    table.update({f"-{c}": Arg.READ for c in reads})
    table.update({f"-{c}": Arg.OPTIONAL for c in optional})
    table.update(long or {})
    return Spec(flags=table, **kw)  # type: ignore[arg-type]


def parse_args(argv: tuple[str, ...], sp: Spec) -> ParsedArgs:
    flags: list[tuple[str, str | None]] = []
    positionals: list[str] = []
    reads: list[str] = []
    table = sp.flags
    i, n = 1, len(argv)

    def bad(msg: str) -> ParsedArgs:
        return ParsedArgs(tuple(flags), tuple(positionals), tuple(reads), msg)

    while i < n:
        a = argv[i]
        i += 1
        if a == "--":
            positionals.extend(argv[i:])
            break
        if not a.startswith("-") or a == "-":
            positionals.append(a)
            continue
        if sp.numeric_shorthand and _NUMERIC_SHORTHAND_RE.fullmatch(a):
            flags.append(("-n", a[1:]))
            continue
        if not sp.clusters and not a.startswith("--"):
            kind = table.get(a)
            if kind is None:
                return bad(f"unknown option {a!r}")
            if kind in (Arg.NONE, Arg.OPTIONAL):
                flags.append((a, None))
                continue
            if i >= n:
                return bad(f"option {a!r} needs a value")
            value = argv[i]
            i += 1
            problem = _value_problem(a, kind, value, reads)
            if problem:
                return bad(problem)
            flags.append((a, value))
            continue
        if a.startswith("--"):
            name, eq, attached = a.partition("=")
            kind = table.get(name)
            if kind is None:
                return bad(f"unknown option {name!r}")
            if kind is Arg.NONE:
                if eq:
                    return bad(f"option {name!r} takes no value")
                flags.append((name, None))
                continue
            if kind is Arg.OPTIONAL:
                flags.append((name, attached if eq else None))
                continue
            if kind is Arg.VALUE2:
                needed = 1 if eq else 2
                if i + needed > n:
                    return bad(f"option {name!r} needs two values")
                flags.append((name, attached if eq else argv[i]))
                i += needed
                continue
            if eq:
                value = attached
            elif i < n:
                value = argv[i]
                i += 1
            else:
                return bad(f"option {name!r} needs a value")
            problem = _value_problem(name, kind, value, reads)
            if problem:
                return bad(problem)
            flags.append((name, value))
            continue
        # short option cluster: -abc, -n5, -n 5
        j = 1
        while j < len(a):
            name = "-" + a[j]
            kind = table.get(name)
            if kind is None:
                return bad(f"unknown option {name!r}" + (f" in {a!r}" if len(a) > 2 else ""))
            if kind is Arg.NONE:
                flags.append((name, None))
                j += 1
                continue
            if kind is Arg.OPTIONAL:
                flags.append((name, a[j + 1 :] or None))
                break
            if j + 1 < len(a):
                value = a[j + 1 :]
            elif i < n:
                value = argv[i]
                i += 1
            else:
                return bad(f"option {name!r} needs a value")
            if kind is Arg.VALUE2:
                if i >= n:
                    return bad(f"option {name!r} needs two values")
                i += 1
            problem = _value_problem(name, kind, value, reads)
            if problem:
                return bad(problem)
            flags.append((name, value))
            break
    parsed = ParsedArgs(tuple(flags), tuple(positionals), tuple(reads))
    if sp.max_positional is not None and len(positionals) > sp.max_positional:
        return bad(f"more than {sp.max_positional} operand(s)")
    if sp.check is not None:
        problem = sp.check(parsed)
        if problem:
            return ParsedArgs(parsed.flags, parsed.positionals, parsed.reads, problem)
    return parsed


def _value_problem(name: str, kind: Arg, value: str, reads: list[str]) -> str | None:
    if kind is Arg.NUM and not _NUM_RE.match(value):
        return f"option {name!r} expects a number, got {value!r}"
    if kind is Arg.READ:
        reads.append(value)
    return None


def read_paths(parsed: ParsedArgs, sp: Spec) -> list[str]:
    """Paths the command reads: option values of kind READ plus positionals
    according to ``sp.paths``; ``default_path`` when there are none."""
    out = list(parsed.reads)
    pos = list(parsed.positionals)
    if sp.paths == "after-first":
        pos = pos[1:]
    elif sp.paths == "none":
        pos = []
    pos = [p for p in pos if p != "-"]
    if not pos and sp.default_path and sp.paths != "none":
        pos = [sp.default_path]
    return out + pos
