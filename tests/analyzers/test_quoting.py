"""``extract_quoted_content``: the three quote views and the desync flags.

``with_double_quotes`` drops single-quoted content and keeps double-quoted
content (substitution is live there); ``fully_unquoted`` drops all quoted
content; ``unquoted_keep_quote_chars`` drops it but keeps the quote characters
so adjacency such as ``'x'#`` stays visible. Escapes are kept in every view.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import QuoteViews, extract_quoted_content
from values import FrozenInstanceError


def views(
    wdq: str,
    unquoted: str,
    keep: str,
    *,
    unterminated: bool = False,
    desync: bool = False,
    quoted_nl_hash: bool = False,
) -> QuoteViews:
    return QuoteViews(
        with_double_quotes=wdq,
        fully_unquoted=unquoted,
        unquoted_keep_quote_chars=keep,
        unterminated=unterminated,
        comment_quote_desync=desync,
        quoted_newline_hash=quoted_nl_hash,
    )


CASES = [
    pytest.param("ls -la", views("ls -la", "ls -la", "ls -la"), id="no-quotes"),
    pytest.param("", views("", "", ""), id="empty"),
    pytest.param('""', views("", "", '""'), id="empty-double-quotes"),
    pytest.param(
        "echo '$(x)' \"$(y)\"",
        views("echo  $(y)", "echo  ", "echo '' \"\""),
        id="single-quotes-kill-substitution-double-quotes-keep-it",
    ),
    pytest.param(
        'a"b\'c"d',
        views("ab'cd", "ad", 'a""d'),
        id="single-quote-char-inside-double-quotes-is-literal",
    ),
    pytest.param(
        "a'b\"c'd",
        views("ad", "ad", "a''d"),
        id="double-quote-char-inside-single-quotes-is-literal",
    ),
    pytest.param(
        'echo "it\'s" \'say "hi"\'',
        views("echo it's ", "echo  ", "echo \"\" ''"),
        id="each-kind-nested-in-the-other",
    ),
    pytest.param(
        'echo \\"x',
        views('echo \\"x', 'echo \\"x', 'echo \\"x'),
        id="escaped-double-quote-opens-nothing",
    ),
    pytest.param(
        "echo \\'x",
        views("echo \\'x", "echo \\'x", "echo \\'x"),
        id="escaped-single-quote-opens-nothing",
    ),
    pytest.param(
        'echo "a\\"b"',
        views('echo a\\"b', "echo ", 'echo ""'),
        id="escaped-double-quote-inside-double-quotes-does-not-close",
    ),
    pytest.param(
        "echo 'a\\'b",
        views("echo b", "echo b", "echo ''b"),
        id="backslash-inside-single-quotes-is-literal-and-the-quote-closes",
    ),
    pytest.param(
        'echo "a\\\\" b',
        views("echo a\\\\ b", "echo  b", 'echo "" b'),
        id="escaped-backslash-before-closing-double-quote",
    ),
    pytest.param(
        'echo "\\$(x)"',
        views("echo \\$(x)", "echo ", 'echo ""'),
        id="escape-kept-in-double-quoted-content",
    ),
    pytest.param(
        "echo \\$\\(x\\)",
        views("echo \\$\\(x\\)", "echo \\$\\(x\\)", "echo \\$\\(x\\)"),
        id="escapes-kept-outside-quotes",
    ),
    pytest.param(
        "echo a\\\nb",
        views("echo a\\\nb", "echo a\\\nb", "echo a\\\nb"),
        id="line-continuation-kept",
    ),
    pytest.param(
        "echo 'x'#",
        views("echo #", "echo #", "echo ''#"),
        id="quote-directly-before-hash-visible-in-keep-view",
    ),
    pytest.param(
        "a#'b'",
        views("a#", "a#", "a#''"),
        id="mid-word-hash-is-not-a-comment",
    ),
    pytest.param(
        'echo "#""\'"',
        views("echo #'", "echo ", 'echo """"'),
        id="hash-and-apostrophe-inside-double-quotes",
    ),
    pytest.param(
        'echo ${#x} "it\'s"',
        views("echo ${#x} it's", "echo ${#x} ", 'echo ${#x} ""'),
        id="hash-after-brace-is-not-a-comment",
    ),
    pytest.param(
        "ls # it's",
        views("ls # it", "ls # it", "ls # it'", unterminated=True, desync=True),
        id="apostrophe-in-comment-desyncs",
    ),
    pytest.param(
        "ls #it's\nrm x #'",
        views("ls #it", "ls #it", "ls #it''", desync=True),
        id="comment-apostrophe-hides-the-next-line",
    ),
    pytest.param(
        ';#"',
        views(";#", ";#", ';#"', unterminated=True, desync=True),
        id="comment-right-after-semicolon",
    ),
    pytest.param(
        "echo x\n# it's",
        views("echo x\n# it", "echo x\n# it", "echo x\n# it'", unterminated=True, desync=True),
        id="comment-line-after-newline",
    ),
    pytest.param(
        'echo "unterminated',
        views("echo unterminated", "echo ", 'echo "', unterminated=True),
        id="unterminated-double-quote",
    ),
    pytest.param(
        "echo 'unterminated",
        views("echo ", "echo ", "echo '", unterminated=True),
        id="unterminated-single-quote",
    ),
    pytest.param(
        "x'#",
        views("x", "x", "x'", unterminated=True),
        id="hash-swallowed-by-unterminated-quote",
    ),
    pytest.param(
        'echo "a\n#b"',
        views("echo a\n#b", "echo ", 'echo ""', quoted_nl_hash=True),
        id="double-quoted-newline-then-hash",
    ),
    pytest.param(
        "echo 'a\n  #b'",
        views("echo ", "echo ", "echo ''", quoted_nl_hash=True),
        id="single-quoted-newline-then-indented-hash",
    ),
    pytest.param(
        'echo "a\nb"',
        views("echo a\nb", "echo ", 'echo ""'),
        id="quoted-newline-without-hash",
    ),
    pytest.param(
        "echo 'a\n b#'",
        views("echo ", "echo ", "echo ''"),
        id="quoted-newline-hash-not-first-on-its-line",
    ),
    pytest.param(
        "echo x\n# c",
        views("echo x\n# c", "echo x\n# c", "echo x\n# c"),
        id="unquoted-newline-then-comment",
    ),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_quote_views_match_what_bash_would_interpret(command: str, expected: QuoteViews) -> None:
    assert extract_quoted_content(command) == expected


