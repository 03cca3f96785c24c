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
  check              `shellgate check 'git log --oneline -5'`
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


def _median(argv: list[str], n: int, env: dict[str, str], cwd: str,
            stdin: bytes = b"") -> float | str:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        done = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd,
                              check=False, timeout=120)
        times.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0:
            return f"failed: {done.stderr.decode(errors='replace').strip()[:200]}"
    return round(statistics.median(times), 1)


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
        report["python_pass"] = _median([sys.executable, "-c", "pass"], n, env, cwd)
        warm_run = {**env, "SHELLGATE_RUN_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
        subprocess.run([shellgate, "run", "--", "true"], capture_output=True, env=warm_run,
                       cwd=cwd, check=False, timeout=120)
        time.sleep(3.0)  # the daemon's start and its warm-up run
        report["run_true"] = _median([shellgate, "run", "--", "true"], n, warm_run, cwd)
        report["run_inprocess"] = _median([shellgate, "run", "--", "true"], n,
                                          {**env, "SHELLGATE_RUN_DAEMON": "0"}, cwd)
        codex = _codex()
        report["codex_sandbox"] = (_median([codex, "sandbox", "--", "true"], n, env, cwd)
                                   if codex else "absent")
        srt = shutil.which("srt")
        report["srt"] = _median([srt, "-c", "true"], n, env, cwd) if srt else "absent"
        report["check"] = _median([shellgate, "check", "git log --oneline -5"], n, env, cwd)
        call = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                           "tool_input": {"command": "git log --oneline -5"}, "cwd": cwd,
                           "session_id": "bench", "tool_use_id": "toolu_bench"}).encode()
        report["hook_inprocess"] = _median([shellgate, "hook"], n,
                                           {**env, "SHELLGATE_HOOK_DAEMON": "0"}, cwd, call)
        warm = {**env, "SHELLGATE_HOOK_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
        subprocess.run([shellgate, "hook"], input=call, capture_output=True, env=warm,
                       check=False, timeout=120)
        time.sleep(3.0)  # the daemon's start and its spares' warm-up
        report["hook_daemon"] = _median([shellgate, "hook"], n, warm, cwd, call)
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
