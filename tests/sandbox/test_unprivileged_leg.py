"""The escape suite again, as an unprivileged user.

Real users are unprivileged, and root has dangers of its own (its sandbox
uid 0 is the host's root): a sandbox that holds for one may not hold for
the other. When the tests run as root, this test runs every
``test_escapes_*.py`` as ``nobody`` (uid 65534, no groups), with:

* an interpreter and virtualenv that user can read (the project's own venv
  usually sits under root's 0700 home): the system ``python3`` and a venv
  under ``/var/tmp``, rebuilt when ``pyproject.toml`` changes, the project
  installed into it (not editable) on every run;
* a copy of the escape tests in a directory it can read, and a home
  directory of its own under /home, as a real user has (``nobody``'s is
  /nonexistent), removed afterwards.

If the leg cannot run (no setpriv, no usable python3, pip failing), this
test fails with the reason: it never skips silently. Run as a user, it
skips with a reason — the whole suite already ran unprivileged.

The legs take minutes and use one core: they start in a thread as soon as
the session has collected them (tests/sandbox/conftest.py calls
:func:`start`), beside the rest of the suite, and their tests wait for them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
UID = GID = 65534
#: where the leg's venv and copies live (readable by that user); a second
#: checkout testing at the same time names its own, or the two would
#: install their different sources into one venv
BASE = Path(os.environ.get("SHELLGATE_LEG_DIR", "/var/tmp/shellgate-unprivileged-leg"))
#: what the leg needs beyond the project's own dependencies
TEST_DEPS = ("pytest>=8,<10", "pytest-timeout>=2.3,<3", "pyte>=0.8,<0.9", "setuptools>=68",
             "wheel")


def _python() -> str:
    """A python3 >= 3.11 with venv, outside any private home."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        probe = subprocess.run(
            [candidate, "-c", "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"],
            capture_output=True, check=False) if os.path.exists(candidate) else None
        if probe is not None and probe.returncode == 0:
            return candidate
    pytest.fail("the unprivileged leg needs /usr/bin/python3 (>= 3.11) with venv and ensurepip "
                "(apt-get install python3-venv); `make test` installs it when run as root")


def _step(argv: list[str], what: str, timeout: float = 600) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout)[-2000:]
        pytest.fail(f"the unprivileged leg could not {what}: {detail}")


def _source_copy() -> Path:
    """The project's source, copied (pip builds in the tree it installs)."""
    dest = Path(tempfile.mkdtemp(prefix="src-", dir=BASE))
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", ".*")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    for package in ("analyzers", "sandbox", "gateway", "profiles", "values", "regexes"):
        shutil.copytree(ROOT / package, dest / package, ignore=skip)
    return dest


_VENV_LOCK = threading.Lock()


