"""Exit-code semantics, display classification and rule prefixes."""

from __future__ import annotations

import pytest

from analyzers import (
    MAX_SUGGESTED_RULES,
    BashAnalysis,
    Classification,
    analyze_bash,
    command_prefix,
    interpret_exit_code,
)

CWD = "/home/user/project"
HOME = "/home/user"


def analyze(cmd: str) -> BashAnalysis:
    return analyze_bash(cmd, CWD, home=HOME)


# -- exit-code semantics ----------------------------------------------------------------

NO_MATCH = "no matches found"
DIFFER = "files differ"
FALSE = "condition is false"
PARTIAL = "some paths could not be read (partial results)"

EXIT_CODES = [
    # (command, exit code, is an error, message)
    ("grep x f", 0, False, None),
    ("grep x f", 1, False, NO_MATCH),
    ("grep x f", 2, True, "exit code 2"),
    ("egrep x f", 1, False, NO_MATCH),
    ("fgrep x f", 1, False, NO_MATCH),
    ("/usr/bin/grep x f", 1, False, NO_MATCH),
    ("rg x", 1, False, NO_MATCH),
    ("rg x", 2, True, "exit code 2"),
    ("git grep x", 1, False, NO_MATCH),
    ("diff a b", 1, False, DIFFER),
    ("diff a b", 2, True, "exit code 2"),
    ("cmp a b", 1, False, DIFFER),
    ("git diff --exit-code", 1, False, DIFFER),
    ("git diff", 1, True, "exit code 1"),
    ("test -f x", 1, False, FALSE),
    ("[ -f x ]", 1, False, FALSE),
    ("[[ -f x ]]", 1, False, FALSE),
    ("test -f x", 2, True, "exit code 2"),
    ("find .", 1, False, PARTIAL),
    ("find .", 2, True, "exit code 2"),
    ("ls", 1, True, "exit code 1"),
    ("ls", 2, True, "exit code 2"),
    ("cat f", 1, True, "exit code 1"),
    ("false", 1, True, "exit code 1"),
    ("npm test", 1, True, "exit code 1"),
    ("grep x f", 127, True, "exit code 127"),
    # wrappers are stripped before the lookup
    ("timeout 5 grep x f", 1, False, NO_MATCH),
    ("LANG=C grep x f", 1, False, NO_MATCH),
    # a pipeline or list: the last command decides
    ("cat f | grep x", 1, False, NO_MATCH),
    ("grep x f | cat", 1, True, "exit code 1"),
    ("grep x f | wc -l", 1, True, "exit code 1"),
    ("ls; grep x f", 1, False, NO_MATCH),
    ("grep x f; ls", 1, True, "exit code 1"),
    ("cat a | sort | diff - b", 1, False, DIFFER),
]


@pytest.mark.parametrize(
    ("cmd", "code", "is_error", "message"),
    EXIT_CODES,
    ids=[f"{c} -> {n}" for c, n, _, _ in EXIT_CODES],
)
def test_exit_codes_mean_what_the_last_command_means_by_them(
    cmd: str, code: int, is_error: bool, message: str | None
) -> None:
    meaning = analyze(cmd).exit_meaning(code)
    assert meaning.is_error is is_error
    assert meaning.message == message


INTERPRET = [
    (("grep", "x"), 1, False),
    (("rg", "x"), 1, False),
    (("diff", "a", "b"), 1, False),
    (("test", "-f", "x"), 1, False),
    (("[", "-f", "x", "]"), 1, False),
    (("find", "."), 1, False),
    (("find", "."), 2, True),
    (("grep", "x"), 2, True),
    (("ls",), 1, True),
    (("ls",), 0, False),
    ((), 0, False),
    ((), 1, True),
]


@pytest.mark.parametrize(
    ("argv", "code", "is_error"), INTERPRET, ids=[f"{' '.join(a)}->{c}" for a, c, _ in INTERPRET]
)
def test_interpret_exit_code_knows_non_error_exit_codes(
    argv: tuple[str, ...], code: int, is_error: bool
) -> None:
    assert interpret_exit_code(argv, code).is_error is is_error


