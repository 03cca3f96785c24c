"""Wrapper commands, environment assignments and shell payloads.

``strip_wrappers`` peels ``timeout 5 nice -n 10 ls`` down to ``ls``;
``analyze_bash`` then judges what finally runs.
"""

from __future__ import annotations

import shlex

import pytest

from analyzers import SAFE_ENV_VARS, BashAnalysis, Verdict, analyze_bash
from analyzers.bash.ir import Assignment, Word
from analyzers.bash.wrappers import strip_wrappers

CWD = "/home/user/project"
HOME = "/home/user"


def analyze(cmd: str) -> BashAnalysis:
    return analyze_bash(cmd, CWD, home=HOME)


def argv(cmd: str) -> tuple[str, ...]:
    return tuple(shlex.split(cmd))


def assign(name: str, value: str) -> Assignment:
    return Assignment(name, Word(value, value))


# -- strip_wrappers: what remains to run ----------------------------------------------

STRIPPED = [
    # (command, argv that runs, wrappers peeled)
    ("timeout 5 ls", ("ls",), ("timeout",)),
    ("timeout 1.5m ls -la", ("ls", "-la"), ("timeout",)),
    ("timeout -k 5 10 ls", ("ls",), ("timeout",)),
    ("timeout -s KILL 5 ls", ("ls",), ("timeout",)),
    ("timeout --signal=TERM 5s ls", ("ls",), ("timeout",)),
    ("timeout --signal TERM 2h ls", ("ls",), ("timeout",)),
    ("timeout --preserve-status 5 ls", ("ls",), ("timeout",)),
    ("time ls", ("ls",), ("time",)),
    ("time -p ls", ("ls",), ("time",)),
    ("nice ls", ("ls",), ("nice",)),
    ("nice -n 5 ls", ("ls",), ("nice",)),
    ("nice -n5 ls", ("ls",), ("nice",)),
    ("nice -10 ls", ("ls",), ("nice",)),
    ("nice -n 5 -- ls", ("ls",), ("nice",)),
    ("nohup ls", ("ls",), ("nohup",)),
    ("stdbuf -oL ls", ("ls",), ("stdbuf",)),
    ("stdbuf -o L -eL ls", ("ls",), ("stdbuf",)),
    ("command ls", ("ls",), ("command",)),
    ("command -p ls", ("ls",), ("command",)),
    ("builtin echo x", ("echo", "x"), ("builtin",)),
    ("noglob ls *.py", ("ls", "*.py"), ("noglob",)),
    ("xargs cat", ("cat",), ("xargs",)),
    ("xargs -0 -n 1 -P 4 cat", ("cat",), ("xargs",)),
    ("xargs -I{} cp {} dest", ("cp", "{}", "dest"), ("xargs",)),
    ("xargs", ("echo",), ("xargs",)),  # bare xargs runs echo
    ("env ls", ("ls",), ("env",)),
    ("env -i ls", ("ls",), ("env",)),
    ("env -u HOME ls", ("ls",), ("env",)),
    ("env LANG=C ls", ("ls",), ("env",)),
    ("sudo ls", ("ls",), ("sudo",)),
    ("sudo -u bob -- ls", ("ls",), ("sudo",)),
    ("exec ls", ("ls",), ("exec",)),
    # chains
    ("timeout 5 nice -n 5 nohup stdbuf -oL ls", ("ls",), ("timeout", "nice", "nohup", "stdbuf")),
    ("time -p timeout 5 command -p cat f", ("cat", "f"), ("time", "timeout", "command")),
    ("env LANG=C timeout 5 ls", ("ls",), ("env", "timeout")),
    # system binary paths are their basename
    ("/usr/bin/cat f", ("cat", "f"), ()),
    ("/bin/ls", ("ls",), ()),
    ("/usr/bin/timeout 5 ls", ("ls",), ("timeout",)),
    # not wrapper uses
    ("command -v ls", ("command", "-v", "ls"), ()),
    ("command -V ls", ("command", "-V", "ls"), ()),
    ("env", ("env",), ()),
    ("bash script.sh", ("bash", "script.sh"), ()),
    ("sh", ("sh",), ()),
    ("ls -la", ("ls", "-la"), ()),
    # other paths stay what they are: `./cat` is not cat
    ("./cat f", ("./cat", "f"), ()),
    ("/tmp/cat f", ("/tmp/cat", "f"), ()),
]


