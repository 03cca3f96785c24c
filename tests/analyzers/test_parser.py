"""tree-sitter -> IR, and the known differentials between tree-sitter and
bash, each with the command that exposes it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from analyzers import ParseStatus, Verdict, analyze_bash
from analyzers.bash.legacy import parse_legacy
from analyzers.bash.parser import parse_tree_sitter

CWD = "/home/user/project"
HOME = "/home/user"


def argvs(command: str) -> list[tuple[str, ...]]:
    return [c.argv for c in parse_tree_sitter(command, home=HOME, cwd=CWD).commands]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la", [("ls", "-la")]),
        ("ls | grep x && cat y; pwd", [("ls",), ("grep", "x"), ("cat", "y"), ("pwd",)]),
        # bash joins backslash-newline; tree-sitter splits the word in two
        ("r\\\nm -rf /tmp/x", [("rm", "-rf", "/tmp/x")]),
        ("ls \\\n  -la", [("ls", "-la")]),
        # ...but not inside single quotes, where it is literal
        ("echo 'a\\\nb'", [("echo", "a\\\nb")]),
        # an escaped backslash before a newline is not a continuation
        ("echo a\\\\\nls", [("echo", "a\\"), ("ls",)]),
        # words keep their quotes in the tree; the IR unquotes them
        ("ca't' \"READ\"ME", [("cat", "README")]),
        ("echo \"a\\$b\" 'c\\d'", [("echo", "a$b", "c\\d")]),
        # ANSI-C strings are decoded: $'\x72\x6d' is rm
        ("$'\\x72\\x6d' -rf x", [("rm", "-rf", "x")]),
        ("echo $'\\101\\u00e9\\t'", [("echo", "A\u00e9\t")]),
        # $"..." (translated string) is one word, not `$` + a string
        ('ls $"sr"c', [("ls", "src")]),
        # redirects may stand before the command name
        ("> out cat x", [("cat", "x")]),
        ("2>/dev/null ls", [("ls",)]),
        # tilde and $HOME expand to the home directory the command will see
        ("ls ~ ~/x ~+/y", [("ls", HOME, f"{HOME}/x", f"{CWD}/y")]),
        ('cat "$HOME/.bashrc"', [("cat", f"{HOME}/.bashrc")]),
        # variables assigned earlier in the same line are resolved
        ("d=src; ls $d", [(), ("ls", "src")]),
        ("export D=/etc && cat $D/passwd", [("export", "D=/etc"), ("cat", "/etc/passwd")]),
        ('unset X; rm -rf "$X/"', [("unset", "X"), ("rm", "-rf", "/")]),
        # test commands are argv too
        ("[ -d a ] && [[ -f b ]]", [("[", "-d", "a", "]"), ("[[", "-f", "b", "]]")]),
        # comments are not commands
        ("ls # a comment", [("ls",)]),
    ],
)
def test_parser_produces_the_argv_bash_would_run(
    command: str, expected: list[tuple[str, ...]]
) -> None:
    assert argvs(command) == expected


@pytest.mark.parametrize(
    ("command", "reason_part"),
    [
        ("echo $(id)", "command substitution"),
        ("echo `id`", "command substitution"),
        ("tee >(ls)", "process substitution"),
        ("cat x<(ls)", "process substitution inside a word"),
        ("echo $((1+2))", "arithmetic"),
        ("echo ${x@P}", "parameter expansion"),
        ("echo ${!x}", "parameter expansion"),
        ("ls $UNKNOWN", "unresolved variable"),
        ("$CMD arg", "unresolved variable"),
        ("x='a b'; ls $x", "split or globbed"),
        ("if true; then ls; fi", "if statement"),
        ("for f in *; do cat $f; done", "for statement"),
        ("while true; do ls; done", "while statement"),
        ("case x in a) ls;; esac", "case statement"),
        ("f() { ls; }", "function definition"),
        ("echo a;; ls", "unexpected token ';;'"),
        ("echo 'unterminated", "syntax error"),
        ("ls &&", "syntax error"),
        ("a[$(id)]=1", "array subscript"),
        ("cat <<EOF\n$(id)\nEOF", "here-document"),
        ("ls >&- extra", "word after '>&-'"),
        ("r\0m -rf x", "NUL byte"),
    ],
)
def test_constructs_the_analyzer_cannot_resolve_make_the_parse_too_complex(
    command: str, reason_part: str
) -> None:
    result = parse_tree_sitter(command, home=HOME, cwd=CWD)
    assert result.status is ParseStatus.TOO_COMPLEX
    assert any(reason_part in r for r in result.reasons), result.reasons


@pytest.mark.parametrize(
    "command",
    [
        "cat <<'EOF'\n$(id) `id` ${x}\nEOF",
        "cat <<EOF\nplain text\nEOF",
        'cat <<"EOF" | grep x\n$(not run)\nEOF',
        "echo '$(not run)' \"literal\"",
    ],
)
def test_quoted_heredocs_and_literal_strings_stay_simple(command: str) -> None:
    assert parse_tree_sitter(command, home=HOME, cwd=CWD).status is ParseStatus.SIMPLE


def test_commands_inside_substitutions_are_still_collected_for_hard_limits() -> None:
    result = parse_tree_sitter("echo $(rm -rf /) && if x; then dd of=/dev/sda; fi", home=HOME)
    nested = [c.argv for c in result.commands if c.nested]
    assert ("rm", "-rf", "/") in nested
    assert ("dd", "of=/dev/sda") in nested


def test_heredoc_with_a_pipeline_keeps_the_pipeline_commands() -> None:
    assert argvs("cat <<EOF | grep x && ls\nbody\nEOF") == [("cat",), ("grep", "x"), ("ls",)]


def test_trailing_redirect_belongs_to_the_last_command_not_the_whole_list() -> None:
    commands = parse_tree_sitter("cd src && cat x | grep y > out", home=HOME).commands
    assert [bool(c.redirects) for c in commands] == [False, False, True]


def test_group_redirect_applies_to_every_command_of_the_group() -> None:
    commands = parse_tree_sitter("{ a; b; } > out", home=HOME).commands
    assert all(c.redirects for c in commands)


def test_subshells_and_pipeline_stages_get_their_own_scope() -> None:
    commands = parse_tree_sitter("(cd a && ls) && pwd | cat", home=HOME).commands
    cd, ls, pwd, cat = commands
    assert cd.scope == ls.scope != ()
    assert pwd.scope != cat.scope
    assert not set(cd.scope) & set(pwd.scope)


def test_deeply_nested_substitutions_stop_the_walk_instead_of_recursing_forever() -> None:
    command = "echo " + "$(" * 2000 + "x" + ")" * 2000
    result = parse_tree_sitter(command, home=HOME)
    assert result.status is ParseStatus.TOO_COMPLEX


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la | grep x", [("ls", "-la"), ("grep", "x")]),
        ("a && b || c; d & e", [("a",), ("b",), ("c",), ("d",), ("e",)]),
        ("echo 'a;b' \"c|d\"", [("echo", "a;b", "c|d")]),
        ("r\\\nm -rf x", [("rm", "-rf", "x")]),
        ("$'\\x72\\x6d' x", [("rm", "x")]),
    ],
)
def test_legacy_splitter_produces_the_same_ir_for_plain_commands(
    command: str, expected: list[tuple[str, ...]]
) -> None:
    result = parse_legacy(command, home=HOME, cwd=CWD)
    assert result.status is ParseStatus.PARSE_UNAVAILABLE
    assert [c.argv for c in result.commands] == expected


@pytest.mark.parametrize(
    "command", ["echo $(id)", "ls `pwd`", "if true; then ls; fi", "cat <<EOF\nx\nEOF", "ls 'a"]
)
def test_legacy_splitter_records_what_it_does_not_understand(command: str) -> None:
    assert parse_legacy(command, home=HOME, cwd=CWD).reasons


def test_legacy_splitter_allows_plain_read_only_commands() -> None:
    result = analyze_bash("ls -la src | grep x", CWD, home=HOME, use_tree_sitter=False)
    assert result.parse is ParseStatus.PARSE_UNAVAILABLE
    assert result.verdict is Verdict.ALLOW


def test_the_grammar_loaded_directly_is_the_packaged_bash_grammar() -> None:
    """grammar.py loads tree_sitter_bash's extension without the package's
    __init__ (which costs ~10 ms of importlib.resources); it must be the
    very grammar the package would give."""
    import tree_sitter
    import tree_sitter_bash

    from analyzers.bash.grammar import bash_language

    direct = tree_sitter.Language(bash_language())
    packaged = tree_sitter.Language(tree_sitter_bash.language())
    assert direct.abi_version == packaged.abi_version
    assert direct.node_kind_count == packaged.node_kind_count
    assert [direct.node_kind_for_id(i) for i in range(direct.node_kind_count)] == [
        packaged.node_kind_for_id(i) for i in range(packaged.node_kind_count)
    ]


def test_a_grammar_package_of_another_layout_falls_back_to_the_ordinary_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tree_sitter

    from analyzers.bash import grammar

    monkeypatch.setattr(grammar, "_binding_module", lambda _package: None)
    language = tree_sitter.Language(grammar.bash_language())
    tree = tree_sitter.Parser(language).parse(b"ls | wc -l")
    assert tree.root_node.type == "program"
    assert not tree.root_node.has_error


def test_a_tree_sitter_package_of_another_layout_falls_back_to_the_ordinary_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tree_sitter

    from analyzers.bash import grammar

    monkeypatch.setattr(grammar, "_binding_module", lambda _package: None)
    assert grammar.tree_sitter_module() is tree_sitter


_COLD_TREE_SITTER = """
import sys
from analyzers.bash import parser
loaded_alone = "tree_sitter" not in sys.modules
re_after_load = "re" in sys.modules
import tree_sitter
language = tree_sitter.Language(parser.bash_language())
tree = parser._parser().parse(b"echo abc; ls")
query = tree_sitter.Query(language, '((word) @w (#match? @w "^a"))')
words = [n.text.decode() for n in tree_sitter.QueryCursor(query).captures(tree.root_node)["w"]]
print(loaded_alone, re_after_load, tree_sitter.Parser is parser.tree_sitter.Parser,
      isinstance(tree.root_node, tree_sitter.Node), type(sys.modules["re"].compile("x")).__name__,
      words)
"""


def test_tree_sitter_loaded_without_its_package_is_the_package_s_own_and_runs_regex_queries(
) -> None:
    # grammar.py loads tree_sitter's extension alone (its package imports
    # typing) with a stand-in for re while it loads: the package imported
    # later must give the very same types, and a #match? predicate (the one
    # use the extension has for re) must still compile with the real re.
    done = subprocess.run([sys.executable, "-c", _COLD_TREE_SITTER], capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded_alone, re_after_load, same_parser, same_node, compiled, words = (
        done.stdout.split(None, 5))
    assert (loaded_alone, same_parser, same_node) == ("True", "True", "True")
    from regexes import engine_key, table

    if engine_key() == table.ENGINE:  # else re compiles the analyzer's own patterns
        assert re_after_load == "False"  # the stand-in left with the load
    assert (compiled, words.strip()) == ("Pattern", "['abc']")
