"""Escape tests: processes that outlive the call, timeouts, output floods,
descriptors, exit statuses, never running unsandboxed.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest
from escape_kit import (
    FLOOD,
    PY,
    RUN_TIMEOUT,
    SHELLGATE,
    consume_control,
    output,
    processes_mentioning,
    require,
    sg,
    sh,
    unique_seconds,
)

import sandbox

pytestmark = [pytest.mark.sandbox]


# -- 12, 13. processes that outlive the call, timeouts ---------------------------------

BACKGROUND_ATTACKS = {
    "nohup and setsid": "nohup sleep {a} >/dev/null 2>&1 & setsid sleep {b} & echo started",
    "double-forked daemon": (
        PY + " -c 'import os\nif os.fork(): os._exit(0)\nos.setsid()\nif os.fork(): os._exit(0)\n"
        "os.execvp(\"sleep\", [\"sleep\", \"{a}\"])' & sleep 0.2; echo started"
    ),
    "ignores SIGHUP and SIGTERM": "(trap '' HUP TERM INT; exec sleep {a}) & echo started",
}


@pytest.mark.parametrize("attack", list(BACKGROUND_ATTACKS))
def test_no_process_outlives_the_call(workspace: Path, attack: str) -> None:
    """Attack: leave a process running after the call returns (a miner, a
    keylogger, something that writes later)."""
    a, b = unique_seconds(300), unique_seconds(301)
    started = time.monotonic()
    proc = sh(workspace, BACKGROUND_ATTACKS[attack].format(a=a, b=b), timeout=20)
    elapsed = time.monotonic() - started
    require(b"started" in proc.stdout, "the background processes were started", proc)
    assert proc.returncode == 0, output(proc)
    assert processes_mentioning(a) + processes_mentioning(b) == []
    assert elapsed < 10


@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    ["exec sleep {s}", "trap '' TERM INT HUP; sleep {s}", "sleep {s} & sleep {s} & wait"],
    ids=["plain sleep", "ignores SIGTERM", "background children"],
)
def test_a_timeout_ends_the_whole_tree_with_124(workspace: Path, script: str) -> None:
    """Attack: run past the wall timeout (or ignore the polite signal)."""
    seconds = unique_seconds(30)
    started = time.monotonic()
    proc = sg(workspace, "sh", "-c", script.format(s=seconds), options=("--timeout", "1"),
              timeout=20)
    elapsed = time.monotonic() - started
    assert proc.returncode == 124, output(proc)
    assert elapsed < 6
    assert "timed out" in proc.stderr.decode()
    assert processes_mentioning(seconds) == []


# -- 14. output floods ---------------------------------------------------------------


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def test_200_mb_of_output_streams_through_shellgate_in_bounded_memory(workspace: Path) -> None:
    """Attack: blow up the gateway's memory with output. The CLI streams it
    on, and its own peak RSS (VmHWM, sampled from the host) stays far below
    the size of the flood."""
    result: dict[str, subprocess.CompletedProcess[bytes]] = {}
    thread = threading.Thread(target=lambda: result.setdefault(
        "proc", sg(workspace, "head", "-c", str(FLOOD), "/dev/zero", timeout=60)))
    me = psutil.Process()
    thread.start()
    peak, samples = 0, 0
    while thread.is_alive():
        for child in me.children():
            try:
                if SHELLGATE in child.cmdline() and str(workspace) in child.cmdline():
                    peak = max(peak, _peak_rss_kib(child.pid))
                    samples += 1
            except (psutil.Error, OSError):
                continue
        time.sleep(0.01)
    thread.join()
    proc = result["proc"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(proc.stdout) == FLOOD
    require(samples > 0, "the shellgate process was sampled while it ran")
    assert peak < 128 * 1024, f"shellgate peaked at {peak} KiB for a {FLOOD}-byte flood"


@pytest.mark.parametrize("limit", [None, 4096])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_the_in_process_api_caps_captured_output(
    workspace: Path, limit: int | None, stream: str
) -> None:
    """Attack: the same flood through `sandbox.run`: the result keeps at
    most `limits.max_output_bytes` per stream and says it truncated."""
    policy = sandbox.load_profile("workspace-write")
    if limit is not None:
        policy = policy.model_copy(update={
            "limits": policy.limits.model_copy(update={"max_output_bytes": limit})})
    cap = policy.limits.max_output_bytes
    redirect = "" if stream == "stdout" else " >&2"
    result = sandbox.run(["sh", "-c", f"head -c {FLOOD} /dev/zero{redirect}"], policy,
                         cwd=str(workspace), timeout=60)
    assert result.exit_code == 0
    assert result.truncated
    kept = getattr(result, stream)
    marker_room = 100  # "[... N bytes of output truncated ...]"
    assert cap <= len(kept) <= cap + marker_room
    assert b"truncated" in kept


# -- 17. never unsandboxed ------------------------------------------------------------------

FAKE_BWRAP = """#!/bin/sh
echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2
exit 1
"""


def _tools_without_bwrap(tmp_path: Path, fake_bwrap: bool) -> dict[str, str]:
    """An environment whose PATH holds every tool of the machine except the
    real bwrap (so the command itself, sh, would be found if anything fell
    back to running it), optionally with a bwrap that cannot work here."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for directory in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin",
                      "/bin"):
        with contextlib.suppress(OSError):
            for entry in os.scandir(directory):
                link = tools / entry.name
                if entry.name != "bwrap" and not link.exists() and not link.is_symlink():
                    link.symlink_to(entry.path)
    if fake_bwrap:
        fake = tools / "bwrap"
        fake.write_text(FAKE_BWRAP)
        fake.chmod(0o755)
    require(shutil.which("sh", path=str(tools)) is not None, "sh is on the reduced PATH")
    return {**os.environ, "PATH": str(tools)}


