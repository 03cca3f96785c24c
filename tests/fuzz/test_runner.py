"""`run_fuzz` end to end, in this process's children (forked: a table
changed here is the table the workers use): a failure is shrunk, saved once
and reported; a shared example database — a directory, or a real
redis-server on loopback — hands one run's finding to the next; and a
reverted option-table fix is found by the oracle's sweep."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import fuzz.properties
from analyzers import BashAnalysis, Verdict
from analyzers.bash.commands.flags import spec
from analyzers.bash.commands.readers import READERS
from fuzz import FuzzConfig, load_findings, run_fuzz
from values import replace

real_analyze = fuzz.properties.analyze_bash


def _backticks_allowed(command: str, cwd: str, **kw: object) -> BashAnalysis:
    """The real analyzer, except that anything holding a backtick is allowed
    (a containment bug to find: `echo \\`touch pwned\\``)."""
    result = real_analyze(command, cwd, **kw)  # type: ignore[arg-type]
    if "`" in command:
        return replace(result, verdict=Verdict.ALLOW)
    return result


@pytest.fixture
def weakened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz.properties, "analyze_bash", _backticks_allowed)


def _config(tmp_path: Path, name: str, **kw: object) -> FuzzConfig:
    base: dict[str, object] = {"seconds": 30.0, "workers": 1, "seed": 11,
                               "properties": ("containment",),
                               "findings": tmp_path / f"{name}.jsonl",
                               "database": str(tmp_path / "db")}
    return FuzzConfig(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_failing_property_is_shrunk_saved_once_and_reported(
    weakened: None, tmp_path: Path
) -> None:
    report = run_fuzz(_config(tmp_path, "found", examples=300))
    assert report.failures, "the weakened analyzer went unnoticed"
    saved = load_findings(tmp_path / "found.jsonl")
    assert [f["command"] for f in saved] == [f["command"] for f in report.failures]
    shortest = min(saved, key=lambda f: len(f["command"]))
    assert "`" in shortest["command"] and len(shortest["command"]) < 40, shortest
    assert shortest["property"] == "containment" and shortest["seed"] == 11
    assert report.summary()["failures"] == len(saved)


# -- a fleet's database -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (make test installs Debian's "
                    "redis-server when run as root)")
    port = _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["directory", "redis"])
def test_a_shared_database_replays_one_runs_finding_to_the_next(
    weakened: None, tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    database = request.getfixturevalue("redis_url") if kind == "redis" else str(tmp_path / "db")
    first = run_fuzz(_config(tmp_path, "first", examples=300, database=database))
    assert first.failures
    # another machine: one example only — the database's (a failure it
    # holds, shrunk again on arrival)
    second = run_fuzz(_config(tmp_path, "second", examples=1, seed=99, database=database))
    assert second.failures and all("`" in f["command"] for f in second.failures)
    # the control: the same single example without the database finds nothing
    alone = run_fuzz(_config(tmp_path, "alone", examples=1, seed=99,
                             database=str(tmp_path / "empty")))
    assert not alone.failures


# -- a reverted fix ---------------------------------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_reverted_option_table_fix_is_found_by_the_oracle(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`locale -m` runs gzip over the compressed charmaps: the root-causes
    issue dropped -m from locale's table; put back, the sweep finds it."""
    monkeypatch.setitem(READERS, "locale", spec("akcmv", paths="none",
                                                long={"--help": READERS["locale"].flags["--help"]}))
    report = run_fuzz(_config(tmp_path, "locale", seconds=60.0, oracle=True, first=True,
                              properties=("oracle",), programs=("locale",)))
    found = [f for f in report.failures if f["command"].startswith(("locale -m",
                                                                    "locale --charm"))]
    assert found, json.dumps(report.summary())[:500]
    assert "gzip" in found[0]["trace"] and found[0]["after_seconds"] < 60
