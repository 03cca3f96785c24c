"""Every command bash runs for an allowed command line is one the analyzer
saw, with the same words.

The analyzer reads commands through tree-sitter; bash reads them its own
way. Where the two disagree (a here-document that ends early, `>` inside
`[ ]`, brace expansion, a `\\;`), bash runs a command — or an option such
as `--output=FILE` — the analyzer never judged. So each allowed command
line is run by the real bash with every command replaced by a recorder:
the builtins are disabled, ``PATH`` leads nowhere, and bash's
``command_not_found_handle`` writes down each argv it was asked to run.
Whatever bash ran must be among the analyzer's subcommands, word for word.
It runs in a throwaway bubblewrap sandbox with no network (attacks in the
corpus run too).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from analyzers import BashAnalysis, Verdict, WorkspaceFacts, analyze_bash

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[2]
CWD, HOME = "/home/user/project", "/home/user"
BWRAP = shutil.which("bwrap")

#: disable every builtin bash would run unrecorded (printf stays: the
#: recorder needs it), then record what bash cannot find
RECORDER = r"""
for name in $(enable | while read -r _ b; do echo "$b"; done); do
  case $name in enable|printf|builtin) ;; *) enable -n "$name" ;; esac
done
command_not_found_handle() {
  builtin printf '%s\0' "$@" $'\1' >> "$SG_LOG"  # one write: pipeline stages run at once
}
"""
#: then wait for the last process substitution (`wait` re-enabled: bash
#: 5.1+ waits for it): a recorder still writing when bash exits dies with
#: the sandbox (seen on a loaded machine)
WAIT = "enable wait; wait"
_FD = re.compile(r"^/dev/fd/\d+$")
_OPAQUE = re.compile(r"^\$[A-Z_]+$")


def _corpus(name: str) -> list[str]:
    lines = (ROOT / "tests" / "corpus" / name).read_text().splitlines()
    return [json.loads(line)["command"] for line in lines if line.strip()]


def _analyze(command: str) -> BashAnalysis:
    return analyze_bash(command, CWD, home=HOME, workspace=WorkspaceFacts(searched=(CWD,)))


ALLOWED_LINES = sorted({
    c for c in (*_corpus("bash_benign.jsonl"), *_corpus("bash_attacks.jsonl"),
                *_corpus("review_families.jsonl"))
    if _analyze(c).verdict is Verdict.ALLOW
})


def _bash_ran(command: str, tmp: Path) -> list[tuple[str, ...]]:
    log = tmp / "argv.log"
    work = tmp / "work"
    work.mkdir(parents=True)
    argv = [
        BWRAP or "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(tmp), str(tmp), "--chdir", str(work),
        "--setenv", "HOME", HOME, "--setenv", "PATH", "/nonexistent",
        "--setenv", "SG_LOG", str(log),
        "--", "/bin/bash", "-c", RECORDER + "\n" + command + "\n" + WAIT,
    ]
    subprocess.run(argv, capture_output=True, timeout=20, check=False, stdin=subprocess.DEVNULL)
    if not log.exists():
        return []
    records = log.read_bytes().split(b"\1\0")[:-1]
    return [tuple(w.decode("utf-8", "replace") for w in r.split(b"\0")[:-1]) for r in records]


def _same(analyzed: tuple[str, ...], ran: tuple[str, ...]) -> bool:
    if len(analyzed) != len(ran):
        return False
    return all(a == r or _OPAQUE.match(a) or (_FD.match(a) and _FD.match(r))
               for a, r in zip(analyzed, ran, strict=True))


def test_the_recorder_sees_what_bash_runs(tmp_path: Path) -> None:
    expected = [("cd", "src"), ("echo", "a", "b"), ("grep", "-e", "x", "/dev/fd/63"),
                ("ls", "-l")]
    # Up to three tries: on a loaded machine the process substitution's
    # record can still be on its way when bash (and the sandbox) ends. A
    # record missed only makes the comparisons below more lenient, never
    # wrong; what this test proves is that the recorder can see each one.
    for attempt in range(3):
        ran = _bash_ran("cd src && echo {a,b} | grep -e x <(ls -l)", tmp_path / str(attempt))
        if sorted(ran) == expected:
            break
    assert sorted(ran) == expected


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed")
@pytest.mark.parametrize("command", ALLOWED_LINES)
def test_bash_runs_nothing_the_analyzer_did_not_see(command: str, tmp_path: Path) -> None:
    analyzed = [s.raw_argv for s in _analyze(command).subcommands if s.raw_argv]
    # `time` is a keyword to bash, a wrapper to the analyzer
    analyzed += [a[2:] if a[1:2] == ("-p",) else a[1:] for a in analyzed if a[0] == "time"]
    for ran in _bash_ran(command, tmp_path):
        assert any(_same(a, ran) for a in analyzed), (
            f"bash ran {ran!r}; the analyzer saw {analyzed!r}")


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed")
def test_the_comparison_catches_a_command_tree_sitter_hides(tmp_path: Path) -> None:
    """The control: before the analyzer failed closed on it, this heredoc
    (delimiter quoted in part) hid `touch HIDDEN` from tree-sitter."""
    command = "cat <<E'O'F\nx\nEOF\ntouch HIDDEN\nE'O'F\n"
    analyzed = [s.raw_argv for s in _analyze(command).subcommands if s.raw_argv]
    ran = _bash_ran(command, tmp_path)
    assert ("touch", "HIDDEN") in ran
    assert not any(_same(a, ("touch", "HIDDEN")) for a in analyzed)
    assert _analyze(command).verdict is not Verdict.ALLOW
