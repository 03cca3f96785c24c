"""The argparse-free reading of a plain ``shellgate check`` or ``run``
makes exactly the namespace argparse makes, and leaves every other form to
argparse."""

from __future__ import annotations

import contextlib
import io
import itertools

import pytest

from gateway.cli.fastpath import fast_parse
from gateway.cli.parser import build_parser
from gateway.errors import UsageError

COMMON = ["-", "--", "git", "log --oneline", "-h", "--help", "", "-5", "x=1", "--cwd", "/tmp"]
TOKENS = {
    "check": [*COMMON, "--json", "--jsonl", "--js", "--add-dir", "--cwd=/x", "--jsonl=1"],
    "run": [*COMMON, "--profile", "--allow", "--allow-write", "--timeout", "--t", "--m",
            "--git-read-only", "--max-processes=3", "--s", "true"],
}
FORMS = [[verb, *rest] for verb, tokens in TOKENS.items() for n in range(1, 4)
         for rest in itertools.product(tokens, repeat=n)]


def _argparse(argv: list[str]) -> dict[str, object] | None:
    """argparse's namespace for ``argv``, or None when it refuses or exits."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return vars(build_parser(argv).parse_args(argv))
    except (UsageError, SystemExit):
        return None


@pytest.mark.parametrize("argv", [
    ["check", "git log --oneline -5"],
    ["check", "--json", "ls -la"],
    ["check", "git", "log", "--oneline"],
    ["check", "git", "-h"],
    ["check", "--json", "git", "--json"],
    ["run", "--", "true"],
    ["run", "make", "-j4"],
    ["run", "--", "sh", "-c", "echo hi"],
    ["check", "--jsonl"],
    ["check", "--jsonl", "--cwd", "/home/user/project"],
])
def test_a_plain_form_is_read_as_argparse_reads_it(argv: list[str]) -> None:
    fast = fast_parse(argv)
    assert fast is not None
    assert vars(fast) == _argparse(argv)


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "--help"], ["check", "-"], ["check", "--", "ls"],
    ["check", "--cwd", "/tmp", "ls"], ["check", "--js", "ls"],
    ["check", "--jsonl", "ls"], ["check", "--jsonl", "--cwd"], ["check", "--jsonl", "--cwd", "-x"],
    ["check", "--jsonl", "--cwd=/tmp"], ["check", "--jsonl", "--add-dir", "/tmp"],
    ["check", "--jsonl", "--cwd", "/tmp", "--cwd", "/x"],
    ["check", "--json"], ["check", ""], ["run"], ["run", "--"], ["run", "--", "-x"],
    ["run", "--profile", "read-only", "--", "ls"], ["run", "ls", "--allow"],
    ["tool", "Bash"], ["checkx", "ls"], [],
])
def test_every_other_form_goes_to_argparse(argv: list[str]) -> None:
    assert fast_parse(argv) is None


def test_no_form_of_the_tokens_is_read_otherwise_than_by_argparse() -> None:
    # every 1-3 word combination of each verb's options, operands and mistakes
    differ = [argv for argv in FORMS
              if (fast := fast_parse(argv)) is not None and vars(fast) != _argparse(argv)]
    assert differ == []
    for verb in TOKENS:
        assert sum(argv[0] == verb and fast_parse(argv) is not None for argv in FORMS) > 100


def test_a_value_read_by_the_fast_path_is_not_shared_between_calls() -> None:
    first, second = fast_parse(["run", "true"]), fast_parse(["run", "true"])
    assert first is not None and second is not None
    first.allow_write.append("/x")
    assert second.allow_write == []
