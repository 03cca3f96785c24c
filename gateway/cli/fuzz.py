"""``shellgate fuzz``: grammar fuzzing of the bash analyzer (the fuzz package).

Exit status: 0 when every property held, 1 when anything failed (the
findings are saved and listed), 2 when the run cannot start (one line),
130 when stopped by Ctrl-C or SIGTERM with nothing found (the summary of
what ran is printed all the same).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from fuzz import FuzzConfig, FuzzError, run_fuzz
from fuzz.display import LiveDisplay, summary_table

from ..errors import UsageError


def main(args: argparse.Namespace) -> int:
    if args.seconds is None and args.examples is None:
        args.seconds = 60.0
    for name, value, most in (("--seconds", args.seconds, 10 * 365 * 86400),
                              ("--examples", args.examples, 10**12),
                              ("--workers", args.workers, 1024)):
        if value is not None and not 0 <= value <= most:  # a NaN fails both
            raise UsageError(f"{name} must be between 0 and {most}")
    config = FuzzConfig(seconds=args.seconds, examples=args.examples, seed=args.seed,
                        oracle=args.oracle, workers=args.workers or 0, mode=args.mode,
                        database=args.database,
                        findings=Path(args.findings) if args.findings else None,
                        properties=tuple(args.property), programs=tuple(args.program),
                        first=args.first)
    try:
        with LiveDisplay(Console(stderr=True)) as live:
            report = run_fuzz(config, live.update)
    except FuzzError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        # stopped before any worker started: nothing ran, and it says so
        if args.json:
            print(json.dumps({"examples": 0, "failures": 0, "oracle_runs": 0, "seconds": 0,
                              "seed": args.seed, "workers": 0, "interrupted": True}))
        return 130
    if args.json:
        print(json.dumps(report.summary()))
    else:
        Console().print(summary_table(report))
    if report.failures or report.errors:
        return 1
    return 130 if report.interrupted else 0
