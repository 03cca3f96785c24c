"""The argparse-free reading of a plain ``shellgate check`` makes exactly
the namespace argparse makes, and leaves every other form to argparse."""

from __future__ import annotations

import contextlib
import io
import itertools

import pytest

from gateway.cli.fastpath import fast_check
from gateway.cli.parser import build_parser
from gateway.errors import UsageError

TOKENS = ["--json", "--jsonl", "-", "--", "--cwd", "/tmp", "git", "log --oneline", "-h",
          "--help", "--add-dir", "", "--js", "-5", "x=1"]
FORMS = [["check", *rest] for n in range(1, 4) for rest in itertools.product(TOKENS, repeat=n)]


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
])
def test_a_plain_check_is_read_as_argparse_reads_it(argv: list[str]) -> None:
    fast = fast_check(argv)
    assert fast is not None
    assert vars(fast) == _argparse(argv)


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "--help"], ["check", "-"], ["check", "--", "ls"],
    ["check", "--cwd", "/tmp", "ls"], ["check", "--jsonl"], ["check", "--js", "ls"],
    ["check", "--json"], ["check", ""], ["run", "ls"], ["checkx", "ls"],
])
def test_every_other_form_goes_to_argparse(argv: list[str]) -> None:
    assert fast_check(argv) is None


def test_no_form_of_the_tokens_is_read_otherwise_than_by_argparse() -> None:
    # every 1-3 word combination of options, operands and mistakes
    differ = [argv for argv in FORMS
              if (fast := fast_check(argv)) is not None and vars(fast) != _argparse(argv)]
    assert differ == []
    assert sum(fast_check(argv) is not None for argv in FORMS) > 100
