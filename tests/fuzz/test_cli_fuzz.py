"""`shellgate fuzz` as a user runs it: the real command line, its JSON
summary, its exit status, its one-line errors, and an interrupted run that
still reports."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SHELLGATE = str(Path(sys.executable).with_name("shellgate"))
SUMMARY_KEYS = {"examples", "failures", "oracle_runs", "seconds", "seed", "workers"}


def _fuzz(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SHELLGATE, "fuzz", "--findings", str(tmp_path / "findings.jsonl"),
         "--database", str(tmp_path / "db"), *args],
        capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
def test_a_bounded_run_prints_one_summary_object_last_and_finds_nothing(tmp_path: Path) -> None:
    proc = _fuzz(tmp_path, "--examples", "400", "--seed", "3", "--workers", "2", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary.keys() >= SUMMARY_KEYS
    assert summary["examples"] >= 400 and summary["failures"] == 0
    assert (summary["seed"], summary["workers"]) == (3, 2)
    assert summary["coverage"]["drawn"] > 30
    assert not (tmp_path / "findings.jsonl").exists()


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_oracle_run_runs_what_the_analyzer_allows(tmp_path: Path) -> None:
    proc = _fuzz(tmp_path, "--examples", "120", "--seed", "4", "--workers", "1", "--oracle",
                 "--property", "oracle", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["oracle_runs"] > 0 and summary["failures"] == 0


def test_without_json_a_summary_table_is_printed(tmp_path: Path) -> None:
    proc = _fuzz(tmp_path, "--examples", "30", "--workers", "1", "--property", "quoting")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "examples" in proc.stdout and "quoting" in proc.stdout


BAD = {
    "an unknown property": (["--property", "nope"], "no property 'nope'"),
    "a negative time": (["--seconds", "-1"], "between 0 and"),
    "a time that is not a number": (["--seconds", "nan"], "between 0 and"),
    "too many workers": (["--workers", "5000"], "between 0 and"),
    "findings that cannot be written": (["--findings", "/proc/x/findings.jsonl"],
                                        "cannot write findings"),
    "an unknown program": (["--program", "nosuchtool"], "nosuchtool"),
    "an unreachable redis": (["--database", "redis://127.0.0.1:1"], "cannot reach"),
    "a database that is a file": (["--database", "/etc/hostname"], "example database"),
    "an unknown mode": (["--mode", "fast"], "invalid choice"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_run_that_cannot_start_says_why_in_one_line(tmp_path: Path, case: str) -> None:
    args, said = BAD[case]
    proc = subprocess.run([SHELLGATE, "fuzz", "--examples", "5", *args], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines and said in lines[-1] and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.slow
def test_an_interrupted_run_stops_its_workers_and_still_reports(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [SHELLGATE, "fuzz", "--seconds", "120", "--workers", "2", "--json",
         "--findings", str(tmp_path / "f.jsonl"), "--database", str(tmp_path / "db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # interrupted once both workers run and have had a few seconds (a
    # fixed wait saw none start in time on a loaded machine)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(subprocess.run(
            ["pgrep", "-f", str(tmp_path)], capture_output=True, text=True,
            check=False).stdout.split()) < 3:
        time.sleep(0.5)
    time.sleep(6)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["interrupted"] and summary["examples"] > 0
    assert "Traceback" not in err
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True,
                          check=False)
    assert left.stdout.strip() == "", "workers outlived the run"


@pytest.mark.parametrize("argv", [["check", "ls"], ["doctor", "--json"],
                                  ["run", "--", "true"]])
def test_the_other_verbs_never_load_the_fuzzer(argv: list[str]) -> None:
    probe = ("import sys, contextlib, io\n"
             "from gateway.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             f"    main({argv!r})\n"
             "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
             "('fuzz', 'hypothesis', 'redis', 'atheris'))\n"
             "print(loaded)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout[-500:] + proc.stderr[-500:]
