"""The cold path: how long a fresh `shellgate run`, `check` and `hook`
process takes, against the native tools doing the same work. Prints one
JSON object (milliseconds, medians of ``--n`` process starts, all in one
run, as a user's machine runs them: with the bytecode cache).

  python_pass        a bare `python -c pass` of the same interpreter
  run_true           `shellgate run -- true` (bubblewrap + seccomp), as a user
                     gets it: through its warm daemon (started by the first
                     call; gateway/cli/run_client.py)
  run_inprocess      the same, run in its own process (SHELLGATE_RUN_DAEMON=0)
  codex_sandbox      `codex sandbox -- true` (OpenAI's Codex CLI: its native
                     binary if found under `codex`'s npm package, else the
                     `codex` on PATH; "absent" without one — `npm i
                     @openai/codex`, then PATH or CODEX_BIN)
  srt                `srt -c true` (Anthropic's sandbox-runtime; "absent"
                     unless on PATH)
  check              `shellgate check 'git log --oneline -5'`, as a user gets it:
                     through its warm daemon (gateway/cli/check_daemon.py)
  check_inprocess    the same, checked in its own process
                     (SHELLGATE_CHECK_DAEMON=0)
  hook_daemon        `shellgate hook` through its warm daemon
  hook_inprocess     `shellgate hook` judging in its own process
  jsonl              `shellgate check --jsonl` commands/s (the median of three
                     streams) against tree-sitter's bare parse of the same
                     commands (the median of seven passes): bench/analyzer.py's
                     mix of 10,000 (the corpus and variations of its benign
                     commands, 2,116 distinct), the issue's measure; and its
                     first 2,000 (1,195 distinct, most of them the corpus's
                     longer commands), where fewer lines repeat
and the issue's ratios: run_true / codex_sandbox (<= 1.25), check /
python_pass (<= 2.5), parse / jsonl on the 10,000 (<= 25; the 2,000's
ratio is shown beside it, without a target).
Run: .venv/bin/python bench/cold.py [--n 20] [--jsonl-n 10000]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

import analyzer

ROOT = Path(__file__).resolve().parent.parent


#: the pause after each process start (see _medians)
PAUSE_S = 0.1
#: one command to time: its argv, environment, working directory and stdin
Command = tuple[list[str], dict[str, str], str, bytes]


def _medians(commands: dict[str, Command], n: int) -> dict[str, float | str]:
    """Each command's median over ``n`` process starts, the commands taken
    in turn (a, b, c, a, b, c, ...): this machine's speed drifts over a
    run, and a ratio of two figures taken one after the other measured the
    drift as much as the commands. A pause follows each start: what one
    leaves working (a warm daemon forking and warming its next spare) must
    not slow the next command, someone else's tool."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    failed: dict[str, str] = {}
    for _ in range(n):
        for name, (argv, env, cwd, stdin) in commands.items():
            if name in failed:
                continue
            started = time.perf_counter()
            done = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd,
                                  check=False, timeout=120)
            times[name].append((time.perf_counter() - started) * 1000)
            if done.returncode != 0:
                failed[name] = f"failed: {done.stderr.decode(errors='replace').strip()[:200]}"
            time.sleep(PAUSE_S)
    return {name: failed.get(name) or round(statistics.median(times[name]), 1)
            for name in commands}


def _codex() -> str | None:
    """The native codex binary (the npm package's `codex` is a Node script
    that starts it: Node's own start is not the sandbox's cost)."""
    named = os.environ.get("CODEX_BIN") or shutil.which("codex")
    if named is None:
        return None
    real = Path(named).resolve()
    for package in (real.parent, *real.parents):
        found = sorted(package.glob("node_modules/@openai/codex-linux-*/vendor/*/bin/codex"))
        found += sorted(package.glob("../codex-linux-*/vendor/*/bin/codex"))
        if found:
            return str(found[0])
        if package.name == "node_modules":
            break
    return str(real)