def test_a_shell_payloads_last_command_decides_its_exit_meaning() -> None:
    meaning = analyze("bash -c 'grep x f'").exit_meaning(1)
    assert not meaning.is_error
    assert meaning.message == NO_MATCH


def test_git_diff_quiet_exit_1_means_differences() -> None:
    assert not interpret_exit_code(("git", "diff", "--quiet"), 1).is_error


# -- classification -----------------------------------------------------------------------

S, RD, L = Classification.SEARCH, Classification.READ, Classification.LIST
N, SI, OT = Classification.NEUTRAL, Classification.SILENT, Classification.OTHER

CLASSES = [
    ("grep x f", S),
    ("rg x", S),
    ("find . -name x", S),
    ("which python", S),
    ("cat f", RD),
    ("head -n 5 f", RD),
    ("tail f", RD),
    ("wc -l f", RD),
    ("stat f", RD),
    ("jq . f", RD),
    ("ls", L),
    ("tree", L),
    ("du -sh", L),
    ("echo hi", N),
    ("printf x", N),
    ("true", N),
    (":", N),
    ("echo a; echo b", N),
    ("mv a b", SI),
    ("cp a b", SI),
    ("rm a", SI),
    ("mkdir d", SI),
    ("touch f", SI),
    ("cd src", SI),
    ("mv a b && cp a c", SI),
    ("git status", OT),
    ("npm test", OT),
    ("python3 x.py", OT),
    # compound commands: semantic-neutral parts are skipped
    ("ls a && echo --- && ls b", L),
    ("echo start; cat f", RD),
    # mixes of search/read/list: a search anywhere makes it a search, else a read
    ("cat f | grep x", S),
    ("grep x f | head", S),
    ("ls | grep x", S),
    ("cat f | grep x | wc -l", S),
    ("cat f | wc -l", RD),
    ("cat f | sort | uniq", RD),
    ("ls && cat f", RD),
    # anything else in the mix
    ("ls && npm test", OT),
    ("cat f && rm f", OT),
    # wrappers and payloads are classified by what runs
    ("timeout 5 cat f", RD),
    ("bash -c 'ls'", L),
    ("ls > /dev/null", L),
]


@pytest.mark.parametrize(("cmd", "cls"), CLASSES, ids=[c for c, _ in CLASSES])
def test_commands_are_classified_for_display_as_a_whole(cmd: str, cls: Classification) -> None:
    assert analyze(cmd).classification is cls


def test_classification_values_are_the_display_names() -> None:
    assert [c.value for c in Classification] == [
        "search",
        "read",
        "list",
        "semantic-neutral",
        "silent",
        "other",
    ]


# -- command prefixes --------------------------------------------------------------------

PREFIXES = [
    (("git", "commit", "-m", "x"), "git commit"),
    (("git", "status"), "git status"),
    (("npm", "run", "build"), "npm run"),
    (("npm", "test"), "npm test"),
    (("cargo", "test", "--release"), "cargo test"),
    (("docker", "compose", "up", "-d"), "docker compose"),
    (("kubectl", "get", "pods"), "kubectl get"),
    (("ls", "-la"), None),
    (("git", "-C", "/tmp", "status"), None),
    (("git",), None),
    (("make",), None),
    (("git", "./x"), None),
    (("./run.sh", "build"), None),
    (("/opt/bin/tool", "run"), None),
    (("python", "manage.py"), None),
    (("python3", "-m", "pytest"), None),
    (("node", "server.js"), None),
    (("bash", "-c", "x"), None),
    (("sh", "x"), None),
    (("zsh", "run"), None),
    (("sudo", "ls"), None),
    (("sudo", "apt"), None),
    (("env", "ls"), None),
    (("xargs", "rm"), None),
    (("eval", "run"), None),
    (("timeout", "run"), None),
]


