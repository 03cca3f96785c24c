"""The fuzzer's throughput, and the execution oracle's cost per command.

Prints one JSON object:
  properties   examples/s of each property in one process (ci mode, fixed seed)
  oracle       ms per command observed alone and in batches of 24 (the sweep's way)
  cli          the `shellgate fuzz --seconds N --oracle --json` summary (issue 12's
               bar: >= 1,000 examples and >= 100 oracle runs in 30 s, nothing found)
Run: .venv/bin/python bench/fuzz.py [--seconds 30] [--workers 0]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from fuzz import PROPERTIES, FuzzConfig, Oracle, make_context
from fuzz.mutate import attack_seeds, benign_seeds
from fuzz.options import installed_options

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ["ls -la", "cat README.md", "git log --oneline", "wc -l notes.txt", "sort notes.txt",
            "head -n 3 src/main.py", "grep -n TODO src/main.py", "git status"]


def property_rates(examples: int = 150) -> dict[str, float]:
    ctx = make_context(FuzzConfig(), installed_options(), attack_seeds(), benign_seeds())
    out = {}
    for name, prop in PROPERTIES.items():
        if prop.oracle:
            continue
        count: list[int] = []

        @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate])
        @given(prop.examples(ctx))
        def run(example: dict[str, Any], p: Any = prop, seen: list[int] = count) -> None:
            seen.append(1)
            p.check(ctx, example)

        start = time.perf_counter()
        run()
        out[name] = round(len(count) / (time.perf_counter() - start), 1)
    return out


def oracle_costs(rounds: int = 3) -> dict[str, float]:
    oracle = Oracle(ROOT / "fuzz" / "fixture")
    items = [(c, (c.split()[0],)) for c in COMMANDS * 3]
    try:
        oracle.observe("true")
        start = time.perf_counter()
        for _ in range(rounds):
            for command, own in items[:8]:
                oracle.observe(command, own)
        single = (time.perf_counter() - start) / (rounds * 8)
        start = time.perf_counter()
        for _ in range(rounds):
            oracle.observe_batch(items)
        batch = (time.perf_counter() - start) / (rounds * len(items))
    finally:
        oracle.close()
    return {"single_ms": round(single * 1000, 1), "batch_ms": round(batch * 1000, 1)}


def cli_run(seconds: float, workers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [str(Path(sys.executable).with_name("shellgate")), "fuzz", "--seconds", str(seconds),
             "--oracle", "--json", "--workers", str(workers), "--findings", f"{tmp}/f.jsonl",
             "--database", f"{tmp}/db"],
            capture_output=True, text=True, check=False, timeout=seconds + 300)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    keep = ("examples", "failures", "oracle_runs", "seconds", "seed", "workers")
    return {k: summary[k] for k in keep} | {"exit": proc.returncode}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(json.dumps({"properties": property_rates(), "oracle": oracle_costs(),
                      "cli": cli_run(args.seconds, args.workers)}))


if __name__ == "__main__":
    main()