@pytest.mark.parametrize(("cmd", "runs", "wrappers"), STRIPPED, ids=[c for c, _, _ in STRIPPED])
def test_strip_wrappers_peels_wrappers_down_to_the_command_that_runs(
    cmd: str, runs: tuple[str, ...], wrappers: tuple[str, ...]
) -> None:
    u = strip_wrappers(argv(cmd))
    assert u.argv == runs
    assert u.wrappers == wrappers


#: (nohup writes nohup.out of its own: never clean)
CLEAN = [c for c, _, _ in STRIPPED if not c.startswith(("sudo", "exec")) and "nohup" not in c]


@pytest.mark.parametrize("cmd", CLEAN, ids=CLEAN)
def test_harmless_wrappers_report_no_problem(cmd: str) -> None:
    u = strip_wrappers(argv(cmd))
    assert u.problem is None
    assert not u.privileged
    assert u.shell_payload is None


PROBLEMS = [
    ("timeout ls", "duration"),
    ("timeout -x 5 ls", "unknown option"),
    ("xargs -z cat", "unknown option"),
    ("env -S 'ls -l'", "-S"),
    ("env -C /tmp ls", "-C"),
    ("sudo ls", "another user"),
    ("exec ls", "replaces the shell"),
    ("eval ls", "eval"),
]


@pytest.mark.parametrize(("cmd", "why"), PROBLEMS, ids=[c for c, _ in PROBLEMS])
def test_wrappers_used_in_ways_that_are_not_analyzed_report_a_problem(cmd: str, why: str) -> None:
    u = strip_wrappers(argv(cmd))
    assert u.problem is not None
    assert why in u.problem


def test_an_unknown_wrapper_option_stops_the_peeling() -> None:
    u = strip_wrappers(argv("timeout -x 5 rm -rf /"))
    assert u.argv[0] == "timeout"


@pytest.mark.parametrize("cmd", ["timeout ls", "env -S 'ls -l'", "xargs -z cat"])
def test_a_wrapper_with_a_problem_is_recorded_once(cmd: str) -> None:
    u = strip_wrappers(argv(cmd))
    assert u.wrappers == (argv(cmd)[0],)


def test_xargs_marks_arguments_as_coming_from_stdin() -> None:
    assert strip_wrappers(argv("xargs -0 cat")).stdin_args
    assert not strip_wrappers(argv("timeout 5 cat")).stdin_args


def test_sudo_marks_the_command_privileged() -> None:
    assert strip_wrappers(argv("sudo -u bob ls")).privileged


SHELL_PAYLOADS = [
    ("bash -c 'ls src'", "ls src", ("bash",)),
    ("sh -c ls", "ls", ("sh",)),
    ("bash -x -c 'cat a'", "cat a", ("bash",)),
    ("bash --norc -c ls", "ls", ("bash",)),
    ("timeout 5 bash -c ls", "ls", ("timeout", "bash")),
    ("eval 'cat a'", "cat a", ("eval",)),
    ("eval cat a", "cat a", ("eval",)),
    ("su -c 'ls' bob", "ls", ("su",)),
]


@pytest.mark.parametrize(
    ("cmd", "payload", "wrappers"), SHELL_PAYLOADS, ids=[c for c, _, _ in SHELL_PAYLOADS]
)
def test_shell_c_and_eval_hand_their_payload_over_for_recursive_analysis(
    cmd: str, payload: str, wrappers: tuple[str, ...]
) -> None:
    u = strip_wrappers(argv(cmd))
    assert u.shell_payload == payload
    assert u.argv == ()
    assert u.wrappers == wrappers


def test_safe_assignments_are_kept_as_env_but_not_as_unsafe() -> None:
    u = strip_wrappers(("npm", "test"), (assign("NODE_ENV", "test"), assign("LANG", "C")))
    assert u.argv == ("npm", "test")
    assert u.env == (("NODE_ENV", "test"), ("LANG", "C"))
    assert u.unsafe_env == ()


def test_any_other_assignment_is_unsafe_whether_prefixed_or_given_to_env() -> None:
    u = strip_wrappers(("env", "PAGER=evil", "git", "log"), (assign("LD_PRELOAD", "x.so"),))
    assert u.argv == ("git", "log")
    assert u.unsafe_env == ("LD_PRELOAD", "PAGER")