def _jsonl_vs_parse(size: int) -> dict[str, float | str]:
    """`check --jsonl`'s rate (the median of three streams: one stream's
    rate moves by a tenth between runs here) against the bare parse's."""
    commands = analyzer.command_mix(size)
    jsonl = statistics.median(analyzer.bench_jsonl(commands)["commands_per_s"]
                              for _ in range(3))
    parse = analyzer.bench_parse_only(commands)["commands_per_s"]
    return {"commands": size, "distinct": len(set(commands)),
            "jsonl_commands_per_s": jsonl, "parse_commands_per_s": parse,
            "ratio": _ratio(float(parse), float(jsonl))}


def _ratio(a: object, b: object) -> float | str:
    if isinstance(a, float) and isinstance(b, float) and b > 0:
        return round(a / b, 2)
    return "n/a"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--jsonl-n", type=int, default=10_000)
    options = parser.parse_args()
    n = options.n
    shellgate = str(Path(sys.executable).with_name("shellgate"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        env["SHELLGATE_AUDIT_LOG"] = str(Path(tmp) / "audit")
        cwd = str(project)
        report: dict[str, object] = {"n": n}
        runtime = Path(tmp) / "rt"
        runtime.mkdir(mode=0o700)
        warm_run = {**env, "SHELLGATE_RUN_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
        call = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                           "tool_input": {"command": "git log --oneline -5"}, "cwd": cwd,
                           "session_id": "bench", "tool_use_id": "toolu_bench"}).encode()
        warm_hook = {**env, "SHELLGATE_HOOK_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
        warm_check = {**env, "SHELLGATE_CHECK_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
        check = [shellgate, "check", "git log --oneline -5"]
        # the daemons' first calls start them; then their start and warm-up
        for argv, started, stdin in (([shellgate, "run", "--", "true"], warm_run, b""),
                                     ([shellgate, "hook"], warm_hook, call),
                                     (check, warm_check, b"")):
            subprocess.run(argv, input=stdin, capture_output=True, env=started, cwd=cwd,
                           check=False, timeout=120)
        time.sleep(3.0)
        codex = _codex()
        srt = shutil.which("srt")
        commands: dict[str, Command] = {
            "python_pass": ([sys.executable, "-c", "pass"], env, cwd, b""),
            "run_true": ([shellgate, "run", "--", "true"], warm_run, cwd, b""),
            "codex_sandbox": ([codex or "", "sandbox", "--", "true"], env, cwd, b""),
            "check": (check, warm_check, cwd, b""),
        }
        if codex is None:
            del commands["codex_sandbox"]
        report.update(_medians(commands, n))
        report.setdefault("codex_sandbox", "absent")
        report.update(_medians({
            "check_inprocess": (check, {**env, "SHELLGATE_CHECK_DAEMON": "0"}, cwd, b""),
            "run_inprocess": ([shellgate, "run", "--", "true"],
                              {**env, "SHELLGATE_RUN_DAEMON": "0"}, cwd, b""),
            **({"srt": ([srt, "-c", "true"], env, cwd, b"")} if srt else {}),
            "hook_inprocess": ([shellgate, "hook"], {**env, "SHELLGATE_HOOK_DAEMON": "0"},
                               cwd, call),
            "hook_daemon": ([shellgate, "hook"], warm_hook, cwd, call),
        }, n))
        report.setdefault("srt", "absent")
        for sock in (runtime / "shellgate").glob("*.sock"):
            sock.unlink()  # each daemon leaves with its socket
        time.sleep(1.5)
    jsonl = {size: _jsonl_vs_parse(size) for size in (options.jsonl_n, 2000)}
    report["jsonl"] = {str(size): figures for size, figures in jsonl.items()}
    report["ratios"] = {
        "run_vs_codex": _ratio(report["run_true"], report["codex_sandbox"]),
        "check_vs_python": _ratio(report["check"], report["python_pass"]),
        "parse_vs_jsonl": jsonl[options.jsonl_n]["ratio"],
        "parse_vs_jsonl_2000": jsonl[2000]["ratio"],
    }
    report["targets"] = {"run_vs_codex": 1.25, "check_vs_python": 2.5, "parse_vs_jsonl": 25}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