@pytest.mark.parametrize("bwrap", ["missing", "cannot create namespaces"])
def test_shellgate_never_falls_back_to_running_unsandboxed(
    workspace: Path, tmp_path: Path, bwrap: str
) -> None:
    """Attack: make the sandbox unavailable (no bwrap on PATH, or a bwrap
    that cannot work here) and hope the command runs anyway. It must not
    run: exit 125, and the last line on stderr says why."""
    env = _tools_without_bwrap(tmp_path, fake_bwrap=bwrap != "missing")
    proc = sg(workspace, "sh", "-c", "echo ran > ran.txt; echo ran", env=env)
    err = proc.stderr.decode()
    assert proc.returncode == 125, output(proc)
    assert not (workspace / "ran.txt").exists()
    assert proc.stdout == b""
    last = err.strip().splitlines()[-1]
    assert last.startswith("shellgate: sandbox unavailable:"), err
    assert "bwrap" in last.lower() or "bubblewrap" in last.lower(), err
    if bwrap == "missing":
        assert err.count("\n") == 1, err


def test_a_bwrap_that_cannot_start_is_reported_in_one_line(
    workspace: Path, tmp_path: Path
) -> None:
    """A sandbox that cannot start says so in exactly one line (exit 125)."""
    env = _tools_without_bwrap(tmp_path, fake_bwrap=True)
    proc = sg(workspace, "true", env=env)
    require(proc.returncode == 125, "the sandbox did not start", proc)
    assert proc.stderr.decode().count("\n") == 1, proc.stderr


# -- 18. the command's own descriptors ----------------------------------------------

STDIN_ATTACKS = {
    "redirect into /proc/self/fd/0": "echo pwned > /proc/self/fd/0",
    "append through /proc/self/fd/0": "echo pwned >> /proc/self/fd/0",
    "reopen read-write as fd 3": "exec 3<>/proc/self/fd/0 && echo pwned >&3",
    "python os.open O_RDWR": PY + " -c 'import os; fd = os.open(\"/proc/self/fd/0\", os.O_RDWR);"
                                  " os.write(fd, b\"pwned\")'",
    "truncate through the link": "truncate -s 0 /proc/self/fd/0",
    "via /dev/stdin": "echo pwned > /dev/stdin",
}


@pytest.mark.parametrize("attack", list(STDIN_ATTACKS))
def test_a_file_given_on_stdin_cannot_be_rewritten(
    workspace: Path, outside: Path, attack: str
) -> None:
    """Attack: `shellgate run -- sh -c 'echo pwned > /proc/self/fd/0' < notes.txt`
    reopened the inherited descriptor of the host file read-write and
    rewrote it. The command reads a pipe now: the bytes, and no path."""
    notes = outside / "notes.txt"
    notes.write_text("original notes\n")
    before = notes.stat()
    script = f"cat > control.txt; {STDIN_ATTACKS[attack]}; true"
    with notes.open("rb") as handle:
        proc = subprocess.run(
            [SHELLGATE, "run", "--cwd", str(workspace), "--", "sh", "-c", script],
            stdin=handle, capture_output=True, timeout=RUN_TIMEOUT, check=False)
    require(consume_control(workspace, proc) == "original notes\n",
            "the command read the file through stdin", proc)
    assert notes.read_text() == "original notes\n"
    assert notes.stat().st_mtime_ns == before.st_mtime_ns


def test_stdin_bytes_larger_than_a_pipe_do_not_deadlock_against_output(
    workspace: Path,
) -> None:
    """A command that writes a lot before it reads its stdin: the feeder
    and the output pump run side by side (no deadlock until the timeout)."""
    data = os.urandom(1 << 20)
    result = sandbox.run(["sh", "-c", "head -c 2000000 /dev/zero; wc -c"], sandbox.load_profile(),
                         cwd=str(workspace), stdin=data, timeout=30)
    assert not result.timed_out
    assert result.stdout.endswith(f"{len(data)}\n".encode())
