"""A fact the caller gives about the repository: its configuration runs
programs on git's reads (the analyzer does no I/O, so it cannot look)."""

from __future__ import annotations

import pytest

from analyzers import Decision, analyze_bash


@pytest.mark.parametrize(("command", "decision"), [
    ("git status", Decision.ASK), ("git diff HEAD", Decision.ASK), ("git log -p", Decision.ASK),
    ("git config user.name", Decision.ALLOW), ("git rev-parse HEAD", Decision.ALLOW),
    ("ls", Decision.ALLOW),
])
def test_git_reads_ask_when_the_repository_runs_programs(command: str, decision: Decision) -> None:
    """The caller's fact about the repository (root cause 8 of the review)."""
    result = analyze_bash(command, "/repo", home="/home/u",
                          repo_programs=("core.fsmonitor=./evil",))
    assert result.decision is decision, result.reason
