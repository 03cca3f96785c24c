"""The differential fuzzer of git's configuration (fuzz/gitconfigs.py), with a
fixed seed in `make test`: whenever the real `git status` runs a planted
program, shellgate named it. `SHELLGATE_GIT_FUZZ_SEED` and
`SHELLGATE_GIT_FUZZ_N` explore further; `shellgate fuzz` runs it as the
`git_config` property."""

from __future__ import annotations

import os

from fuzz.gitconfigs import missed, missed_secret

SEED = int(os.environ.get("SHELLGATE_GIT_FUZZ_SEED", "38"))
CASES = int(os.environ.get("SHELLGATE_GIT_FUZZ_N", "120"))


def test_whenever_git_status_runs_a_planted_program_shellgate_said_so() -> None:
    found = [(SEED + n, m) for n in range(CASES) if (m := missed(SEED + n)) is not None]
    assert not found, f"git ran a program shellgate did not see: {found[:3]}"


def test_whenever_git_reads_a_credential_from_a_file_shellgate_found_it() -> None:
    found = [(SEED + n, m) for n in range(CASES * 2)
             if (m := missed_secret(SEED + n)) is not None]
    assert not found, f"git read a credential shellgate did not find: {found[:3]}"
