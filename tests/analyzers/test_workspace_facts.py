"""Facts the caller gives about the files around a command (the analyzer
does no I/O, so it cannot look): the repository's program-running
configuration, and the dotenv files a command reading a whole tree reaches."""

from __future__ import annotations

import pytest

from analyzers import Verdict, WorkspaceFacts, analyze_bash

CWD, HOME = "/p", "/home/u"
EMPTY = WorkspaceFacts(searched=(CWD,))
DOTENV = WorkspaceFacts(searched=(CWD,), dotenv_files=("/p/.env", "/p/sub/.env.local"))
HALF_SEARCHED = WorkspaceFacts(searched=(CWD,), unsearched=("/p/big",))


def decide(command: str, workspace: WorkspaceFacts | None) -> Verdict:
    return analyze_bash(command, CWD, home=HOME, workspace=workspace).verdict


@pytest.mark.parametrize(("command", "decision"), [
    ("git status", Verdict.ASK), ("git diff HEAD", Verdict.ASK), ("git log -p", Verdict.ASK),
    ("git config user.name", Verdict.ALLOW), ("git rev-parse HEAD", Verdict.ASK),
    ("ls", Verdict.ALLOW),
])
def test_git_reads_ask_when_the_repository_runs_programs(command: str, decision: Verdict) -> None:
    """The caller's fact about the repository (root cause 8 of the review).
    rev-parse asks too: in a partial clone, `git rev-parse HEAD:file`
    fetches a missing object through the remote's transport (a review)."""
    facts = WorkspaceFacts(repo_programs=("core.fsmonitor=./evil",))
    result = analyze_bash(command, "/repo", home=HOME, workspace=facts)
    assert result.verdict is decision, result.reason


TREE_READERS = [
    "grep -rn TODO .", "grep -r TODO", "grep -R x sub", "grep -d recurse x .", "rg TODO",
    "rg --hidden TODO", "rg -uu TODO .", "find . -type f -exec cat {} +",
    "find . -exec head {} \\;", "find . -print0 | xargs -0 cat", "diff -r . /p/sub",
    "find . -exec grep -r x {} +", "cd sub && grep -rn x .",
    # from a review: filters and forms the first version read wrongly
    "rg -g '*' SECRET", "rg -g .env SECRET", "rg --iglob '*' SECRET",
    "rg --type-add 'x:.env' -t x SECRET", "rg --hidden --ignore-file . SECRET .",
    "grep -r --exclude='*.md' --include='*.py' SECRET .", "grep -r --exclude=x --include=x K .",
    "grep -d rec SECRET .", "grep -drec SECRET .", "grep --directories=rec SECRET .",
    "find . -name . -exec grep -d recurse SECRET {} +",
    "find . -name . -print0 | xargs -0 grep -d recurse SECRET",
    "diff -rN --to-file=. src", "git diff src .", "grep -r K= *", "grep -r K= s*",
    "git grep --untracked --no-exclude-standard SECRET",
    # names or counts only, yet the pattern tests every file's content: a
    # review rebuilt a .env from 447 `grep -rl '^SECRET=…' .` calls
    "grep -rl TODO .", "grep -rc TODO .", "grep -rq TODO .", "rg -l TODO", "rg -c -uu TODO",
    "find . -type f -exec grep -l SECRET {} +",
    # from a second review
    "rg --glob-case-insensitive -g '*.ENV' SECRET", "diff -N . src", "diff . sub",
    "diff --unidirectional-new-file . src",
]


@pytest.mark.parametrize("command", TREE_READERS)
def test_a_command_reading_every_file_below_a_directory_asks_where_it_reaches_a_dotenv_file(
    command: str,
) -> None:
    """From the execution oracle: `find . -type f -exec cat {} +` printed the
    fixture's `.env` canary, allowed; `grep -r KEY .` does the same."""
    a = analyze_bash(command, CWD, home=HOME, workspace=DOTENV)
    assert a.verdict is Verdict.ASK
    assert "dotenv" in a.reason and "person" in a.reason
    assert not a.rules_apply  # as for `cat .env`: only a person may allow it


