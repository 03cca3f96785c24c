"""git's option tables held to the installed git.

The analyzer allows git's read-only subcommands by hand-written option
tables; where a table disagrees with git, git does what the table did not
see. From a review: an option the table read as taking the next word that
git takes only attached (or not at all) let a following `--output=FILE`
through, and git opens that file even when it then fails on its
arguments. Each option a table reads as taking the next word is given one
followed by `--output=CANARY` against the real git; and every abbreviation
git would accept of an option the tables do not list is not allowed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from analyzers import Verdict, analyze_bash, option_tables
from fuzz.options import installed_options

CONSUMING = {"value", "read", "num", "value2"}
TABLES = {t.program[1]: t.takes for t in option_tables() if t.program[0] == "git"}
ENV = {**os.environ, "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C",
       "GIT_CONFIG_NOSYSTEM": "1"}
#: subcommands whose parser takes no abbreviation (see fuzz/options.py)
EXACT = {"log", "show", "whatchanged", "rev-list", "diff", "diff-files", "diff-index",
         "diff-tree", "shortlog", "blame", "annotate"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("tables")
    for argv in (["init", "-q"], ["add", "."], ["-c", "user.name=a", "-c", "user.email=a@b",
                                                  "commit", "-qm", "a"]):
        if argv[0] == "add":
            (repo / "a.txt").write_text("a\n")
        subprocess.run(["git", *argv], cwd=repo, env=ENV, check=True, capture_output=True)
    return repo


@pytest.mark.parametrize("sub", sorted(TABLES))
def test_every_option_a_table_reads_as_taking_the_next_word_takes_it_in_git(
        repo: Path, tmp_path: Path, sub: str) -> None:
    canary = tmp_path / "written"
    wrong = []
    for option, kind in sorted(TABLES[sub].items()):
        if kind not in CONSUMING:
            continue
        values = ["x"] if kind == "value2" else []
        subprocess.run(["git", sub, option, *values, f"--output={canary}", "HEAD"], cwd=repo,
                       env=ENV, capture_output=True, timeout=20, check=False)
        if canary.exists():
            canary.unlink()
            wrong.append(option)
    assert not wrong, f"git {sub} does not take the word after {wrong}"


def _abbreviations(sub: str) -> list[str]:
    """Each unique prefix (three letters or more) git accepts of a long
    option of ``sub`` that the table does not list."""
    known = installed_options([("git", sub)]).get(("git", sub))
    if known is None:
        return []
    names = {o.name for o in known.options if o.name.startswith("--")}
    unlisted = sorted(n for n in names if n not in TABLES[sub])
    out = []
    for name in unlisted:
        for end in range(5, len(name)):
            prefix = name[:end]
            if sum(n.startswith(prefix) for n in names) == 1:
                out.append(prefix)
    return out


@pytest.mark.parametrize("sub", sorted(set(TABLES) - EXACT))
def test_no_abbreviation_of_an_option_the_table_does_not_list_is_allowed(sub: str) -> None:
    allowed = [p for p in _abbreviations(sub)
               if analyze_bash(f"git {sub} {p}", "/repo", home="/home/u").verdict
               is Verdict.ALLOW
               or analyze_bash(f"git {sub} {p}=x", "/repo", home="/home/u").verdict
               is Verdict.ALLOW]
    assert not allowed, f"git {sub}: allowed abbreviations of unlisted options: {allowed[:10]}"