# -- SAFE_ENV_VARS --------------------------------------------------------------------------

REQUIRED_SAFE = ["LANG", "LC_ALL", "NODE_ENV", "RUST_LOG", "GOOS", "GOARCH", "TZ", "NO_COLOR"]
UNSAFE = [
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "PAGER",
    "GIT_DIR",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "PYTHONWARNINGS",
    "PYTHONPATH",
    "BROWSER",
    "EDITOR",
    "NODE_OPTIONS",
    "PATH",
    "BASH_ENV",
    "FOO",
]


def test_safe_env_vars_has_exactly_26_names() -> None:
    assert len(SAFE_ENV_VARS) == 26


@pytest.mark.parametrize("name", REQUIRED_SAFE, ids=REQUIRED_SAFE)
def test_locale_platform_and_log_level_vars_are_safe(name: str) -> None:
    assert name in SAFE_ENV_VARS


@pytest.mark.parametrize("name", UNSAFE, ids=UNSAFE)
def test_vars_that_change_what_runs_are_not_safe(name: str) -> None:
    assert name not in SAFE_ENV_VARS


@pytest.mark.parametrize("name", sorted(SAFE_ENV_VARS), ids=sorted(SAFE_ENV_VARS))
def test_a_safe_assignment_keeps_a_read_only_command_allowed(name: str) -> None:
    assert analyze(f"{name}=x ls").verdict == "allow"
    assert analyze(f"env {name}=x cat a").verdict == "allow"


@pytest.mark.parametrize("name", UNSAFE, ids=UNSAFE)
def test_any_other_assignment_makes_a_read_only_command_ask(name: str) -> None:
    for cmd in (f"{name}=x ls", f"env {name}=x ls"):
        result = analyze(cmd)
        assert result.verdict == "ask", cmd
        assert name in result.reason


# -- through analyze_bash ---------------------------------------------------------------------

DECISIONS = [
    ("timeout 5 cat a", "allow"),
    ("timeout -k 5 10 cat a", "allow"),
    ("timeout -s KILL 5 cat a", "allow"),
    ("timeout --signal=TERM 5s cat a", "allow"),
    ("time -p cat a", "allow"),
    ("nice -n 5 cat a", "allow"),
    ("nice -10 cat a", "allow"),
    ("nohup cat a", "ask"),
    ("stdbuf -oL cat a", "allow"),
    ("command -p cat a", "allow"),
    ("builtin echo x", "allow"),
    ("noglob ls", "allow"),
    ("timeout 5 nice -n 5 nohup stdbuf -oL cat a", "ask"),
    ("timeout 5 nice -n 5 stdbuf -oL cat a", "allow"),
    ("env LANG=C ls", "allow"),
    ("/usr/bin/cat a", "allow"),
    ("/usr/bin/timeout 5 cat a", "allow"),
    ("command -v ls", "allow"),  # a name lookup, like `type ls`
    # wrappers used in ways nobody analyzed
    ("timeout cat a", "ask"),
    ("timeout -x 5 cat a", "ask"),
    ("env -S 'ls -l'", "ask"),
    ("env -C /tmp ls", "ask"),
    ("sudo ls", "ask"),
    ("exec ls", "ask"),
    ("./cat a", "ask"),
    ("/tmp/cat a", "ask"),
    # xargs: only argument-agnostic commands stay read-only
    ("ls | xargs echo", "allow"),
    ("ls | xargs -0 -n1 echo", "allow"),
    ("ls | xargs", "allow"),
    ("ls | xargs cat", "ask"),
    ("ls | xargs grep x", "ask"),
    ("ls | xargs -I{} cat {}", "ask"),
    ("ls | xargs wc -l", "ask"),
    # bash -c / sh -c payloads
    ("bash -c 'cat a'", "allow"),
    ("sh -c 'ls src'", "allow"),
    ("bash -c \"bash -c 'ls'\"", "allow"),
    ("timeout 5 bash -c ls", "allow"),
    ("bash -c 'rm a'", "ask"),
    ("bash -c 'cat ../x'", "ask"),
    ("bash -c 'echo $(id)'", "ask"),
    ("bash script.sh", "ask"),
    ("bash -c 'rm -rf /'", "deny"),
    ("sh -c \"sh -c 'rm -rf /'\"", "deny"),
    ("bash -c 'cat ~/.ssh/id_rsa'", "deny"),
    ("timeout 5 bash -c 'cat ~/.aws/credentials'", "deny"),
    # eval is analyzed but never read-only
    ("eval ls", "ask"),
    ("eval 'cat a'", "ask"),
    ("eval 'rm -rf /'", "deny"),
]