@pytest.mark.parametrize("command", TREE_READERS)
def test_the_same_command_is_allowed_in_a_workspace_searched_and_free_of_dotenv_files(
    command: str,
) -> None:
    assert decide(command, EMPTY) is Verdict.ALLOW


@pytest.mark.parametrize("command", ["grep -rn TODO .", "find . -exec cat {} +", "rg x"])
def test_without_facts_or_where_the_search_did_not_finish_a_dotenv_file_is_assumed(
    command: str,
) -> None:
    assert decide(command, None) is Verdict.ASK
    assert decide(command, HALF_SEARCHED) is Verdict.ASK
    assert decide(command, WorkspaceFacts(searched=("/elsewhere",))) is Verdict.ASK


@pytest.mark.parametrize("command", [
    # names, counts and hashes only
    "rg --files", "find . -exec wc -l {} +",
    "find . -print0 | xargs -0 sha256sum", "ls -R",
    # the walk cannot reach the dotenv files
    "grep -rn TODO src", "grep -rn --include='*.py' TODO .", "grep -rn --exclude='.env*' TODO .",
    "grep -rn --include='*.py' --exclude='*.md' TODO .",
    "find . -name '*.py' -exec cat {} +", "find . -iname '*.PY' -print0 | xargs -0 grep x",
    "rg -g '!.env*' TODO", "rg -g '*.py' TODO", "git grep TODO", "git diff HEAD~1 HEAD",
])
def test_a_tree_read_that_cannot_print_a_dotenv_file_is_allowed(command: str) -> None:
    assert decide(command, DOTENV) is Verdict.ALLOW


@pytest.mark.parametrize("command", [
    # the test after the action gates nothing
    "find . -exec cat {} + -name '*.py'",
    # alternatives: -name no longer holds for every file
    "find . -name '*.py' -o -exec cat {} +",
    "find . ! -name '*.py' -exec cat {} +",
    # patterns fnmatch does not read as find does: they filter nothing
    "find . -name '[[:alpha:]]*' -exec cat {} +", "grep -rn --exclude='\\.env' x .",
    # two --include globs are alternatives
    "grep -rn --include='*.py' --include='.env*' x .",
    # the reader walks on itself below what find found
    "find . -name '*.py' -exec rg x {} +", "find . -type d -name sub -exec grep -r x {} +",
])
def test_a_filter_that_does_not_hold_for_every_file_read_filters_nothing(command: str) -> None:
    assert decide(command, DOTENV) is Verdict.ASK


def test_ripgreps_own_skipping_of_hidden_names_is_not_relied_on() -> None:
    """Its globs, types and ignore files (`!.env` in .ignore) override it."""
    assert decide("rg TODO", DOTENV) is Verdict.ASK
    assert decide("rg -g '!.env*' TODO", DOTENV) is Verdict.ALLOW
    assert decide("rg -g '!.env*' -g '*' TODO", DOTENV) is Verdict.ASK  # the last match wins


LINKED = WorkspaceFacts(searched=(CWD,), dir_links=("/p/src/shared",))


@pytest.mark.parametrize(("command", "decision"), [
    # through the link: the root itself is named
    ("grep -r DB= src/shared", Verdict.ASK), ("cd src/shared && grep -r DB= .", Verdict.ASK),
    ("rg DB= src/shared/x", Verdict.ASK),
    # walks that follow links below the root
    ("grep -R DB= .", Verdict.ASK), ("rg -L DB=", Verdict.ASK),
    ("find -L . -type f -exec cat {} +", Verdict.ASK), ("diff -r src other", Verdict.ASK),
    # walks that do not follow them
    ("grep -r DB= .", Verdict.ALLOW), ("rg DB=", Verdict.ALLOW),
    ("diff -r --no-dereference src other", Verdict.ALLOW), ("grep -r DB= tests", Verdict.ALLOW),
])
def test_a_walk_that_goes_through_a_link_to_a_directory_goes_where_nobody_searched(
    command: str, decision: Verdict,
) -> None:
    """From a review: `src/shared -> ../../other` led `grep -r DB= src/shared`
    to another project's .env."""
    assert decide(command, LINKED) is decision