@pytest.mark.parametrize(
    ("argv", "prefix"), PREFIXES, ids=[" ".join(a) or "<empty>" for a, _ in PREFIXES]
)
def test_command_prefix_is_two_stable_words_and_never_a_wrapper_or_interpreter(
    argv: tuple[str, ...], prefix: str | None
) -> None:
    assert command_prefix(argv) == prefix


SUGGESTIONS = [
    ("git commit -m x", ("Bash(git commit:*)",)),
    ("NODE_ENV=prod npm run build", ("Bash(npm run:*)",)),
    ("LANG=C git commit -m x", ("Bash(git commit:*)",)),
    ("timeout 5 npm test", ("Bash(npm test:*)",)),
    ("npm run a && npm run b", ("Bash(npm run:*)",)),
    ("git status && npm test", ("Bash(npm test:*)",)),
    ("make", ("Bash(make)",)),
    ("python3 script.py", ("Bash(python3 script.py)",)),
    ("./run.sh --fast", ("Bash(./run.sh --fast)",)),
    ("bash -c 'npm run build'", ("Bash(bash -c 'npm run build')",)),
    ("eval npm run build", ("Bash(eval npm run build)",)),
]


@pytest.mark.parametrize(("cmd", "rules"), SUGGESTIONS, ids=[c for c, _ in SUGGESTIONS])
def test_asked_commands_suggest_a_prefix_rule_or_an_exact_one(
    cmd: str, rules: tuple[str, ...]
) -> None:
    result = analyze(cmd)
    assert result.verdict == "ask"
    assert result.suggested_rules == rules


NO_WRAPPER_PREFIX_RULE = [
    "bash -c 'npm run build'",
    "sh -c 'git commit -m x'",
    "eval npm run build",
]


@pytest.mark.parametrize("cmd", NO_WRAPPER_PREFIX_RULE, ids=NO_WRAPPER_PREFIX_RULE)
def test_shells_and_eval_never_get_a_prefix_rule(cmd: str) -> None:
    rules = analyze(cmd).suggested_rules
    assert rules
    assert not any(r.endswith(":*)") for r in rules)


def test_a_long_compound_command_suggests_at_most_five_rules() -> None:
    cmd = " && ".join(
        [
            "npm run a",
            "npm test",
            "git commit -m x",
            "git push",
            "cargo build",
            "make all",
            "docker compose up",
            "pip install x",
        ]
    )
    result = analyze(cmd)
    assert MAX_SUGGESTED_RULES == 5
    assert result.suggested_rules == (
        "Bash(npm run:*)",
        "Bash(npm test:*)",
        "Bash(git commit:*)",
        "Bash(git push:*)",
        "Bash(cargo build:*)",
    )


NO_SUGGESTIONS = [
    ("ls -la", "allow"),
    ("cat a && grep x b", "allow"),
    ("rm -rf /", "deny"),
    ("cat ~/.ssh/id_rsa", "deny"),
    ("git push && rm -rf ~", "deny"),
    ("echo $(whoami)", "ask"),  # unanalyzable: rules do not apply
    ("ls > out.txt", "ask"),  # a security check fired: rules do not apply
]


@pytest.mark.parametrize(("cmd", "decision"), NO_SUGGESTIONS, ids=[c for c, _ in NO_SUGGESTIONS])
def test_allowed_denied_and_unanalyzable_commands_suggest_no_rule(cmd: str, decision: str) -> None:
    result = analyze(cmd)
    assert result.verdict == decision
    assert result.suggested_rules == ()


DROPPED_WRAPPERS = [
    "sudo npm run build",
    "LD_PRELOAD=/tmp/x.so npm run build",
    "env FOO=x npm run build",
    "ls | xargs npm run build",
]


@pytest.mark.parametrize("cmd", DROPPED_WRAPPERS, ids=DROPPED_WRAPPERS)
def test_sudo_env_and_xargs_never_get_a_prefix_rule_of_what_they_wrap(cmd: str) -> None:
    assert "Bash(npm run:*)" not in analyze(cmd).suggested_rules
