"""The command corpus: attacks from public bypass reports and benign
read-only commands, each with the decision it must get.

Working directory /home/user/project, home /home/user, no rules. The
attack corpus is also run through the legacy splitter: whatever parser is
in use, no attack may be allowed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzers import Verdict, WorkspaceFacts, analyze_bash

CORPUS = Path(__file__).parent.parent / "corpus"
CWD = "/home/user/project"
HOME = "/home/user"
#: the corpus project was searched for dotenv files and holds none (a
#: command reading a tree that reaches one: tests/analyzers/test_workspace_facts.py)
NO_DOTENV = WorkspaceFacts(searched=(CWD,))


def _load(name: str) -> list[dict[str, str]]:
    entries = []
    for number, line in enumerate((CORPUS / name).read_text("utf-8").splitlines(), 1):
        if line.strip():
            entry = json.loads(line)
            entry["line"] = str(number)
            entries.append(entry)
    return entries


ATTACKS = _load("bash_attacks.jsonl")
BENIGN = _load("bash_benign.jsonl")


def test_corpus_is_big_enough_and_well_formed() -> None:
    everything = ATTACKS + BENIGN
    assert len(everything) >= 300
    assert len(ATTACKS) >= len(everything) // 2
    assert sum(e["expected"] == "allow" for e in BENIGN) >= 70
    assert len({e["id"] for e in everything}) == len(everything), "ids must be unique"
    for e in everything:
        assert set(e) >= {"id", "command", "expected", "why", "source"}
        assert e["expected"] in ("allow", "ask", "deny")
    assert all(e["expected"] != "allow" for e in ATTACKS)


@pytest.mark.parametrize("entry", ATTACKS, ids=[e["id"] for e in ATTACKS])
def test_attack_gets_its_expected_decision_and_is_never_allowed(entry: dict[str, str]) -> None:
    result = analyze_bash(entry["command"], CWD, home=HOME, workspace=NO_DOTENV)
    assert result.verdict is not Verdict.ALLOW, f"ALLOWED an attack: {entry['why']}"
    assert result.verdict.value == entry["expected"], result.reason


@pytest.mark.parametrize("entry", ATTACKS, ids=[e["id"] for e in ATTACKS])
def test_attack_is_never_allowed_by_the_legacy_splitter(entry: dict[str, str]) -> None:
    result = analyze_bash(entry["command"], CWD, home=HOME, use_tree_sitter=False,
                          workspace=NO_DOTENV)
    assert result.verdict is not Verdict.ALLOW, f"ALLOWED an attack: {entry['why']}"


@pytest.mark.parametrize("entry", BENIGN, ids=[e["id"] for e in BENIGN])
def test_benign_command_gets_its_expected_decision(entry: dict[str, str]) -> None:
    result = analyze_bash(entry["command"], CWD, home=HOME, workspace=NO_DOTENV)
    assert result.verdict.value == entry["expected"], result.reason