def test_the_directories_read_are_reported_resolved() -> None:
    a = analyze_bash("grep -rn x sub/../src", CWD, home=HOME, workspace=EMPTY)
    assert [t.root for s in a.subcommands for t in s.trees] == ["/p/src"]
    assert a.to_dict()["subcommands"][0]["reads_below"] == ["/p/src"]


DOTENV_DIRS = WorkspaceFacts(searched=(CWD,), dotenv_dirs=("/p/.envs", "/p/conf/.env.d"))


@pytest.mark.parametrize(("command", "decision"), [
    # whatever the files in them are called, no name filter keeps them out
    ("grep -r --exclude='.env*' SECRET .", Verdict.ASK),
    ("find . -name '.django' -exec cat {} +", Verdict.ASK),
    ("grep -r --include='.django' K .", Verdict.ASK), ("rg -uu -g '.django' K", Verdict.ASK),
    ("grep -r K conf", Verdict.ASK),
    # a walk that does not enter them
    ("grep -r K src", Verdict.ALLOW), ("diff -N . src", Verdict.ALLOW),
    ("grep -r --exclude-dir=.envs --exclude-dir=.env.d K .", Verdict.ALLOW),
    ("grep -r --exclude-dir=.envs K .", Verdict.ASK),
])
def test_a_dotenv_directory_is_reached_by_any_walk_that_enters_it(
    command: str, decision: Verdict,
) -> None:
    """From a review: the walk reported `.envs/` as `.envs/.env`, and name
    filters (`--exclude='.env*'`) were tested against that invented name;
    `.env.d/prod` was not seen at all."""
    assert decide(command, DOTENV_DIRS) is decision


@pytest.mark.parametrize("command", ["grep -r SECRET *", "grep -r SECRET s*",
                                     "grep -rn SECRET ./*"])
def test_a_glob_operand_follows_the_links_it_expands_to(command: str) -> None:
    """From a review: `*` expanded to `shared -> ../other`, a link every tool
    follows when it is given one."""
    linked = WorkspaceFacts(searched=(CWD,), dir_links=("/p/shared",))
    assert decide(command, linked) is Verdict.ASK
    assert decide(command, EMPTY) is Verdict.ALLOW


def test_a_cd_before_a_command_reading_a_process_substitution_still_holds() -> None:
    """From a review: the `<(…)` commands come first in the list, with `&`,
    and the cd before them was dropped: `grep -r` was judged in the old
    directory and read `sub/inner/.env`."""
    facts = WorkspaceFacts(searched=(CWD,), dotenv_files=("/p/sub/inner/.env",))
    assert decide("cd sub; grep -r KEY <(true) inner", facts) is Verdict.ASK
    assert decide("cd sub & grep -r KEY inner", facts) is Verdict.ALLOW  # cd in the background


def test_a_tree_read_reaches_the_sensitive_paths_below_its_root() -> None:
    """From a review: run in the home, `grep -r KEY .` printed .ssh/id_rsa,
    which `cat` is denied; the sensitive list is the analyzer's own data."""
    home = analyze_bash("grep -r PRIVATE .", "/home/u", home="/home/u",
                        workspace=WorkspaceFacts(searched=("/home/u",)))
    assert home.verdict is Verdict.DENY
    assert "/home/u/.ssh" in home.reason
    assert decide("grep -r PRIVATE /", EMPTY) is Verdict.DENY
    assert decide("grep -r PRIVATE .", EMPTY) is Verdict.ALLOW  # a project holds none


def test_a_root_that_climbs_out_of_a_link_is_not_judged_as_text() -> None:
    """From a review: `shared -> /elsewhere/dir`; `grep -r K shared/..` walks
    /elsewhere, the text `shared/..` says the project."""
    linked = WorkspaceFacts(searched=(CWD,), dir_links=("/p/shared",))
    assert decide("grep -r K shared/..", linked) is Verdict.ASK
    assert decide("grep -r K src/..", linked) is Verdict.ALLOW


@pytest.mark.parametrize("command", ["ls -aR", "find .", "du -a", "tree -a",
                                     "find . -type f -exec sha256sum {} +", "du -sh *"])
