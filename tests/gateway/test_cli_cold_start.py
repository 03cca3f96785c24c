"""What a cold ``shellgate check`` loads: only what judging a command needs.

Each module named here once cost every check milliseconds (bench/cold.py):
the regex compiler's work, shutil (with bz2 and lzma) through argparse's
terminal width, the sandbox's policy models through a repository's
configuration, pathlib through the repository walk.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import re._compiler as compiler
compiled = []
original = compiler.compile
def counting(p, flags=0):
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(compiler.__file__.rsplit("/", 1)[0]):
        frame = frame.f_back  # past re's own frames: who asked for it
    if frame.f_code.co_filename.startswith(sys.argv[2]):
        compiled.append(f"{frame.f_code.co_filename}:{frame.f_lineno}")
    return original(p, flags)
compiler.compile = counting
from gateway.cli import main
code = main(["check", "--json", sys.argv[1]])
print(json.dumps({"code": code, "modules": sorted(sys.modules),
                  "compiled": [repr(p) for p in compiled]}), file=sys.stderr)
"""

NEVER_LOADED = ["pydantic", "shutil", "bz2", "lzma", "asyncio", "psutil", "sandbox.policy",
                "sandbox.launch", "dataclasses", "inspect", "pathlib", "threading", "glob",
                "hashlib", "uuid", "tempfile", "argparse", "locale", "sandbox.walk",
                "sandbox.repos"]