def test_ansi_c_string_with_an_escaped_quote_is_terminated() -> None:
    assert extract_quoted_content("echo $'it\\'s'").unterminated is False


def test_quote_views_are_immutable() -> None:
    v = extract_quoted_content("echo 'x'")
    with pytest.raises(FrozenInstanceError):
        v.fully_unquoted = "rm -rf ~"  # type: ignore[misc]


@given(st.text(alphabet=st.characters(exclude_characters="'\"#\\")))
def test_text_without_quotes_hash_or_backslash_is_its_own_view_in_all_three(text: str) -> None:
    v = extract_quoted_content(text)
    assert v.with_double_quotes == v.fully_unquoted == v.unquoted_keep_quote_chars == text
    assert not (v.unterminated or v.comment_quote_desync or v.quoted_newline_hash)


@given(st.text(alphabet="ab $()#'\"\\\n;"))
def test_fully_unquoted_is_the_keep_view_minus_its_quote_characters(text: str) -> None:
    v = extract_quoted_content(text)
    assert len(v.fully_unquoted) <= len(v.with_double_quotes)
    assert len(v.fully_unquoted) <= len(v.unquoted_keep_quote_chars)
    # Quote characters are the only difference between the two unquoted views,
    # and every removed character was a quote character.
    assert _drop_unescaped_quotes(v.unquoted_keep_quote_chars) == v.fully_unquoted


def _drop_unescaped_quotes(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append(s[i : i + 2])
            i += 2
            continue
        if s[i] not in "'\"":
            out.append(s[i])
        i += 1
    return "".join(out)


_QUOTING_ALPHABET = ["", "a", "'", '"', " ", "é", "\n", "$x", "-", "@%+=:,./", "_", "\x00", "*",
                     "١", "ﬁ", "\\", "!", "~", "#"]


@pytest.mark.parametrize("word", ["", *_QUOTING_ALPHABET,
                                  *(a + b for a in _QUOTING_ALPHABET for b in _QUOTING_ALPHABET)])
def test_a_word_is_quoted_as_shlex_quotes_it(word: str) -> None:
    # shell_quote stands in for shlex.quote (a cold start does not import
    # shlex): the suggested exact rule must be the very string shlex gave
    import shlex

    from analyzers.bash.quoting import shell_quote

    assert shell_quote(word) == shlex.quote(word)


def test_an_argv_joined_splits_back_to_itself() -> None:
    import shlex

    from analyzers import shell_join

    argv = ["echo", "it's", "$HOME", "a b", "", "--x=1"]
    assert shell_join(argv) == shlex.join(argv)
    assert shlex.split(shell_join(argv)) == argv