def test_a_walk_listing_names_in_the_home_reaches_the_keys(command: str) -> None:
    """From a review: `find .` and `ls -aR` run in the home listed
    `.ssh/id_rsa`, which `ls -a ~/.ssh` is denied."""
    a = analyze_bash(command, "/home/u", home="/home/u",
                     workspace=WorkspaceFacts(searched=("/home/u",)))
    assert a.verdict is Verdict.DENY, a.reason


@pytest.mark.parametrize("command", ["find . -maxdepth 1", "ls -la", "du -s .", "tree -L 1"])
def test_a_listing_that_stops_above_the_keys_is_allowed_in_the_home(command: str) -> None:
    a = analyze_bash(command, "/home/u", home="/home/u",
                     workspace=WorkspaceFacts(searched=("/home/u",)))
    assert a.verdict is Verdict.ALLOW, a.reason


@pytest.mark.parametrize("command", ["grep x *", "wc -l *", "du -sh *", "strings *",
                                     "hexdump -C *"])
def test_a_leading_wildcard_may_hand_a_reader_a_planted_option(command: str) -> None:
    """From a review: files named `-r`, `-f.env`, `--files0-from=.env` or
    `@.env` made `grep x *` recurse and `strings *` print .env; the walk
    is modelled, so a project holding a .env asks."""
    assert decide(command, DOTENV) is Verdict.ASK
    assert decide(command, EMPTY) is Verdict.ALLOW
    assert decide(command.replace("*", "-- *"), DOTENV) is Verdict.ALLOW
    assert decide(command.replace("*", "./*"), DOTENV) is Verdict.ALLOW


def test_a_path_through_a_link_is_judged_where_it_leads() -> None:
    """From a review: with `up -> ..` in a project in the home, `cat
    up/.ssh/id_rsa` read as text stayed inside the project."""
    facts = WorkspaceFacts(searched=("/home/u/p",),
                           real_paths=(("/home/u/p/up/.ssh/id_rsa", "/home/u/.ssh/id_rsa"),))
    a = analyze_bash("cat up/.ssh/id_rsa", "/home/u/p", home="/home/u", workspace=facts)
    assert a.verdict is Verdict.DENY


@pytest.mark.parametrize("command", ["ls *", "ls -aRL .", "find -L .", "du -aL ."])
def test_a_listing_that_may_follow_a_link_to_a_directory_asks(command: str) -> None:
    """From a review: a planted `-aR` beside `up -> ..` turned `ls *` into a
    listing of ~/.ssh; `find -L .` listed it through the link."""
    linked = WorkspaceFacts(searched=(CWD,), dir_links=("/p/up",))
    assert decide(command, linked) is Verdict.ASK
    assert decide(command, EMPTY) is Verdict.ALLOW


def test_a_listing_rooted_at_a_link_is_judged_where_it_leads() -> None:
    facts = WorkspaceFacts(searched=("/home/u/p",), dir_links=("/home/u/p/up",),
                           real_paths=(("/home/u/p/up", "/home/u"),))
    a = analyze_bash("ls -aR up", "/home/u/p", home="/home/u", workspace=facts)
    assert a.verdict is Verdict.DENY


FILE_LINKED = WorkspaceFacts(searched=(CWD,), file_links=(("/p/sub/k.txt", "/home/u/.ssh/id_rsa"),
                                                     ("/p/sub/in.txt", "/p/sub/a.txt")))


@pytest.mark.parametrize(("command", "decision"), [
    ("find sub -exec cat {} +", Verdict.DENY),
    ("find . -print0 | xargs -0 cat", Verdict.DENY),
    ("grep -R KEY sub", Verdict.DENY),
    ("rg -L KEY .", Verdict.DENY),
    ("diff -r sub /p/other", Verdict.DENY),
    # the tools that skip the links they meet
    ("grep -r KEY sub", Verdict.ALLOW),
    ("rg KEY sub", Verdict.ALLOW),
    # a walk that never reaches the link, or names only
    ("find sub -name a.txt -exec cat {} +", Verdict.ALLOW),
    ("find other -exec cat {} +", Verdict.ALLOW),
    ("ls -R sub", Verdict.ALLOW),
])
def test_a_tree_read_is_judged_where_the_links_to_a_file_below_it_lead(
        command: str, decision: Verdict) -> None:
    assert decide(command, FILE_LINKED) is decision