@pytest.mark.parametrize(("cmd", "decision"), DECISIONS, ids=[c for c, _ in DECISIONS])
def test_the_decision_judges_what_runs_once_wrappers_are_peeled(cmd: str, decision: str) -> None:
    assert analyze(cmd).verdict == decision


def test_a_wrapped_reader_keeps_its_paths() -> None:
    result = analyze("timeout 5 nice -n 5 cat src/a")
    assert [(p.path, p.access.value) for p in result.paths] == [(CWD + "/src/a", "read")]


def test_xargs_reason_names_stdin_arguments() -> None:
    result = analyze("ls | xargs cat")
    assert "xargs" in result.reason


def test_a_shell_payload_is_analyzed_as_a_nested_command_line() -> None:
    result = analyze("bash -c 'cat a && ls src'")
    payload = [s for s in result.subcommands if s.via == "bash"]
    assert [s.argv for s in payload] == [("cat", "a"), ("ls", "src")]
    assert all(s.read_only for s in payload)


def test_eval_is_never_read_only_even_when_its_payload_is() -> None:
    result = analyze("eval 'cat a'")
    payload = [s for s in result.subcommands if s.via == "eval"]
    assert payload
    assert all(s.read_only for s in payload)
    assert "eval" in result.reason


@pytest.mark.parametrize("cmd", ["./timeout 5 ls", "./nice cat a", "/tmp/x/nohup cat a"])
def test_a_wrapper_name_outside_the_system_bin_dirs_is_not_the_wrapper(cmd: str) -> None:
    result = analyze(cmd)
    assert result.verdict == "ask"


@pytest.mark.parametrize(
    "cmd", ["xargs -a ~/.ssh/id_rsa echo", "xargs --arg-file=/etc/shadow echo"]
)
def test_xargs_arg_file_is_a_read_that_is_checked(cmd: str) -> None:
    assert analyze(cmd).verdict == "deny"


def test_a_sensitive_path_passed_as_a_shell_payload_argument_is_denied() -> None:
    assert analyze("bash -c 'cat \"$1\"' _ ~/.ssh/id_rsa").verdict == "deny"


# From the deep fuzz run: `sh -c '[[ a > b ]]'` was allowed (bash reads a
# string test; dash runs `[[` with `> b`, creating b). A POSIX shell's
# payload holding bash-only syntax, and any payload of another language's
# shell, is not judged by the bash parse.
DIALECTS = [
    ("sh -c '[[ a > b ]]'", "ask"), ("dash -c '(( x > 1 ))'", "ask"),
    ("sh -c 'cat <<< x'", "ask"), ("sh -c 'ls &> out'", "ask"),
    ("sh -c \"echo $'a'\"", "ask"), ("sh -c 'echo {a,b}'", "ask"),
    ("busybox-sh -c 'diff <(ls) <(ls -a)'", "ask"), ("sh -c 'ls |& cat'", "ask"),
    ("zsh -c 'ls'", "ask"), ("ksh -c 'ls'", "ask"), ("mksh -c 'ls'", "ask"),
    # what both read alike stays allowed
    ("sh -c 'ls -la'", "allow"), ("sh -c 'git log --oneline -5 | head -3'", "allow"),
    ("sh -c 'cat \"$1\"' _ README.md", "allow"), ("sh -c 'echo 2>&1'", "allow"),
    ("bash -c '[[ a > b ]]'", "allow"),
]


@pytest.mark.parametrize(("cmd", "decision"), DIALECTS)
def test_a_shells_payload_is_judged_in_that_shells_language(cmd: str, decision: str) -> None:
    verdict = analyze_bash(cmd, CWD).verdict
    assert (verdict is Verdict.ALLOW) is (decision == "allow"), cmd
