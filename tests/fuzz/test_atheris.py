"""The atheris harness (coverage-guided fuzzing of the analyzer on raw
bytes, libFuzzer): it runs, and the inputs it found stay fixed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.atheris_analyzer import check_one

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_harness_runs_under_libfuzzer_and_finds_nothing(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fuzz.atheris_analyzer", "-runs=10000", "-seed=7",
         f"-artifact_prefix={tmp_path}/"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Done 10000 runs" in proc.stderr
    assert not list(tmp_path.iterdir()), "libFuzzer left a crash input"


@pytest.mark.parametrize("data", [
    b"!",                # legacy splitter: no command at all, allowed (tree-sitter: error)
    b"ls; !",
    b"\xff\xfe\x00ls",   # invalid UTF-8 and a NUL
    b"",
    b"$(" * 400,
    b":;&",              # legacy: an operator with no command before it, allowed
    b":|&",              # legacy: a pipe with nothing after it
    b"g=\\/?$=[",         # legacy: a `$` that starts no expansion (tree-sitter: error)
    b"():",              # legacy: an empty subshell
])
def test_an_input_the_harness_found_holds_its_properties(data: bytes) -> None:
    check_one(data)
