"""Claude Code's rule grammar: ``Tool``, ``Tool(content)``, escapes, the
whole-tool spellings, WebFetch domains and mcp names; a rule that cannot be
read is a Problem naming where it was written, never an exception."""

from __future__ import annotations

import pytest

from gateway.permissions.rules import (
    Rule,
    domain_matches,
    parse_rule,
    tool_rule_matches,
    unknown_tool,
)
from gateway.permissions.settings import Problem, Source

ORIGIN = ".claude/settings.json:7"


def rule(text: object, behavior: str = "deny", source: Source = Source.PROJECT) -> Rule:
    got = parse_rule(text, behavior, source, ORIGIN, "/proj")  # type: ignore[arg-type]
    assert isinstance(got, Rule), got
    return got


def problem(text: object) -> Problem:
    got = parse_rule(text, "deny", Source.PROJECT, ORIGIN)
    assert isinstance(got, Problem), got
    return got


# -- every form of the docstring ------------------------------------------
@pytest.mark.parametrize(("text", "tool", "content"), [
    ("Bash", "Bash", None),
    ("Bash(npm run test)", "Bash", "npm run test"),
    ("Bash(npm run:*)", "Bash", "npm run:*"),
    ("Bash(git * --oneline)", "Bash", "git * --oneline"),
    ("Bash(ls *)", "Bash", "ls *"),
    ("Read(./secrets/**)", "Read", "./secrets/**"),
    ("Edit(//etc/**)", "Edit", "//etc/**"),
    ("Edit(~/.bashrc)", "Edit", "~/.bashrc"),
    ("Edit(/src/**)", "Edit", "/src/**"),
    ("Edit(*.lock)", "Edit", "*.lock"),
    ("Write(docs/**)", "Write", "docs/**"),
    ("MultiEdit(a.py)", "MultiEdit", "a.py"),
    ("NotebookEdit(*.ipynb)", "NotebookEdit", "*.ipynb"),
    ("WebFetch(domain:x.com)", "WebFetch", "domain:x.com"),
    ("WebFetch(domain:*.x.com)", "WebFetch", "domain:*.x.com"),
    ("mcp__server", "mcp__server", None),
    ("mcp__server__*", "mcp__server__*", None),
    ("mcp__server__tool", "mcp__server__tool", None),
    ("mcp__my-server__get.item", "mcp__my-server__get.item", None),
    ("Glob", "Glob", None),
    ("WebSearch", "WebSearch", None),
])
def test_each_documented_form_reads_as_its_tool_and_content(
        text: str, tool: str, content: str | None) -> None:
    got = rule(text)
    assert (got.tool, got.content) == (tool, content)
    assert got.origin == ORIGIN and got.root == "/proj" and got.behavior == "deny"


@pytest.mark.parametrize("text", ["Bash()", "Bash(*)", "Bash( * )", "Bash(  )", "Read(*)",
                                  "Glob()", "WebFetch(*)"])
def test_empty_parens_and_a_lone_star_mean_the_whole_tool(text: str) -> None:
    got = rule(text)
    assert got.content is None and got.text == text.split("(", maxsplit=1)[0]


@pytest.mark.parametrize(("text", "content"), [
    (r"Bash(echo \(hi\))", "echo (hi)"),
    ("Bash(echo (hi))", "echo (hi)"),           # balanced parens need no escape
    (r"Bash(python -c print\(1\))", "python -c print(1)"),
    ("Read(/x(1))", "/x(1)"),
    (r"Edit(foo\))", "foo)"),
    (r"Bash(printf a\\)", "printf a\\\\"),     # an escaped backslash, then the close
])
def test_escaped_parentheses_are_part_of_the_content(text: str, content: str) -> None:
    assert rule(text).content == content


@pytest.mark.parametrize("text", ["Bash(npm run:*)", r"Bash(echo \(hi\))", "Bash(echo (a))",
                                  "Read(./a b/**)", "WebFetch(domain:x.com)", "mcp__s__t"])
def test_a_rule_reads_back_from_its_own_text(text: str) -> None:
    first = rule(text)
    again = rule(first.text)
    assert (again.tool, again.content) == (first.tool, first.content)


def test_surrounding_whitespace_is_not_part_of_a_rule() -> None:
    assert rule("  Read(./x)\n").text == "Read(./x)"


@pytest.mark.parametrize(("text", "content"), [
    ("WebFetch(domain:Example.COM)", "domain:example.com"),
    ("WebFetch(domain:example.com.)", "domain:example.com"),
    ("WebFetch(domain:*.Docs.Example.com)", "domain:*.docs.example.com"),
])
def test_a_webfetch_domain_is_kept_lowercase_without_the_final_dot(text: str,
                                                                    content: str) -> None:
    assert rule(text).content == content


def test_describe_names_the_rule_its_source_and_where_it_was_written() -> None:
    got = rule("Bash(rm:*)")
    assert got.describe() == "Bash(rm:*) from projectSettings (.claude/settings.json:7)"


