"""Bash from a grammar, for hypothesis: the generators of `shellgate fuzz`.

Random bytes almost never parse; the analyzer's bugs live where a well-formed
command means one thing to it and another to bash. So the generators build
commands from bash's productions (fuzz/pieces.py: quoting, expansions,
redirections, heredocs, tests), compose them into pipelines, lists, compound
commands and functions, put the wrappers that run their argument in front,
draw the analyzer's allowed programs with the *installed* tool's options
(fuzz/options.py) in every spelling its getopt accepts, embed jq, awk and
sed programs, then salt the result with look-alike and control characters
and stretch it very long and very deep. Every production drawn is counted
(fuzz/coverage.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from hypothesis import strategies as st

from values import valueclass

from . import grammar as g
from .coverage import production as _p
from .options import Option, ToolOptions, spellings
from .pieces import (
    PATHS_AND_WORDS,
    S,
    expansions,
    heredoc,
    quiet,
    redirect,
    requote,
    shell_word,
    test_expr,
)

Tools = Mapping[tuple[str, ...], ToolOptions]


@valueclass
class Limits:
    """How big a generated command may grow (``ci``: fast and small; ``deep``:
    the long and deep inputs that find slowness and recursion limits)."""

    leaves: int
    repeat: int
    depth: int
    options: int


LIMITS = {"ci": Limits(leaves=6, repeat=30, depth=30, options=3),
          "deep": Limits(leaves=16, repeat=4000, depth=1500, options=6)}


# -- the installed tools' options -------------------------------------------------------------


def value_kind(option: Option) -> str:
    """What an option's value is, by its metavar (``FILE`` a path, ``PROG`` a
    program, ``N`` a number); anything else gets words and paths."""
    meta = re.sub(r"[^A-Z]", " ", option.metavar.upper()).split()
    for kind, names in g.METAVAR_KINDS:
        if any(m in names or any(m.startswith(n) for n in names if len(n) > 2) for m in meta):
            return kind
    return "other"


def spelled_option(option: Option, tool: ToolOptions) -> S[str]:
    """One option of the installed tool, in one of the spellings its getopt
    accepts (attached, detached, abbreviated), with a value of its kind."""
    values = g.VALUES_BY_KIND[value_kind(option)] if option.takes != "none" else ("",)

    def spell(value: str) -> S[str]:
        forms = spellings(option, tool, value) or ((option.name,),)
        return st.sampled_from(forms).map(lambda words: " ".join(shell_word(w) for w in words))

    return st.sampled_from(values).flatmap(spell)


def tool_command(tools: Tools, limits: Limits) -> S[str]:
    """An allowed program (or git subcommand) with options of the installed
    tool and operands from the fixture project."""
    names = sorted(t for t in tools if tools[t].options)
    if not names:
        return st.nothing()
    per_tool = [_one_tool(program, tools[program], limits.options) for program in names]
    # deferred: hypothesis would otherwise render every option's help in
    # the strategy's repr (megabytes, each time one is asked for)
    return _p("tool.options", quiet(st.one_of(per_tool)))


_GIT_GLOBALS = ("", "", "", "--no-pager", "-c color.ui=never", "-C src", "-P", "--git-dir=.git",
                "-c core.pager=id")


def _one_tool(program: tuple[str, ...], tool: ToolOptions, most: int) -> S[str]:
    option = st.sampled_from(tool.options).flatmap(lambda o: spelled_option(o, tool))
    operands = st.lists(st.sampled_from(g.PATHS + g.WORDS[:6]).map(shell_word), max_size=2)
    head = (st.sampled_from(_GIT_GLOBALS).map(lambda glob: " ".join(
        w for w in ("git", glob, *program[1:]) if w)) if program[0] == "git"
        else st.just(" ".join(program)))
    return st.tuples(head, st.lists(option, max_size=most), operands).map(
        lambda t: " ".join([t[0], *t[1], *t[2]]))


# -- embedded languages -----------------------------------------------------------------------


def _program(pieces: Sequence[str]) -> S[str]:
    return st.lists(st.sampled_from(pieces), min_size=1, max_size=6).map("".join)


def embedded() -> S[str]:
    """jq, awk and sed programs with comments and line breaks, over a file."""
    file = st.sampled_from(("notes.txt", "package.json", "README.md", "")).map(shell_word)
    return st.one_of(
        _p("lang.jq", st.tuples(_program(g.JQ_PIECES), file).map(
            lambda t: f"jq {shell_word(t[0])} {t[1]}".rstrip())),
        _p("lang.awk", st.tuples(_program(g.AWK_PIECES), file).map(
            lambda t: f"awk {shell_word(t[0])} {t[1]}".rstrip())),
        _p("lang.sed", st.tuples(st.sampled_from(("", "-n ", "-E ", "-z ", "-s ", "--posix ")),
                                 _program(g.SED_PIECES), file).map(
            lambda t: f"sed {t[0]}{shell_word(t[1])} {t[2]}".rstrip())),
    )


# -- simple and compound commands -------------------------------------------------------------

_BUILTINS = ("echo", "printf", "cd", "read", "export", "declare", "local", "set", "shopt",
             "alias", "source", ".", "type", "hash", "trap", "ulimit", "umask", "wait",
             "exit", "return", "true", ":", "let", "mapfile", "compgen", "complete", "fc")


def simple_command(tools: Tools, inner: S[str] | None = None) -> S[str]:
    """[assignments] name [words, expansions, redirections in any position]."""
    programs = sorted({t[0] for t in tools}) or ["ls", "cat"]
    danger_heads = sorted({d.split()[0] for d in g.DANGEROUS})
    name = st.one_of(st.sampled_from(programs), st.sampled_from(danger_heads),
                     st.sampled_from(_BUILTINS)).map(lambda n: n)
    word = st.sampled_from(PATHS_AND_WORDS).flatmap(requote)
    part = st.one_of(word, redirect(), *([expansions(inner)] * 2 if inner is not None else []))
    assign = st.tuples(st.sampled_from(("A", "LANG", "PATH", "IFS", "GIT_DIR", "LD_PRELOAD",
                                        "PAGER", "TZ", "BASH_ENV", "x")),
                       st.sampled_from(PATHS_AND_WORDS).map(shell_word)).map(
        lambda t: f"{t[0]}={t[1]}")
    plain = st.tuples(st.lists(assign, max_size=1), name, st.lists(part, max_size=4)).map(
        lambda t: " ".join([*t[0], t[1], *t[2]]))
    leading_redirect = _p("redirect.leading", st.tuples(redirect(), plain).map(" ".join))
    return st.one_of(_p("simple", plain), leading_redirect, tool_command(tools, LIMITS["ci"]),
                     embedded(), test_expr(word))


def _compound(inner: S[str]) -> S[str]:
    two = st.tuples(inner, inner)
    return st.one_of(
        _p("pipeline", st.lists(inner, min_size=2, max_size=3).map(" | ".join)),
        _p("pipeline.stderr", two.map(lambda t: f"{t[0]} |& {t[1]}")),
        _p("list.and", two.map(lambda t: f"{t[0]} && {t[1]}")),
        _p("list.or", two.map(lambda t: f"{t[0]} || {t[1]}")),
        _p("list.seq", two.map(lambda t: f"{t[0]}; {t[1]}")),
        _p("list.newline", two.map(lambda t: f"{t[0]}\n{t[1]}")),
        _p("background", two.map(lambda t: f"{t[0]} & {t[1]}")),
        _p("subshell", inner.map(lambda c: f"({c})")),
        _p("group", inner.map(lambda c: f"{{ {c}; }}")),
        _p("if", st.tuples(inner, inner, inner).map(
            lambda t: f"if {t[0]}; then {t[1]}; else {t[2]}; fi")),
        _p("for", two.map(lambda t: f"for x in $({t[0]}); do {t[1]}; done")),
        _p("for.arith", inner.map(lambda c: f"for ((i=0; i<1; i++)); do {c}; done")),
        _p("while", two.map(lambda t: f"while {t[0]}; do {t[1]}; break; done")),
        _p("until", two.map(lambda t: f"until {t[0]}; do {t[1]}; done")),
        _p("case", two.map(lambda t: f"case $x in a|b) {t[0]};; *) {t[1]};; esac")),
        _p("select", inner.map(lambda c: f"select x in a; do {c}; done")),
        _p("function", inner.map(lambda c: f"f() {{ {c}; }}; f")),
        _p("function.keyword", inner.map(lambda c: f"function f {{ {c}; }}; f")),
        _p("coproc", inner.map(lambda c: f"coproc {{ {c}; }}")),
        _p("negation", inner.map(lambda c: f"! {c}")),
        _p("arith.command", st.sampled_from(("(( x = 1 ))", "(( a[$(id)] ))")).map(str)),
        _p("wrapper", st.tuples(st.sampled_from(g.WRAPPERS), inner).map("".join)),
        _p("wrapper.string", st.tuples(st.sampled_from(g.STRING_RUNNERS), inner).map(
            lambda t: t[0] + shell_word(t[1]))),
        _p("heredoc", heredoc(inner)),
        _p("substitution", st.tuples(inner, inner).map(lambda t: f"{t[0]} $({t[1]})")),
        _p("assignment.subst", inner.map(lambda c: f"x=$({c}); echo $x")),
    )


def _salted(command: S[str]) -> S[str]:
    """Look-alike and control characters inserted at drawn positions."""
    chars = st.sampled_from(g.UNICODE + g.CONTROL)
    inserts = st.lists(st.tuples(st.integers(0, 10_000), chars), min_size=1, max_size=3)

    def salt(t: tuple[str, list[tuple[int, str]]]) -> str:
        text, adds = t
        for pos, ch in adds:
            at = pos % (len(text) + 1)
            text = text[:at] + ch + text[at:]
        return text

    return _p("salted", st.tuples(command, inserts).map(salt))


_NESTERS = (("$(", ")"), ("(", ")"), ("{ ", "; }"), ("echo $(", ")"), ("[[ ( ", " ) ]]"),
            ("$((", "))"), ("\"$(", ")\""), ("a{", ",b}"), ("<(", ")"), ("if true; then ", "; fi"))
_SEPARATORS = ("; ", " && ", " | ", "\n", " & ", " || ")


def _stretched(command: S[str], limits: Limits) -> S[str]:
    """Very long (repeated) and very deep (nested) forms of a command."""
    long = st.tuples(command, st.integers(2, limits.repeat), st.sampled_from(_SEPARATORS)).map(
        lambda t: t[2].join([t[0]] * t[1]))
    deep = st.tuples(command, st.integers(2, limits.depth), st.sampled_from(_NESTERS)).map(
        lambda t: t[2][0] * t[1] + t[0] + t[2][1] * t[1])
    glob = st.integers(2, limits.depth).map(lambda n: "ls " + "*/" * n + "x")
    cd_chain = st.integers(2, limits.repeat).map(lambda n: "cd src; " * n + "ls")
    return st.one_of(_p("long", long), _p("deep", deep), _p("deep.glob", glob),
                     _p("long.cd_chain", cd_chain))


def command(mode: str, tools: Tools) -> S[str]:
    """Any command of the grammar, salted or stretched now and then."""
    limits = LIMITS[mode]
    core: S[str] = st.recursive(
        simple_command(tools), _compound, max_leaves=limits.leaves)
    # expansions need the recursive strategy itself: a second level built on it
    with_subst = st.recursive(
        simple_command(tools, core), _compound, max_leaves=max(2, limits.leaves // 2))
    return quiet(st.one_of(core, with_subst, with_subst, _salted(core),
                           _stretched(core, limits)))


def likely_allowed(mode: str, tools: Tools) -> S[str]:
    """Commands built of the analyzer's allowed programs — the ones whose
    allow the execution oracle can test — alone, piped and listed."""
    limits = LIMITS[mode]
    tool = tool_command(tools, limits)
    reader = st.one_of(tool, tool, tool, embedded())
    return quiet(st.one_of(
        reader,
        _p("allowed.pipeline", st.lists(reader, min_size=2, max_size=3).map(" | ".join)),
        _p("allowed.list", st.tuples(reader, st.sampled_from(("; ", " && ", " || ")), reader)
           .map("".join)),
        _p("allowed.wrapped", st.tuples(st.sampled_from(g.WRAPPERS[:19]), reader).map("".join)),
        _p("allowed.redirect", st.tuples(reader, redirect()).map(" ".join)),
        _p("allowed.subst", st.tuples(reader, reader).map(lambda t: f"{t[0]} $({t[1]})")),
    ))


def dangerous(tools: Tools, seeds: Sequence[str]) -> S[str]:
    """Commands that write, run, connect or read a secret: the catalogue, the
    attack seeds, and tool commands given a dangerous-looking option."""
    risky = {p: t for p, t in tools.items() if any(o.suspicious for o in t.options)}
    picks = [st.sampled_from(g.DANGEROUS)]
    if seeds:
        picks.append(st.sampled_from(tuple(seeds)))
    if risky:
        picks.append(tool_command(risky, LIMITS["ci"]))
    return quiet(st.one_of(picks))


__all__ = ["LIMITS", "Limits", "command", "dangerous", "likely_allowed", "requote",
           "shell_word", "simple_command", "tool_command", "value_kind"]
