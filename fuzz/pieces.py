"""The pieces a generated command is built of: words in every quoting form,
expansions and substitutions, redirections, heredocs, `[ ]` and `[[ ]]`.

Quoting matters most: the analyzer must read `'r''m'`, `$'\\x72m'`, `r\\<newline>m`
as bash does, and the quoting property (fuzz/properties.py) checks that
every spelling of a dangerous command is judged as the plain one.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable, Sequence
from typing import TypeVar

from hypothesis import strategies as st

from regexes import regex

from . import grammar as g
from .coverage import declare
from .coverage import production as _p

T = TypeVar("T")
S = st.SearchStrategy


def quiet(strategy: S[T]) -> S[T]:
    """``strategy`` with a short repr: hypothesis renders a strategy's
    arguments (hundreds of seeds, every option's help) whenever it wants
    its repr, megabytes a time."""
    @st.composite
    def drawn(draw: st.DrawFn) -> T:
        return draw(strategy)

    return drawn()
PATHS_AND_WORDS = g.PATHS + g.WORDS

# -- words and quoting ------------------------------------------------------------------------

_PLAIN = regex(r"[A-Za-z0-9_./,:=@%+-]+")
_BARE_OK = regex(r"[A-Za-z0-9_./,:=@%+~*{}$-]+")


def shell_word(word: str) -> str:
    """``word`` as the shell should see it: bare when it holds nothing the
    shell splits on (globs, ``~`` and ``$`` kept live), quoted otherwise."""
    return word if _BARE_OK.fullmatch(word) else shlex.quote(word)


def _double(text: str) -> str:
    return '"' + re.sub(r'([\\"$`])', r"\\\1", text) + '"'


def _ansi_c(text: str, hex_every: int) -> str:
    out = []
    for i, ch in enumerate(text):
        if hex_every and i % hex_every == 0 and ord(ch) < 128:
            out.append(f"\\x{ord(ch):02x}")
        elif ch in "\\'":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


#: ways to write a plain word so bash reads the same word: (name, builder
#: of (word, cut) -> spelling); each preserves the word exactly
_QUOTINGS: tuple[tuple[str, Callable[[str, int], str]], ...] = (
    ("bare", lambda w, _: w),
    ("single", lambda w, _: f"'{w}'"),
    ("double", lambda w, _: _double(w)),
    ("ansi_c", lambda w, n: _ansi_c(w, 1 + n % 3)),
    ("escaped", lambda w, _: "".join("\\" + c for c in w)),
    ("split", lambda w, n: f"'{w[:n % (len(w) + 1)]}'" + _double(w[n % (len(w) + 1):])),
    ("empty_pieces", lambda w, n: w[:n % (len(w) + 1)] + "''" + w[n % (len(w) + 1):] + '""'),
    ("line_continuation", lambda w, n: w[:1 + n % len(w)] + "\\\n" + w[1 + n % len(w):]
     if len(w) > 1 else w),
)


for _name, _ in _QUOTINGS:
    declare(f"quote.{_name}")


def requote(word: str) -> S[str]:
    """``word`` spelled in any of bash's quoting forms, meaning the same word
    (plain words only; anything else is kept as written)."""
    if not _PLAIN.fullmatch(word):
        return st.just(word)
    forms = [_p(f"quote.{name}", st.integers(0, 64).map(functools.partial(_spell, build, word)))
             for name, build in _QUOTINGS]
    return st.one_of(forms)


def _spell(build: Callable[[str, int], str], word: str, n: int) -> str:
    return build(word, n)


def requoted_command(words: Sequence[str]) -> S[str]:
    """A simple command's words, each re-quoted on its own."""
    return st.tuples(*(requote(w) for w in words)).map(" ".join)


# -- expansions, redirections, heredocs -----------------------------------------------------


def expansions(inner: S[str]) -> S[str]:
    var = st.sampled_from(("x", "HOME", "PATH", "1", "@", "IFS", "PS4", "BASH_ENV"))
    return st.one_of(
        _p("expansion.var", var.map(lambda v: f"${v}")),
        _p("expansion.braced", var.map(lambda v: f"${{{v}}}")),
        _p("expansion.prompt", var.map(lambda v: f"${{{v}@P}}")),
        _p("expansion.transform", st.tuples(var, st.sampled_from("QEAaKku")).map(
            lambda t: f"${{{t[0]}@{t[1]}}}")),
        _p("expansion.default_subst", st.tuples(var, inner).map(
            lambda t: f"${{{t[0]}:-$({t[1]})}}")),
        _p("expansion.indirect", var.map(lambda v: f"${{!{v}}}")),
        _p("subst.dollar", inner.map(lambda c: f"$({c})")),
        _p("subst.backtick", inner.map(lambda c: "`" + c.replace("`", "\\`") + "`")),
        _p("subst.process_in", inner.map(lambda c: f"<({c})")),
        _p("subst.process_out", inner.map(lambda c: f">({c})")),
        _p("arith", st.sampled_from(("1+2", "x[$(id)]", "a=1", "0x10", "2**3")).map(
            lambda e: f"$(({e}))")),
        _p("expansion.ansi_c", st.sampled_from(PATHS_AND_WORDS).map(lambda w: _ansi_c(w, 2))),
        _p("expansion.locale", st.sampled_from(g.WORDS).map(lambda w: f'$"{w}"')),
        _p("expansion.brace", st.sampled_from(("{a,b}", "{1..3}", "x{,.bak}", "{-o,pwned}"))),
        _p("expansion.tilde", st.sampled_from(("~", "~root", "~+", "~-", "~/x"))),
    )


_REDIRECT_OPS = (">", ">>", "<", "<>", ">|", "&>", "&>>", "2>", "2>>", "1>", "0<", "3<", "3>",
                 ">&", "<&", "9>")
_FD_DUPS = ("2>&1", ">&2", "<&-", ">&-", "1>&2", "3>&1")


def redirect() -> S[str]:
    target = st.sampled_from(g.PATHS).map(shell_word)
    return st.one_of(
        _p("redirect.file", st.tuples(st.sampled_from(_REDIRECT_OPS), target,
                                      st.booleans()).map(
            lambda t: f"{t[0]}{'' if t[2] else ' '}{t[1]}")),
        _p("redirect.dup", st.sampled_from(_FD_DUPS)),
        _p("redirect.named_fd", st.tuples(st.sampled_from((">", "<")), target).map(
            lambda t: f"{{fd}}{t[0]}{t[1]}")),
        _p("herestring", st.sampled_from(PATHS_AND_WORDS).map(lambda w: f"<<< {shell_word(w)}")),
    )


_DELIMITERS = ("EOF", "'EOF'", '"EOF"', "E'O'F", "\\EOF", "E\"O\"F", "'E O F'", "$'EOF'")


def heredoc(inner: S[str]) -> S[str]:
    """`cmd <<DELIM` then its body, the delimiter's line, then more: the
    body is data to bash (or expanded, with an unquoted delimiter), and a
    scanner that misreads where it ends misreads what follows."""
    def build(t: tuple[str, str, str, bool, str]) -> str:
        head, delim, body, dash, after = t
        end = delim.replace("'", "").replace('"', "").replace("\\", "").replace("$", "")
        op = "<<-" if dash else "<<"
        return f"{head} {op}{delim}\n{body}\n{end}\n{after}"
    return _p("heredoc", st.tuples(inner, st.sampled_from(_DELIMITERS),
                                   st.one_of(inner, st.sampled_from(g.WORDS)),
                                   st.booleans(), inner).map(build))


def test_expr(word: S[str]) -> S[str]:
    """`[ … ]` and `[[ … ]]`, with redirections inside (to bash, `[ a > b ]`
    writes b; inside `[[ ]]` it compares)."""
    op = st.sampled_from(("=", "!=", "-eq", "-nt", "<", ">", "-a", "-o", "=~"))
    redir = st.sampled_from(g.PATHS).map(lambda p: f"> {shell_word(p)}")
    return st.one_of(
        _p("test.single", st.tuples(word, op, word).map(lambda t: f"[ {t[0]} {t[1]} {t[2]} ]")),
        _p("test.redirect_inside", st.tuples(word, redir, word).map(
            lambda t: f"[ {t[0]} {t[1]} {t[2]} ]")),
        _p("test.double", st.tuples(word, op, word).map(
            lambda t: f"[[ {t[0]} {t[1]} {t[2]} ]]")),
        _p("test.double_redirect", st.tuples(word, word, redir).map(
            lambda t: f"[[ {t[0]} > {t[1]} ]] {t[2]}")),
        _p("test.builtin", st.tuples(st.sampled_from(("-f", "-e", "-n", "-z")), word).map(
            lambda t: f"test {t[0]} {t[1]}")),
    )
