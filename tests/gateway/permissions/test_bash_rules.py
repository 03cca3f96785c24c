"""Bash rule content against commands: exact, the legacy ``:*`` prefix,
``*`` wildcards; and which text each kind of rule sees — an allow rule the
command as written (or without harmless wrappers and variables), a deny or
ask rule every view of it. The subcommands are the analyzer's own."""

from __future__ import annotations

import pytest

from analyzers import Subcommand, analyze_bash
from gateway.permissions.bash_rules import allow_views, command_matches, strict_views

CWD = "/work/ws"
HOME = "/home/u"


def subcommands(command: str) -> tuple[Subcommand, ...]:
    subs = analyze_bash(command, CWD, home=HOME).subcommands
    assert subs, command
    return subs


def allowed_by(content: str, command: str) -> bool:
    """Does an allow rule with this content cover every subcommand?"""
    return all(any(command_matches(content, v) for v in allow_views(sub))
               for sub in subcommands(command) if sub.argv or sub.raw_argv)


def denied_by(content: str, command: str) -> bool:
    """Does a deny (or ask) rule with this content name some subcommand?"""
    return any(command_matches(content, v) for sub in subcommands(command)
               for v in strict_views(sub))


# -- the three forms, on plain text -----------------------------------------
@pytest.mark.parametrize(("content", "command", "expected"), [
    # exact
    ("npm test", "npm test", True),
    ("npm test", "npm test --watch", False),
    ("npm test", "npm tests", False),
    ("npm test", "  npm test  ", True),
    # the legacy prefix keeps the word boundary
    ("npm run:*", "npm run", True),
    ("npm run:*", "npm run build", True),
    ("npm run:*", "npm run build -- --prod", True),
    ("npm run:*", "npm run-script build", False),
    ("npm run:*", "npm runx", False),
    ("npm run:*", "npm", False),
    ("npm run:*", "xnpm run build", False),
    ("npm run :*", "npm run build", True),
    ("git:*", "git", True),
    ("git:*", "gitk", False),
    # `*` anywhere matches any text
    ("git * main", "git push origin main", True),
    ("git * main", "git merge main", True),
    ("git * main", "git push origin main2", False),
    ("git * main", "git main", False),
    ("* install", "npm install", True),
    ("* install", "pip install", True),
    ("* install", "npm install lodash", False),
    ("npm * --save", "npm install lodash --save", True),
    ("a*b*c", "aXXbYYc", True),
    ("a*b*c", "aXXbYY", False),
    # one trailing ` *`: the boundary, and it may match nothing
    ("ls *", "ls", True),
    ("ls *", "ls -la", True),
    ("ls *", "ls -la /tmp", True),
    ("ls *", "lsof", False),
    ("ls *", "lsof -i", False),
    # no space before the star: no boundary
    ("ls*", "lsof", True),
    ("ls*", "ls", True),
    ("ls*", "ls -la", True),
    ("npm run test*", "npm run test:unit", True),
    # several stars: each one any text, the last one too (no optional tail)
    ("git * main *", "git push origin main --force", True),
    ("git * main *", "git push origin main", False),
    # `\*` is a literal star
    ("echo \\*", "echo *", True),
    ("echo \\*", "echo hello", False),
    ("rm \\*.tmp *", "rm *.tmp", True),
    ("rm \\*.tmp *", "rm a.tmp", False),
    ("echo a\\*b", "echo a*b", True),
    ("echo a\\*b", "echo aXb", False),
    # regex characters are plain text
    ("grep a.b", "grep axb", False),
    ("grep (a|b)", "grep (a|b)", True),
    ("echo $HOME", "echo $HOME", True),
    ("echo +", "echo ++", False),
])
def test_exact_prefix_and_wildcard_contents_match_as_documented(
        content: str, command: str, expected: bool) -> None:
    assert command_matches(content, command) is expected


@pytest.mark.parametrize(("content", "command"), [
    (" rm:*", "rm -rf x"),
    ("rm:* ", "rm -rf x"),
    ("npm test ", "npm test"),
    (" npm test", "npm test"),
    ("ls  *", "ls -la"),
    ("ls  *", "ls"),
    (" git * main ", "git push main"),
    ("echo \\*:*", "echo * x"),
])
def test_a_stray_space_in_a_rule_does_not_make_it_match_nothing(content: str,
                                                                 command: str) -> None:
    """The bug: the rule was used as written while the command is stripped,
    so `Bash( rm:*)` as a deny protected nothing."""
    assert command_matches(content, command)


def test_a_legacy_prefix_rule_keeps_the_word_boundary() -> None:
    assert command_matches("rm:*", "rm -rf x")
    assert not command_matches("rm:*", "rmdir x")


def test_a_trailing_space_star_keeps_the_word_boundary_but_a_bare_star_does_not() -> None:
    assert not command_matches("ls *", "lsof")
    assert command_matches("ls*", "lsof")