@pytest.fixture(scope="module")
def cold_check(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = subprocess.run([sys.executable, "-c", PROBE, "git log --oneline -5", str(ROOT)],
                          cwd=repo,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == "allow", done.stdout
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("module", NEVER_LOADED)
def test_a_cold_check_in_a_repository_never_loads(cold_check: dict[str, object],
                                                   module: str) -> None:
    assert module not in cold_check["modules"]  # type: ignore[operator]


def test_a_cold_check_compiles_no_regex_of_its_own(cold_check: dict[str, object]) -> None:
    # The packages' patterns come from regexes/table.py (what re still
    # compiles is the standard library's own) — under the Python release the
    # table was built for; under another, re compiles them all.
    from regexes import engine_key, table

    if engine_key() == table.ENGINE:
        assert cold_check["compiled"] == [], cold_check["compiled"]
    else:
        assert len(cold_check["compiled"]) > 20  # type: ignore[arg-type]


# The process entry as the console script runs it (sys.argv, main()); what
# was loaded is printed by an atexit callback, which the quick exit of a
# check must still run.
ENTRY_PROBE = """
import atexit, sys
atexit.register(lambda: print(repr(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["shellgate", "check", sys.argv[1]]
from gateway.cli import main
sys.exit(main())
"""

#: the standard library a check needs none of (typing and what it imports,
#: shlex and fnmatch with the regex compiler under them, importlib's package
#: with warnings, json for a plain verdict, enum with the functools and
#: collections it imports): each was loaded by every cold check once
NEVER_LOADED_BY_THE_ENTRY = ["typing", "contextlib", "warnings", "shlex", "fnmatch",
                             "importlib", "tree_sitter", "json", "enum", "functools",
                             "collections"]


@pytest.fixture(scope="module")
def cold_entry(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    repo = tmp_path_factory.mktemp("entry")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = subprocess.run([sys.executable, "-c", ENTRY_PROBE, "git log --oneline -5"],
                          cwd=repo, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    modules: list[str] = ast.literal_eval(done.stderr.strip().splitlines()[-1])
    return done.stdout, modules


@pytest.mark.parametrize("module", NEVER_LOADED_BY_THE_ENTRY)
def test_the_check_process_never_loads(cold_entry: tuple[str, list[str]], module: str) -> None:
    assert cold_entry[0].startswith("ALLOW  git log")
    assert module not in cold_entry[1]


def test_the_check_process_never_loads_the_regex_compiler(
        cold_entry: tuple[str, list[str]]) -> None:
    from regexes import engine_key, table

    if engine_key() == table.ENGINE:  # else re compiles the analyzer's patterns
        assert "re" not in cold_entry[1]
    else:
        assert "re" in cold_entry[1]


THREAD_PROBE = """
import sys, threading, time
marker = sys.argv[1]
def late():
    time.sleep(0.5)
    open(marker, "w").write("done")
threading.Thread(target=late).start()
sys.argv = ["shellgate", "check", "ls"]
from gateway.cli import main
sys.exit(main())
"""


def test_a_check_process_with_a_thread_still_running_waits_for_it(tmp_path: Path) -> None:
    # the quick exit is for a process with nothing left to do; a thread (an
    # embedding program's) is left to finish as at any Python exit
    marker = tmp_path / "marker"
    done = subprocess.run([sys.executable, "-c", THREAD_PROBE, str(marker)], cwd=tmp_path,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ALLOW")
    assert marker.read_text() == "done"


FINALIZER_PROBE = """
import sys, tempfile
kept = tempfile.TemporaryDirectory()
print(kept.name, file=sys.stderr)
sys.argv = ["shellgate", "check", "ls"]
from gateway.cli import main
sys.exit(main())
"""


def test_a_check_process_runs_the_finalizers_left_for_exit(tmp_path: Path) -> None:
    # weakref finalizers registered for exit (a TemporaryDirectory's
    # cleanup) run at the quick exit as at the ordinary one
    done = subprocess.run([sys.executable, "-c", FINALIZER_PROBE], cwd=tmp_path,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    left = Path(done.stderr.strip().splitlines()[-1])
    assert left.name.startswith("tmp")
    assert not left.exists()


def test_a_check_process_writes_all_of_a_long_verdict_through_a_pipe(tmp_path: Path) -> None:
    # the streams are flushed before the quick exit: a verdict far larger
    # than a pipe's buffer arrives whole, with its exit status
    command = " && ".join(f"cat file{i}.txt" for i in range(40)) + " " + "x" * 70_000
    done = subprocess.run([sys.executable, "-m", "gateway", "check", "--json", command],
                          cwd=tmp_path, capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 70_000
    assert json.loads(done.stdout)["command"] == command


GC_PROBE = """
import gc, sys
from gateway.cli import check
seen = []
original = check._check_line
def recording(*args):
    seen.append(gc.isenabled())
    return original(*args)
check._check_line = recording
import atexit
atexit.register(lambda: print(seen, gc.isenabled(), file=sys.stderr))
sys.argv = ["shellgate", "check", "--jsonl"]
from gateway.cli import main
sys.exit(main())
"""


def test_the_collector_is_on_while_a_check_process_judges(tmp_path: Path) -> None:
    # it is off only while the modules load: a long --jsonl stream is
    # collected as any Python process is
    lines = b'{"command": "ls"}\n{"command": "cat a"}\n'
    done = subprocess.run([sys.executable, "-c", GC_PROBE], input=lines, cwd=tmp_path,
                          capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().strip().splitlines()[-1] == "[True, True] True"


@pytest.mark.parametrize("verb", [["check", "--json", "ls"], ["check", "--jsonl"]])
def test_a_check_process_with_stderr_closed_still_answers_cleanly(
        tmp_path: Path, verb: list[str]) -> None:
    # from a review of the quick exit: with fd 2 closed sys.stderr is None,
    # and flushing it raised into main's last-resort handler, which printed
    # an "internal error" line into the JSON on stdout and exited 1
    done = subprocess.run([sys.executable, "-m", "gateway", *verb], cwd=tmp_path,
                          input=b'{"command": "ls"}\n', stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, check=False, timeout=60,
                          preexec_fn=lambda: os.close(2))
    assert done.returncode == 0
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["decision"] == "allow"


HOOK_GC_PROBE = """
import gc, sys
from gateway.cli import hook_guard
original = hook_guard.run
def recording():
    print("collector on:", gc.isenabled(), file=sys.stderr)
    return original()
hook_guard.run = recording
sys.argv = ["shellgate", "hook"]
from gateway.cli import main
sys.exit(main())
"""


def test_the_collector_is_on_while_a_hook_process_judges(tmp_path: Path) -> None:
    # from a review: the hook's early return skipped the re-enabling, so the
    # hook and the judgement it forks ran with the collector off
    call = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "ls"}, "cwd": str(tmp_path),
                       "session_id": "s", "tool_use_id": "t"}).encode()
    done = subprocess.run([sys.executable, "-c", HOOK_GC_PROBE], input=call, cwd=tmp_path,
                          capture_output=True, check=False, timeout=60,
                          env={**os.environ, "SHELLGATE_HOOK_DAEMON": "0"})
    assert b"collector on: True" in done.stderr, done.stderr


@pytest.mark.sandbox
@pytest.mark.parametrize("closed", [1, 2])
def test_a_run_process_with_a_stream_closed_keeps_the_command_s_status(
        tmp_path: Path, closed: int) -> None:
    # the quick exit of `run` flushes what is open and skips what is not
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "run", "--",
         "sh", "-c", "echo out; echo err >&2; exit 7"],
        cwd=tmp_path, capture_output=True, check=False, timeout=60,
        preexec_fn=lambda: os.close(closed))
    assert done.returncode == 7, done.stderr
    kept = done.stderr if closed == 1 else done.stdout
    assert kept == (b"err\n" if closed == 1 else b"out\n")


@pytest.mark.sandbox
@pytest.mark.parametrize(("argv", "status"), [
    (["run", "--", "no-such-program-anywhere"], 127),
    (["run", "--timeout", "1", "--", "sleep", "5"], 124),
])
def test_with_stderr_closed_a_run_keeps_its_status_and_its_stdout_clean(
        tmp_path: Path, argv: list[str], status: int) -> None:
    # from a review: shellgate's own lines, meant for a closed stderr, were
    # printed into stdout, and a missing program became an internal error
    done = subprocess.run([sys.executable, "-m", "gateway", *argv], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False,
                          timeout=60, preexec_fn=lambda: os.close(2))
    assert (done.returncode, done.stdout) == (status, b"")


def test_a_check_process_with_stdin_closed_reads_nothing_and_says_nothing_wrong(
        tmp_path: Path) -> None:
    # from a review: `check --jsonl <&-` was an internal error (status 1)
    done = subprocess.run([sys.executable, "-m", "gateway", "check", "--jsonl"], cwd=tmp_path,
                          capture_output=True, check=False, timeout=60,
                          preexec_fn=lambda: os.close(0))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


CHILD_FD_PROBE = """
import subprocess, sys
from gateway.cli import check
def spawning(args):
    # what a child of the process sees as its fd 2
    return subprocess.run(["sh", "-c", "test -e /proc/self/fd/2"], check=False).returncode
check.main = spawning
sys.argv = ["shellgate", "check", "ls"]
from gateway.cli import main
sys.exit(main())
"""


def test_a_closed_standard_stream_is_open_to_the_children_the_process_starts(
        tmp_path: Path) -> None:
    # from a review: /dev/null opened on the freed fd 2 is close-on-exec, so
    # a child (doctor's probes) started with fd 2 closed again
    done = subprocess.run([sys.executable, "-c", CHILD_FD_PROBE], cwd=tmp_path,
                          stdout=subprocess.DEVNULL, check=False, timeout=60,
                          preexec_fn=lambda: os.close(2))
    assert done.returncode == 0
