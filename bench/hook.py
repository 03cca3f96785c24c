"""`shellgate hook`'s cost per call, as Claude Code pays it: a new process
for every tool call. Prints one JSON object (milliseconds, medians).

  python_pass     a bare `python -c pass` (the floor of any Python hook)
  inprocess       `shellgate hook` answering a read-only Bash call
                  (`git log --oneline -5`) with no daemon: the guard and
                  its judging child (today's only path)
  inprocess_read  the same for a Read of a file in the project
  fallback_guard  the guard alone answering bad input (no heavy import)
  daemon          a warm daemon answering over a socket: "absent" (not built)
  bashgate        bashgate's hook on the same call: "absent" unless installed
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
        env = {**os.environ, "SHELLGATE_AUDIT_LOG": str(Path(tmp) / "audit")}
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
            "daemon": "absent",
        }
        bashgate = shutil.which("bashgate")
        report["bashgate"] = (_median([bashgate, "hook"], bash, n, env) if bashgate
                              else "absent")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
