"""Hostile or broken input never crashes the analyzer and never gets an
allow: each case yields a fail-closed verdict, in bounded time (the timeout
marker turns a hang into a failure; speed itself is measured in bench/)."""

from __future__ import annotations

import pytest

from analyzers import MAX_COMMAND_CHARS, AnalyzerError, Verdict, analyze_bash

CWD = "/home/user/project"

HOSTILE = {
    "empty": "",
    "whitespace": "   \n\t ",
    "one-megabyte": "echo " + "a" * 1_000_000,
    "just-over-the-limit": "ls " + "x" * MAX_COMMAND_CHARS,
    "binary-garbage": bytes(range(256)).decode("latin-1") * 40,
    "invalid-utf8": b"ls \xff\xfe\x80 && cat x".decode("utf-8", "surrogateescape"),
    "lone-surrogate": "ls \ud800",
    "nested-substitutions": "$(" * 10_000,
    "nested-substitutions-closed": "echo " + "$(" * 3000 + "ls" + ")" * 3000,
    "nested-subshells": "(" * 5000 + "ls" + ")" * 5000,
    "nested-braces": "{ " * 3000 + "ls" + "; }" * 3000,
    "nested-quotes": "\"$(echo '" * 2000,
    "many-subcommands": "ls; " * 5000,
    "many-pipes": "cat x | " * 3000 + "cat",
    "nul-bytes": "\0" * 1000,
    "only-operators": "&& || ; | & ;;" * 500,
    "control-characters": "".join(chr(c) for c in range(32)) * 50,
    "unicode-soup": "ls \u202e\u2066\u00a0\ufeff\u3000" * 500,
    "heredoc-without-end": "cat <<EOF\n" + "line\n" * 10_000,
    "unterminated-everything": "echo \"'$(`${[",
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("command", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_gets_a_fail_closed_verdict(command: str) -> None:
    result = analyze_bash(command, CWD, home="/home/user")
    assert result.verdict is not Verdict.ALLOW
    assert result.reason
    result.to_dict()  # serializable, whatever the input


@pytest.mark.timeout(20)
@pytest.mark.parametrize("command", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_survived_by_the_legacy_splitter_too(command: str) -> None:
    result = analyze_bash(command, CWD, home="/home/user", use_tree_sitter=False)
    assert result.verdict is not Verdict.ALLOW


@pytest.mark.timeout(20)
@pytest.mark.parametrize("command", [
    "ls " + "*/" * 1500 + "x",           # a glob 1,500 directories deep (RecursionError)
    "cat " + "*/" * 1500 + ".ssh/*",     # ... and matched against the sensitive list
    "cd src; " * 4000 + "ls",            # 4,000 working directories, each judged (quadratic)
], ids=["deep-glob", "deep-glob-sensitive", "long-cd-chain"])
def test_what_the_fuzzer_found_slow_or_raising_is_answered(command: str) -> None:
    """From `shellgate fuzz --mode deep`: the recursive glob matcher overflowed
    the stack, and every `cd` added a working directory every later command
    was judged in."""
    for ts in (True, False):
        result = analyze_bash(command, CWD, home="/home/user", use_tree_sitter=ts)
        assert result.reason or result.verdict is Verdict.ALLOW
        result.to_dict()


def test_a_huge_but_plain_command_is_analyzed_like_any_other() -> None:
    result = analyze_bash("ls " + "a/" * 40_000, CWD)
    assert result.verdict is Verdict.ALLOW
    assert result.paths[0].inside_cwd


def test_a_command_over_the_size_limit_is_not_parsed_and_says_why() -> None:
    result = analyze_bash("ls " + "x" * MAX_COMMAND_CHARS, CWD)
    assert result.verdict is Verdict.ASK
    assert str(MAX_COMMAND_CHARS) in result.reason


def test_more_than_fifty_subcommands_are_never_allowed_even_if_all_read_only() -> None:
    result = analyze_bash(" && ".join(["ls"] * 51), CWD)
    assert result.verdict is Verdict.ASK
    assert "more than 50" in result.reason
    assert analyze_bash(" && ".join(["ls"] * 50), CWD).verdict is Verdict.ALLOW


def test_a_hard_limit_after_sixty_harmless_subcommands_is_still_denied() -> None:
    result = analyze_bash("true && " * 60 + "rm -rf /", CWD)
    assert result.verdict is Verdict.DENY


@pytest.mark.parametrize("cwd", ["relative/dir", "", "~/x"])
def test_a_relative_working_directory_is_a_caller_error(cwd: str) -> None:
    with pytest.raises(AnalyzerError):
        analyze_bash("ls", cwd)


@pytest.mark.parametrize("command", [
    "!", "! ", "ls; !", "ls && !", "ls | !",          # a `!` with nothing to negate
    "ls(echo)", "ls (echo)", "x=1 (ls)", "cat notes.txt (ls)",  # `(` right after a word
])
def test_the_legacy_splitter_never_allows_what_it_reads_as_nothing(command: str) -> None:
    """From `shellgate fuzz` and the atheris harness: the legacy splitter read
    these as nothing, or as `ls; (echo)`, and allowed them; tree-sitter sees
    syntax errors."""
    assert analyze_bash(command, CWD, use_tree_sitter=False).verdict is not Verdict.ALLOW
    assert analyze_bash(command, CWD).verdict is not Verdict.ALLOW


def test_a_line_continuation_in_a_comment_does_not_hide_the_next_line_from_the_legacy_splitter(
) -> None:
    """bash ends a comment at the newline: `ls # \\` then `cat /etc/shadow`
    runs cat (from a review: the legacy splitter joined the lines first)."""
    command = "ls # \\\ncat /etc/shadow"
    assert analyze_bash(command, CWD, use_tree_sitter=False).verdict is not Verdict.ALLOW


@pytest.mark.parametrize("command", ["ls | ! cat", "ls |& ! cat", "! ls | ! wc -l",
                                     "! jq '.a' notes.txt | ! jq '.b' notes.txt"])
def test_a_negation_after_a_pipe_is_not_analyzed_since_bash_refuses_it(command: str) -> None:
    """tree-sitter reads `a | ! b`; `bash -n` calls it a syntax error (found
    by `shellgate fuzz`'s bash_syntax property); nor by the legacy splitter,
    which must never be the more permissive."""
    assert analyze_bash(command, CWD).verdict is not Verdict.ALLOW
    assert analyze_bash(command, CWD, use_tree_sitter=False).verdict is not Verdict.ALLOW
