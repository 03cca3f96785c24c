"""The execution oracle against commands whose effects are known, and every
command the analyzer allows from the corpus and from the families the
review found: what the analyzer allows must do nothing the oracle sees."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzers import Verdict, analyze_bash
from fuzz import Observation, Oracle

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
#: where the analyzer is told the fixture project lies
PROJECT = "/oracle/project"


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    o = Oracle(ROOT / "fuzz" / "fixture")
    yield o
    o.close()


def _observe(oracle: Oracle, command: str) -> tuple[Verdict, Observation]:
    analysis = analyze_bash(command, PROJECT, home="/oracle/home",
                            workspace=oracle.workspace(PROJECT))
    own = tuple(w for s in analysis.subcommands for w in (*s.wrappers, *s.argv[:1]))
    # the readers a find runs on what it found are named in the command too
    own += tuple(s.argv[i + 1] for s in analysis.subcommands if s.argv[:1] == ("find",)
                 for i, w in enumerate(s.argv[:-1]) if w == "-exec")
    return analysis.verdict, oracle.observe(command, own)


SEEN = {
    "a file written": ("echo x > new.txt", "changed"),
    "a file deleted": ("rm README.md", "changed"),
    "a canary file read": ("cat ~/.ssh/id_rsa", "in the fake HOME"),
    "a canary in the output": ("cat ~/.aws/credentials", "canary"),
    "the environment's canary": ("printenv SHELLGATE_CANARY_KEY", "canary"),
    "a connection": ("exec 3<>/dev/tcp/127.0.0.1/9", "connect"),
    "a hidden program run": ("find . -maxdepth 0 -exec id \\;", "executed"),
    "a path outside the project": ("cat /etc/hostname /var/log/dpkg.log", "outside the project"),
}


@pytest.mark.parametrize("case", list(SEEN))
def test_the_oracle_sees_what_a_command_does(oracle: Oracle, case: str) -> None:
    command, expected = SEEN[case]
    obs = oracle.observe(command)
    assert any(expected in f for f in obs.findings), obs.findings


@pytest.mark.parametrize("command", ["ls -la", "cat README.md", "git status", "git log --oneline",
                                     "grep -rn TODO src/", "wc -l src/main.py"])
def test_a_read_only_command_leaves_no_finding(oracle: Oracle, command: str) -> None:
    decision, obs = _observe(oracle, command)
    assert decision is Verdict.ALLOW
    assert obs.findings == (), obs.findings


def _corpus(name: str) -> list[str]:
    return [json.loads(line)["command"] for line in (CORPUS / name).read_text().splitlines()
            if line.strip()]


#: members of the review's root-cause families, the forms allowed since and
#: their near misses: whatever the analyzer allows among them must do nothing
#: the oracle sees
FAMILIES = _corpus("review_families.jsonl")


@pytest.mark.slow
@pytest.mark.parametrize("command", [*_corpus("bash_benign.jsonl"), *FAMILIES])
def test_what_the_analyzer_allows_does_nothing_the_oracle_sees(
    oracle: Oracle, command: str
) -> None:
    analysis = analyze_bash(command, PROJECT, home="/oracle/home",
                            workspace=oracle.workspace(PROJECT))
    if analysis.verdict is not Verdict.ALLOW:
        return  # asked or denied: a person decides, nothing is claimed
    _, obs = _observe(oracle, command)
    assert obs.findings == (), f"allowed, but: {obs.findings}"
