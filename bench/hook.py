"""`shellgate hook`'s cost per call, as Claude Code pays it: a new process
for every tool call. Prints one JSON object (milliseconds, medians).

  python_pass     a bare `python -c pass` (the floor of any Python hook)
  inprocess       `shellgate hook` answering a read-only Bash call
                  (`git log --oneline -5`) with no daemon: the guard and
                  its judging child (today's only path)
  inprocess_read  the same for a Read of a file in the project
  fallback_guard  the guard alone answering bad input (no heavy import)
  daemon          `shellgate hook` on the same Bash call with its warm daemon
                  (XDG_RUNTIME_DIR set; the daemon started and warmed first)
  daemon_read     the same for the Read
  bashgate        bashgate's hook on the same call: "absent" unless installed
                  (`pip install bashgate` in any venv, on PATH)
  daemon_vs_bashgate  the ratio the issue's target is about (<= 1.5)
Run: .venv/bin/python bench/hook.py [--n 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _median(argv: list[str], stdin: bytes, n: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False,
                       timeout=120)
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=30)
    n = parser.parse_args().n
    shellgate = str(Path(sys.executable).with_name("shellgate"))
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "README.md").write_text("hello\n")
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        env = {**os.environ, "SHELLGATE_AUDIT_LOG": str(Path(tmp) / "audit"),
               "SHELLGATE_HOOK_DAEMON": "0"}
        # as a user's machine runs it: with the bytecode cache
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def call(tool: str, tool_input: dict[str, str]) -> bytes:
            return json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool,
                               "tool_input": tool_input, "cwd": str(project),
                               "session_id": "bench", "tool_use_id": "toolu_bench"}).encode()

        bash = call("Bash", {"command": "git log --oneline -5"})
        report: dict[str, object] = {
            "n": n,
            "python_pass": _median([sys.executable, "-c", "pass"], b"", n, env),
            "inprocess": _median([shellgate, "hook"], bash, n, env),
            "inprocess_read": _median([shellgate, "hook"],
                                      call("Read", {"file_path": str(project / "README.md")}),
                                      n, env),
            "fallback_guard": _median([shellgate, "hook"], b"{not json", n, env),
        }
        runtime = Path(tmp) / "runtime"
        runtime.mkdir(mode=0o700)
        warm = {**env, "SHELLGATE_HOOK_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
        read = call("Read", {"file_path": str(project / "README.md")})
        if _start_daemon([shellgate, "hook"], bash, warm, runtime):
            report["daemon"] = _median([shellgate, "hook"], bash, n, warm)
            report["daemon_read"] = _median([shellgate, "hook"], read, n, warm)
            _stop_daemon(runtime)
        else:
            report["daemon"] = "did not start"
        bashgate = shutil.which("bashgate")
        report["bashgate"] = (_median([bashgate, "hook"], bash, n, env) if bashgate
                              else "absent")
    if isinstance(report.get("daemon"), float) and isinstance(report["bashgate"], float):
        report["daemon_vs_bashgate"] = round(report["daemon"] / report["bashgate"], 2)
    print(json.dumps(report))


def _start_daemon(argv: list[str], stdin: bytes, env: dict[str, str], runtime: Path) -> bool:
    """Make the first call (it starts the daemon) and wait until the
    daemon listens and its spares are warm."""
    subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False, timeout=120)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if list((runtime / "shellgate").glob("hook-*.sock")):
            time.sleep(2.0)  # the spares' own warm-up
            return True
        time.sleep(0.1)
    return False


def _stop_daemon(runtime: Path) -> None:
    """The daemon leaves when its socket goes."""
    for sock in (runtime / "shellgate").glob("hook-*.sock"):
        sock.unlink()
    time.sleep(1.5)


if __name__ == "__main__":
    main()
