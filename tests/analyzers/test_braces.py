"""Brace expansion is emulated exactly as the installed bash does it, and
the forms it does not emulate keep asking."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzers import Verdict, analyze_bash
from analyzers.bash.braces import expand_braces


def bash_expands(word: str) -> tuple[str, ...]:
    """What bash makes of the unquoted ``word``, every resulting word."""
    out = subprocess.run(
        ["bash", "-c", f'set -- {word}; printf "%s\\0" "$#" "$@"'],
        capture_output=True,
        check=True,
        timeout=10,
    ).stdout
    count, *words = out.split(b"\0")[:-1]
    assert int(count) == len(words)
    return tuple(w.decode() for w in words)


EMULATED = [
    "{1..3}", "{a,b}", "x{,}y", "{,}", "{,a}", "a{b,c}d{e,f}", "{1..10..3}", "{10..1..3}",
    "{a..e..2}", "{e..a}", "{A..C}", "src/{a,b}.py", "{cat,/etc/passwd}", "{-o,x}", "a,b",
    "{a..b,c}", "{..,x}/s", "{1..3}{a,b}", "{1..0}", "{0..0}", "{5..5..2}", "--{output,x}=f",
    "{a,,b}", "f{,.bak}",
]


@pytest.mark.parametrize("word", EMULATED)
def test_an_emulated_brace_word_expands_as_bash_expands_it(word: str) -> None:
    assert expand_braces(word) == bash_expands(word)


REFUSED = [
    "{01..3}",  # zero padding
    "{Z..a}",  # walks through [ \ ] ^ _ `
    "{a}", "{a}{b,c}", "{1..a}", "x}", "{x", "{{a,b}}", "{a,b}}", "@{0}",
    "{1..100000}",  # too many words
    "{a,'b'}", "{a,$X}", "{a,*}", "~/{a,b}", "{a,b\\,c}",
]


@pytest.mark.parametrize("word", REFUSED)
def test_a_brace_word_outside_the_emulated_forms_is_refused(word: str) -> None:
    assert expand_braces(word) is None


_PIECES = st.sampled_from(["a", "b", "1", "3", "-", ".", "/", ",", "..", "{", "}", "x=", "10"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=9).map("".join))
def test_every_word_the_emulation_accepts_expands_as_bash_expands_it(word: str) -> None:
    words = expand_braces(word)
    if words is not None:
        assert words == bash_expands(word)


@pytest.mark.parametrize(
    "command",
    ["echo {1..3}", "ls src/{a,b}.py", "wc -l {README,LICENSE}.md", "cat f{1..3}.txt"],
)
def test_brace_expansion_into_files_inside_the_project_is_allowed(command: str) -> None:
    assert analyze_bash(command, "/p", home="/h").verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    ("command", "why"),
    [
        # the expanded words are judged like typed ones
        ("cat {/etc/shadow,x}", "sensitive"),
        ("{cat,/etc/shadow}", ""),  # tree-sitter: a syntax error
        ("cat {..,x}/secret", "outside"),
        ("git diff {HEAD,--output=/tmp/x}", "--output"),
        ("sort {-o,out.txt} in.txt", "-o"),
        # not emulated: keeps asking under check 16
        ("git diff {@'{'0},--output=/tmp/pwned}", "brace"),
        ("echo {a,$X}", ""),
    ],
)
def test_brace_expansion_hiding_an_option_or_a_path_is_not_allowed(command: str, why: str) -> None:
    a = analyze_bash(command, "/p", home="/h")
    assert a.verdict is not Verdict.ALLOW
    assert why in str(a.to_dict()).lower()