# -- allow rules: the command as written, or without harmless wrappers -----------
@pytest.mark.parametrize(("content", "command"), [
    ("npm run:*", "npm run build"),
    ("npm run:*", "NODE_ENV=prod npm run build"),     # a safe variable is stripped
    ("npm run:*", "timeout 5 npm run build"),         # a timing wrapper too
    ("npm run:*", "NODE_ENV=prod timeout 5 npm run build"),
    ("npm run:*", "nice -n 5 npm run build"),
    ("npm run:*", "npm run build && npm run test"),
    ("git status:*", "git  status   -s"),             # the words re-joined
    ("git status:*", "git 'status' -s"),
    ("git status", "git status"),
    ("git log:*", "git log --format='%h %s' main"),
    ("rm:*", "/bin/rm -rf x"),                        # a system program by its name
    ("FOO=1 npm run:*", "FOO=1 npm run build"),       # what is written is what is allowed
    ("sudo npm run:*", "sudo npm run build"),
])
def test_an_allow_rule_covers_the_command_and_its_harmless_spellings(content: str,
                                                                      command: str) -> None:
    assert allowed_by(content, command)


@pytest.mark.parametrize("command", [
    "FOO=1 npm run build",               # an unknown variable changes what runs
    "sudo npm run build",
    "LD_PRELOAD=x.so npm run build",
    "env FOO=1 npm run build",
    "xargs npm run build",
    "exec npm run build",
    "./npm run build",                   # a program of the working directory
    "/tmp/evil/npm run build",
    "npm run-script build",
    "npm run\\ build",                   # one word `run build`, not `run`
    "npm run build; rm -rf x",           # every subcommand needs its own allow
    "npm run build | sh",
])
def test_an_allow_rule_never_covers_a_command_behind_a_dangerous_wrapper_or_variable(
        command: str) -> None:
    assert not allowed_by("npm run:*", command)


# -- deny and ask rules: every view ------------------------------------------------
@pytest.mark.parametrize("command", [
    "npm run build",
    "FOO=1 npm run build",
    "sudo npm run build",
    "LD_PRELOAD=x.so npm run build",
    "env FOO=1 npm run build",
    "NODE_ENV=prod timeout 5 npm run build",
    "echo ok && npm run build",
    "npm  run  build",
])
def test_a_deny_rule_sees_through_every_wrapper_and_variable(command: str) -> None:
    assert denied_by("npm run:*", command)


@pytest.mark.parametrize("command", [
    "rm -rf x",
    "/bin/rm -rf x",
    "/usr/bin/rm -rf x",
    "timeout 5 rm -rf x",
    "FOO=1 sudo rm -rf x",
    "FOO=1 sudo /bin/rm -rf x",
    "sudo -u root /bin/rm -rf x",
    "nohup rm -rf x",
    "time rm -rf x",
    "command rm x",
    "env rm -rf x",
    "/usr/bin/env rm -rf x",
    "xargs rm -rf",
    "exec rm -rf x",
    "\\rm -rf x",
    "'rm' -rf x",
    "\"rm\" -rf x",
    "rm -rf x > out.txt",
    "bash -c 'rm -rf x'",
    "echo $(rm -rf x)",
    "cd /tmp && rm -rf x",
])
def test_a_deny_rule_for_rm_names_rm_however_it_is_reached(command: str) -> None:
    assert denied_by("rm:*", command)


@pytest.mark.parametrize("command", ["rmdir x", "git rm x", "echo rm -rf x", "ls rm"])
def test_a_deny_rule_for_rm_leaves_other_programs_alone(command: str) -> None:
    assert not denied_by("rm:*", command)


def test_a_wrapper_itself_can_be_denied() -> None:
    assert denied_by("sudo:*", "FOO=1 sudo rm -rf x")
    assert denied_by("sudo:*", "/usr/bin/sudo rm x")
    assert denied_by("timeout:*", "timeout 5 rm -rf x")


def test_whitespace_and_quotes_do_not_hide_a_command_from_its_rule() -> None:
    assert allowed_by("git status:*", "git  status   -s")
    assert denied_by("git status:*", "git\tstatus -s")
    assert denied_by("git push:*", "git 'push' --force")


# -- the two view sets ---------------------------------------------------------------
def test_the_allow_views_are_a_subset_of_the_strict_views() -> None:
    for command in ("NODE_ENV=prod npm run build", "FOO=1 sudo /bin/rm -rf x",
                    "timeout 5 ./npm test", "git  status", "env FOO=1 make",
                    "~/bin/tool --flag"):
        for sub in subcommands(command):
            assert set(allow_views(sub)) <= set(strict_views(sub)), command


@pytest.mark.parametrize(("command", "allow", "strict_extra"), [
    ("NODE_ENV=prod npm run build", {"NODE_ENV=prod npm run build", "npm run build"},
     set()),
    ("FOO=1 npm run build", {"FOO=1 npm run build"}, {"npm run build"}),
    ("sudo npm run build", {"sudo npm run build"}, {"npm run build"}),
    ("/bin/rm -rf x", {"/bin/rm -rf x", "rm -rf x"}, set()),
    ("/tmp/evil/npm run build", {"/tmp/evil/npm run build"}, {"npm run build"}),
    ("FOO=1 sudo rm -rf x", {"FOO=1 sudo rm -rf x"}, {"sudo rm -rf x", "rm -rf x"}),
])
def test_each_view_set_is_what_the_docstring_promises(command: str, allow: set[str],
                                                      strict_extra: set[str]) -> None:
    (sub,) = subcommands(command)
    assert set(allow_views(sub)) == allow
    assert set(strict_views(sub)) == allow | strict_extra


def test_views_hold_no_duplicates_and_no_empty_text() -> None:
    for command in ("ls", "NODE_ENV=prod ls", "timeout 5 ls", "FOO=1 ls"):
        for sub in subcommands(command):
            for views in (allow_views(sub), strict_views(sub)):
                assert len(views) == len(set(views)) and all(views)
