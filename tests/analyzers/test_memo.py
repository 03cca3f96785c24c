"""The analyzer keeps finished analyses by every one of their inputs: the
same command judged again gets the same answer at once, a change of any
input is judged afresh, and what is kept stays bounded whatever comes in."""

from __future__ import annotations

import pytest

from analyzers import Verdict, WorkspaceFacts, analyze_bash
from analyzers.bash import analysis
from analyzers.bash.memo import Results

CWD, HOME = "/p", "/home/u"


def test_the_same_command_and_inputs_get_the_same_analysis_back() -> None:
    first = analyze_bash("git log --oneline -5", CWD, home=HOME, workspace=WorkspaceFacts())
    again = analyze_bash("git log --oneline -5", CWD, home=HOME, workspace=WorkspaceFacts())
    assert again is first
    assert first.verdict is Verdict.ALLOW


BASE: dict[str, object] = {"cwd": CWD, "home": HOME, "extra_read_dirs": ("/q",),
                           "workspace": WorkspaceFacts(searched=(CWD,))}

# each case: a command allowed with BASE's inputs, and one input changed so
# that the answer must change — a memo keyed by less than every input
# would answer allow again
CHANGED_INPUT = [
    pytest.param("git status", {"workspace": WorkspaceFacts(repo_programs=("core.fsmonitor=x",))},
                 id="the repository's program-running configuration"),
    pytest.param("grep -rn TODO .",
                 {"workspace": WorkspaceFacts(searched=(CWD,), dotenv_files=("/p/.env",))},
                 id="a dotenv file found below the working directory"),
    pytest.param("cat up/notes",
                 {"workspace": WorkspaceFacts(searched=(CWD,), real_paths=(("/p/up/notes",
                                                                            "/etc/notes"),))},
                 id="a link the path goes through"),
    pytest.param("cat /p/README", {"cwd": "/elsewhere"}, id="the working directory"),
    pytest.param("cat ~/notes", {"home": "/p"}, id="the home directory"),
    pytest.param("cat /q/notes", {"extra_read_dirs": ()}, id="the extra read directories"),
]


@pytest.mark.parametrize(("command", "change"), CHANGED_INPUT)
def test_a_kept_analysis_is_not_reused_when_any_input_differs(
        command: str, change: dict[str, object]) -> None:
    kept = _analyze(command, BASE)
    changed = _analyze(command, {**BASE, **change})
    assert kept.verdict is not changed.verdict, (kept.reason, changed.reason)
    # and the first is still what it was: nothing of the second replaced it
    assert _analyze(command, BASE) is kept


def _analyze(command: str, inputs: dict[str, object]) -> analysis.BashAnalysis:
    return analyze_bash(command, str(inputs["cwd"]), home=inputs["home"],  # type: ignore[arg-type]
                        extra_read_dirs=inputs["extra_read_dirs"],  # type: ignore[arg-type]
                        workspace=inputs["workspace"])  # type: ignore[arg-type]


def test_a_list_of_extra_directories_is_a_key_like_the_same_tuple() -> None:
    as_list = analyze_bash("cat /q/a", CWD, extra_read_dirs=["/q"])
    as_tuple = analyze_bash("cat /q/a", CWD, extra_read_dirs=("/q",))
    assert as_list is as_tuple
    assert as_list.verdict is Verdict.ALLOW


def test_facts_that_cannot_be_a_key_are_judged_without_the_memo() -> None:
    # a caller passing a mutable value where a frozen one belongs still gets
    # its answer (the facts are read, not hashed)
    class Unhashable(WorkspaceFacts):
        __hash__ = None  # type: ignore[assignment]

    facts = Unhashable(repo_programs=("core.fsmonitor=./x",))
    assert analyze_bash("git status", CWD, workspace=facts).verdict is Verdict.ASK


def test_the_kept_analyses_stay_within_their_budget() -> None:
    huge = " && ".join(f"cat f{i}" for i in range(2000))
    for n in range(12):
        analyze_bash(f"{huge} && echo {n}", CWD)
    total = sum(weight for _, weight in analysis._RESULTS._store.values())
    assert 0 < total <= analysis._RESULTS._budget


def test_results_drop_the_oldest_first_and_never_keep_one_heavier_than_the_budget() -> None:
    kept = Results(budget=10, entries=3)
    for key in "abc":
        kept.put(key, key.upper(), 2)
    kept.put("d", "D", 2)  # four entries: the oldest goes
    assert [kept.get(k) for k in "abcd"] == [None, "B", "C", "D"]
    kept.put("e", "E", 8)  # by weight: b and c go to make room (2 + 8 <= 10)
    assert [kept.get(k) for k in "bcde"] == [None, None, "D", "E"]
    kept.put("f", "F", 11)
    assert kept.get("f") is None
    assert kept.get("e") == "E"


def test_what_the_kept_analyses_hold_in_memory_stays_near_their_budget() -> None:
    # from a review: weighed by their number of paths, analyses of long
    # brace-expanded paths (256 paths of 5,000 characters each, ~2.5 MB an
    # analysis) held 200 MB under a budget of ~16 MB
    import gc
    import tracemalloc

    analysis._RESULTS.clear()
    tracemalloc.start()
    try:
        for n in range(20):
            analyze_bash(f"cat /{'p' * 5000}{n}/" + "{1..256}", CWD)
        analysis._read.cache_clear()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        analysis._RESULTS.clear()
        gc.collect()
        held = before - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert 0 < held <= (analysis._RESULTS._budget << 10) * 1.25, held
