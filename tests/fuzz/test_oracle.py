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
from fuzz.properties import own_programs

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
    return analysis.verdict, oracle.observe(command, own_programs(analysis))


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


#: what a batch can tell apart per command: programs run, opens, connections
#: (a canary in the output or a file changed sends a batch back to singles)
BATCHABLE = {
    "cat ~/.ssh/id_rsa > /dev/null": "in the fake HOME",
    "exec 3<>/dev/tcp/127.0.0.1/9": "connect",
    "find . -maxdepth 0 -exec id \\;": "executed",
    "cat /etc/hostname /var/log/dpkg.log": "outside the project",
}


def test_a_batch_tells_each_commands_doings_apart_in_one_sandbox(oracle: Oracle) -> None:
    clean = ["ls -la", "cat README.md", "git log --oneline", "wc -l notes.txt"]
    items: list[tuple[str, tuple[str, ...]]] = []
    for quiet, loud in zip(clean, BATCHABLE, strict=True):
        items += [(quiet, (quiet.split()[0],)), (loud, ())]
    before = oracle.sandboxes
    seen = oracle.observe_batch(items)
    assert oracle.sandboxes - before == 1
    for (command, _), obs in zip(items, seen, strict=True):
        if command in BATCHABLE:
            assert any(BATCHABLE[command] in f for f in obs.findings), (command, obs.findings)
        else:
            assert obs.findings == (), (command, obs.findings)


#: from a white-box review of the batches: what each case hid, and what
#: the oracle must see of it (alone and in a batch alike)
SLIPPERY = {
    # a command exec'ing with a batch's mark as its last argument
    "find . -maxdepth 0 -exec id shellgate-oracle-item-0 \\;": "executed /usr/bin/id",
    # a vfork child acts before its parent's clone result is printed
    "python3 -c 'import os; os.posix_spawn(\"/usr/bin/id\", [\"id\"], os.environ, "
    "file_actions=[(os.POSIX_SPAWN_OPEN, 3, os.environ[\"HOME\"] + \"/.ssh/id_rsa\", "
    "os.O_RDONLY, 0)])'": "in the fake HOME",
    # a path the kernel resolves elsewhere than its text says
    "base64 /proc/self/cwd/../home/.ssh/id_rsa": "in the fake HOME",
    "ln -s ../home h; base64 h/.ssh/id_rsa; rm h": "in the fake HOME",
    # a file name holding O_PATH (the flag, not the name, reads nothing)
    "mkdir -p /tmp/O_PATH; head -c 9 /tmp/O_PATH/../../var/log/dpkg.log": "outside the project",
    # a system file that is a secret
    "base64 /etc/shadow": "password hashes",
    # a child's own chdir, made before the fork's result is printed
    "python3 -c 'import subprocess, os; subprocess.run([\"cat\", \".ssh/id_rsa\"], "
    "cwd=os.environ[\"HOME\"], stdout=subprocess.DEVNULL)'": "in the fake HOME",
}


@pytest.mark.parametrize("command", list(SLIPPERY))
def test_what_a_process_tree_does_is_seen_alone_and_in_a_batch(oracle: Oracle,
                                                               command: str) -> None:
    alone = oracle.observe(command, ("python3", "find"))
    batch = oracle.observe_batch([("ls", ("ls",)), (command, ("python3", "find")),
                                  ("wc -l notes.txt", ("wc",))])
    for obs in (alone, batch[1]):
        assert any(SLIPPERY[command] in f for f in obs.findings), obs.findings
    assert batch[0].findings == () and batch[2].findings == ()


#: reads the batch's end mark from the driver's command line, prints it,
#: and kills the driver: the items after it never run (from a review)
KILLER = ("m=$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' "
          "| grep -o 'shellgate-[0-9a-f]*-done' | head -1); echo \"$m\"; kill -9 -1")


def test_an_item_that_kills_the_batch_after_forging_its_end_leaves_the_others_judged(
    oracle: Oracle,
) -> None:
    seen = oracle.observe_batch([("true", ("true",)), (KILLER, ()),
                                 ("cat ~/.ssh/id_rsa > /dev/null", ("cat",))])
    assert any("in the fake HOME" in f for f in seen[2].findings), seen[2].findings


def test_an_item_that_kills_the_batch_leaves_the_others_judged(oracle: Oracle) -> None:
    seen = oracle.observe_batch([("true", ("true",)), ("kill -9 -1", ("kill",)),
                                 ("cat ~/.ssh/id_rsa > /dev/null", ("cat",))])
    assert any("in the fake HOME" in f for f in seen[2].findings), seen[2].findings


def test_a_batch_whose_files_changed_is_judged_command_by_command(oracle: Oracle) -> None:
    before = oracle.sandboxes
    seen = oracle.observe_batch([("ls", ("ls",)), ("echo x > new.txt", ()), ("cat notes.txt",
                                                                         ("cat",))])
    assert oracle.sandboxes - before == 4  # the batch, then each alone
    assert [bool(o.findings) for o in seen] == [False, True, False]


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


#: bash-only syntax a POSIX sh reads otherwise (Debian's sh is dash); each
#: writes a file under sh, while bash reads it as a test, an arithmetic or
#: a redirection of both streams (the first found by the deep run)
POSIX_SH = [
    "sh -c '[[ a > b ]]'",
    "sh -c '(( 1 > 2 ))'",
    "dash -c '[[ x < y ]] || [[ a > c ]]'",
    "sh -c 'true &> out'",
]


@pytest.mark.parametrize("command", POSIX_SH)
def test_bash_only_syntax_in_a_posix_shells_payload_is_never_allowed(
        oracle: Oracle, command: str) -> None:
    verdict, seen = _observe(oracle, command)
    # the control: under the real sh it changes the project
    assert any("changed" in f for f in seen.findings), seen.findings
    assert verdict is not Verdict.ALLOW