# -- what cannot be read ----------------------------------------------------
@pytest.mark.parametrize(("text", "says"), [
    ("Bash(ls", "never closed"),
    (r"Bash(ls\)", "never closed"),             # the only `)` is escaped
    (r"Bash(a) b\)", "never closed"),           # the last `)` is escaped
    ("Bash(ls))x", "never closed"),
    ("", "empty"),
    ("   ", "empty"),
    ("Bash)", "not a rule"),
    ("1Bash", "not a rule"),
    ("Bash ls", "not a rule"),
    ("mcp__srv__to*l", "not a rule"),
    ("(ls)", "not a tool name"),
    ("Bash (ls)", "not a tool name"),
    ("Ba$h(ls)", "not a tool name"),
    ("Glob(*.py)", "take no (content)"),
    ("Grep(TODO)", "take no (content)"),
    ("WebSearch(cats)", "take no (content)"),
    ("WebFetch(example.com)", "WebFetch(domain:example.com)"),
    ("WebFetch(domain:)", "WebFetch(domain:example.com)"),
    ("WebFetch(domain:*)", "WebFetch(domain:example.com)"),
    ("WebFetch(domain:exa mple.com)", "WebFetch(domain:example.com)"),
    ("WebFetch(domain:https://x.com/a)", "WebFetch(domain:example.com)"),
    ("WebFetch(url:https://x.com)", "WebFetch(domain:example.com)"),
])
def test_a_malformed_rule_is_a_problem_naming_where_it_was_written(text: str,
                                                                     says: str) -> None:
    got = problem(text)
    assert got.where == ORIGIN
    assert says in got.message
    assert str(got).startswith(f"{ORIGIN}: ")


@pytest.mark.parametrize("value", [5, None, True, ["Bash"], {"tool": "Bash"}, 1.5])
def test_a_rule_that_is_not_a_string_is_a_problem_not_a_crash(value: object) -> None:
    got = problem(value)
    assert got.where == ORIGIN and "must be a string" in got.message
    assert type(value).__name__ in got.message


def test_content_on_a_tool_nobody_knows_is_a_problem_too() -> None:
    got = problem("Frobnicate(x)")
    assert "Frobnicate" in got.message


# -- unknown tools ------------------------------------------------------------
@pytest.mark.parametrize("text", ["Frobnicate", "bash", "Bash-x", "read", "BashTool"])
def test_an_unknown_tool_name_is_kept_with_a_warning(text: str) -> None:
    got = rule(text)
    warn = unknown_tool(got)
    assert warn is not None and warn.where == ORIGIN
    assert repr(text) in warn.message and "kept" in warn.message


@pytest.mark.parametrize("text", ["Bash", "Read(x)", "Edit", "Glob", "Grep", "WebFetch",
                                  "WebSearch", "Task", "mcp__anything", "mcp__s__t"])
def test_a_known_tool_or_an_mcp_name_gets_no_warning(text: str) -> None:
    assert unknown_tool(rule(text)) is None


# -- whole-tool rules and mcp names ---------------------------------------
@pytest.mark.parametrize(("text", "tool", "matches"), [
    ("Bash", "Bash", True),
    ("Bash", "BashOutput", False),
    ("Bash()", "Bash", True),
    ("Bash(ls)", "Bash", False),                # content: not a whole-tool rule
    ("Read", "Read", True),
    ("Read", "Glob", False),
    ("mcp__srv", "mcp__srv__list", True),
    ("mcp__srv", "mcp__srvx__list", False),
    ("mcp__srv__*", "mcp__srv__list", True),
    ("mcp__srv__*", "mcp__other__list", False),
    ("mcp__srv__list", "mcp__srv__list", True),
    ("mcp__srv__list", "mcp__srv__lists", False),
    ("mcp__srv__list", "mcp__srv__other", False),
    ("mcp__srv", "Bash", False),
])
def test_whole_tool_rules_name_their_tool_and_an_mcp_server_its_tools(
        text: str, tool: str, matches: bool) -> None:
    assert tool_rule_matches(rule(text), tool) is matches


@pytest.mark.parametrize(("text", "host", "matches"), [
    ("WebFetch(domain:example.com)", "example.com", True),
    ("WebFetch(domain:example.com)", "EXAMPLE.com.", True),
    ("WebFetch(domain:example.com)", "www.example.com", False),
    ("WebFetch(domain:example.com)", "example.com.evil.net", False),
    ("WebFetch(domain:*.example.com)", "docs.example.com", True),
    ("WebFetch(domain:*.example.com)", "a.b.example.com", True),
    ("WebFetch(domain:*.example.com)", "example.com", False),   # not the apex
    ("WebFetch(domain:*.example.com)", "evilexample.com", False),
    ("WebFetch", "example.com", False),                         # no content: the tool rule
])
def test_a_domain_rule_is_its_host_and_a_star_its_subdomains(
        text: str, host: str, matches: bool) -> None:
    assert domain_matches(rule(text), host) is matches