def _venv() -> Path:
    """One build at a time: the two legs start on threads of their own, and
    with the venv not yet ready both rebuilt it, one deleting what the
    other was running (`OSError: [Errno 14] Bad address` executing its
    python); another test process on the machine is held off by a lock
    file beside the venv's directory."""
    import fcntl

    with _VENV_LOCK, open(f"{BASE}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        return _venv_once()


@functools.cache
def _venv_once() -> Path:
    """The readable venv with the project's dependencies (kept between runs
    while pyproject.toml is the same), the project reinstalled once per
    test session (both legs share it)."""
    stamp = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    venv = BASE / f"venv-{stamp}"
    python = venv / "bin" / "python"
    if not (venv / ".ready").exists():
        shutil.rmtree(BASE, ignore_errors=True)
        BASE.mkdir(mode=0o755, parents=True)
        _step([_python(), "-m", "venv", str(venv)], "create a virtualenv")
        source = _source_copy()
        _step([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
               str(source), *TEST_DEPS], "install the project's dependencies")
        shutil.rmtree(source, ignore_errors=True)
        (venv / ".ready").touch()
    source = _source_copy()
    try:
        _step([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
               "--no-deps", "--force-reinstall", "--no-build-isolation", str(source)],
              "install the project")
    finally:
        shutil.rmtree(source, ignore_errors=True)
    return venv


def _tests_copy(into: Path) -> Path:
    tests = into / "tests"
    tests.mkdir()
    for path in [HERE / "conftest.py", HERE / "escape_kit.py", *HERE.glob("test_escapes_*.py")]:
        shutil.copy(path, tests / path.name)
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return tests


def _as_nobody(prepare: Callable[[Path], Path], what: str) -> str:
    """Run the tests ``prepare`` copies into a readable directory as the
    unprivileged user, from the readable venv, with a home of their own."""
    if os.geteuid() != 0:
        pytest.skip(f"already unprivileged: this whole run is the user leg (uid {os.geteuid()})")
    if shutil.which("setpriv") is None:
        pytest.fail("the unprivileged leg needs setpriv (util-linux)")
    venv = _venv()
    work = Path(tempfile.mkdtemp(prefix="run-", dir=BASE))
    Path("/home").mkdir(mode=0o755, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="shellgate-leg-", dir="/home"))
    try:
        work.chmod(0o755)
        tests = prepare(work)
        os.chown(home, UID, GID)
        env = {
            "HOME": str(home),
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "USER": "nobody",
        }
        proc = subprocess.run(
            ["setpriv", f"--reuid={UID}", f"--regid={GID}", "--clear-groups",
             str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "-o", "addopts=--strict-markers", str(tests)],
            cwd=work, env=env, capture_output=True, text=True, timeout=1100, check=False,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    summary = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, f"{what} failed as uid {UID}:\n{summary}"
    assert " passed" in proc.stdout, summary
    last = proc.stdout.strip().splitlines()[-1]
    print(last, file=sys.stderr)
    return last


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(1500)
def test_the_escape_suite_passes_as_an_unprivileged_user(request: pytest.FixtureRequest) -> None:
    summary = _result(request, "escapes")
    assert " passed" in summary and "failed" not in summary and "error" not in summary


#: the tools that act in the gateway's own process, with the user's own
#: rights (Bash and Grep act in the sandbox: the escape suite covers that)
IN_PROCESS_TOOL_TESTS = ("test_read.py", "test_edit.py", "test_write.py", "test_glob.py")
#: and the warm run daemon, which real (unprivileged) users get by default
GATEWAY_TESTS = ("test_run_daemon.py", "test_check_daemon.py")


def _tool_tests_copy(into: Path) -> Path:
    """The in-process file tools' tests: held to the sandbox's policy, they
    read and write with the user's own rights, not the sandbox's; and the
    run daemon's, as the user it serves."""
    tests = into / "gateway_tests"
    gateway_tests = HERE.parent / "gateway"
    (tests / "tools").mkdir(parents=True)
    for name in IN_PROCESS_TOOL_TESTS:
        shutil.copy(gateway_tests / "tools" / name, tests / "tools" / name)
    for name in ("conftest.py", "kit.py", *GATEWAY_TESTS):
        shutil.copy(gateway_tests / name, tests / name)
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return tests


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(1500)
def test_the_tool_tests_pass_as_an_unprivileged_user(request: pytest.FixtureRequest) -> None:
    summary = _result(request, "tools")
    assert " passed" in summary and "failed" not in summary and "error" not in summary


_started: dict[str, Future[str]] = {}
_lock = threading.Lock()


def start(results: Path | None = None) -> dict[str, Future[str]]:
    """Both legs, one after the other in one background thread (they share
    the readable venv), started once per session. With the suite spread
    over pytest-xdist's workers, the controller starts them (it knows the
    moment every worker has collected) and each leg's outcome is written
    to ``results``, where the worker that runs its test reads it."""
    with _lock:
        if not _started:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="unprivileged-leg")
            _started["escapes"] = pool.submit(_as_nobody, _tests_copy, "the escape suite")
            _started["tools"] = pool.submit(_as_nobody, _tool_tests_copy, "the tool tests")
            pool.shutdown(wait=False)
            if results is not None:
                for name, future in _started.items():
                    future.add_done_callback(functools.partial(_write_result, results, name))
    return _started


def results_dir(testrunuid: str) -> Path:
    """Where the legs of the test run ``testrunuid`` leave their outcomes."""
    return BASE.parent / f"{BASE.name}-results-{testrunuid}"


def _write_result(results: Path, name: str, future: Future[str]) -> None:
    error = future.exception()
    outcome = {"summary": future.result()} if error is None else {"error": str(error)}
    results.mkdir(parents=True, exist_ok=True)
    partial = results / f".{name}.json"
    partial.write_text(json.dumps(outcome))
    partial.rename(results / f"{name}.json")


def _result(request: pytest.FixtureRequest, name: str) -> str:
    """The leg's summary line; fails with what its run raised."""
    worker = getattr(request.config, "workerinput", None)
    if worker is None:
        return start()[name].result(timeout=1400)
    path = results_dir(worker["testrunuid"]) / f"{name}.json"
    deadline = time.monotonic() + 1400
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the unprivileged leg ({name}) gave no outcome in time")
        time.sleep(1)
    outcome = json.loads(path.read_text())
    if "error" in outcome:
        pytest.fail(outcome["error"], pytrace=False)
    return str(outcome["summary"])
