"""Every option of every reader table (and of git's), run through the
execution oracle.

Generated from the tables, not written by the hands that wrote them: each
switch is given alone before a file; each option that takes a value is
given the path of a canary secret as that value (`sort -T ~/.ssh/id_rsa`).
Where the analyzer allows the command — because it takes the value for a
word, not a path — the oracle watches whether the tool opens it
(root cause 3 of the review: values that hold paths judged as paths).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from analyzers import Verdict, analyze_bash
from analyzers.bash.commands.flags import Arg
from analyzers.bash.commands.git import _SIMPLE
from analyzers.bash.commands.readers import ARGUMENT_AGNOSTIC, READERS
from fuzz import Oracle
from fuzz.properties import own_programs

#: (the sweep — some 1,100 commands under the oracle, about a minute alone —
#: runs in the first test's set-up; beside other tests it takes longer)
pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
PROJECT, HOME = "/oracle/project", "/oracle/home"


def _form(opt: str, kind: Arg) -> str:
    return opt if kind is Arg.NONE else f"{opt} ~/.ssh/id_rsa"


def _commands() -> list[str]:
    out = []
    for name, spec in sorted(READERS.items()):
        if name in ARGUMENT_AGNOSTIC:
            continue
        out += [f"{name} {_form(opt, kind)} notes.txt" for opt, kind in sorted(spec.flags.items())]
    # git: each option once, under the first subcommand that takes it
    seen: set[str] = set()
    for sub, table in _SIMPLE.items():
        fresh = sorted(o for o in table if o not in seen)
        seen.update(fresh)
        out += [f"git {sub} {_form(opt, table[opt])}" for opt in fresh]
    return out


ALLOWED = [c for c in _commands()
           if analyze_bash(c, PROJECT, home=HOME).verdict is Verdict.ALLOW]


@pytest.fixture(scope="module")
def seen() -> Iterator[dict[str, tuple[str, ...]]]:
    """What the oracle saw of every allowed command, run 24 to a sandbox
    (Oracle.observe_batch: each judged on its own process tree), two
    sandboxes at a time: most of a batch's time is spent waiting (on
    processes starting under strace, on `tail -f` until its timeout)."""
    oracle = Oracle(ROOT / "fuzz" / "fixture")
    items = [(c, own_programs(analyze_bash(c, PROJECT, home=HOME))) for c in ALLOWED]
    batches = [items[start:start + 24] for start in range(0, len(items), 24)]
    out: dict[str, tuple[str, ...]] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for observed in pool.map(lambda batch: oracle.observe_batch(batch, timeout=5), batches):
            out.update((obs.command, obs.findings) for obs in observed)
    yield out
    oracle.close()


def test_the_sweep_covers_the_tables() -> None:
    """Most switches are allowed (and so run); a value naming a secret never is
    unless the table takes it for a word."""
    assert len(ALLOWED) > 400


@pytest.mark.parametrize("command", ALLOWED)
def test_an_allowed_reader_option_does_nothing_the_oracle_sees(
    seen: dict[str, tuple[str, ...]], command: str
) -> None:
    assert seen[command] == (), f"allowed, but: {seen[command]}"
