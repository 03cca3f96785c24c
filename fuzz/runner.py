"""`shellgate fuzz`'s engine: worker processes (fuzz/worker.py) running the
properties under hypothesis, for a time or a number of examples, sharing an
example database; the parent gathers what they say, saves each finding at
once (fuzz/findings.py) and reports.

Workers are processes (the parser holds the GIL), forked after the parent
has learnt the installed tools' options; the database is hypothesis's, keyed
by property name, so that a fleet of machines shares what each has found.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import queue as queue_module
import secrets
import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from values import field, valueclass

from . import findings as store
from .config import FuzzConfig, chosen_properties
from .coverage import PRODUCTIONS
from .database import open_database
from .errors import FuzzError
from .mutate import attack_seeds, benign_seeds
from .options import installed_options
from .properties import Context
from .worker import GRACE, MODES, worker_main


@valueclass(frozen=False, slots=False)
class Snapshot:
    """The run so far (what the live display shows)."""

    seconds: float | None
    elapsed: float = 0.0
    examples: int = 0
    oracle_runs: int = 0
    workers: int = 0
    alive: int = 0
    findings: list[dict[str, Any]] = field(default_factory=list)
    per_property: Counter[str] = field(default_factory=Counter)
    coverage: Counter[str] = field(default_factory=Counter)
    productions: int = 0
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False


@valueclass
class FuzzReport:
    examples: int
    failures: tuple[dict[str, Any], ...]
    oracle_runs: int
    seconds: float
    seed: int
    workers: int
    mode: str
    per_property: dict[str, int]
    coverage: dict[str, int]
    productions: int
    findings_file: str
    errors: tuple[str, ...] = ()
    #: stopped early by Ctrl-C or SIGTERM (what ran until then is reported)
    interrupted: bool = False

    def summary(self) -> dict[str, Any]:
        """The one JSON object `shellgate fuzz --json` prints last."""
        return {"examples": self.examples, "failures": len(self.failures),
                "oracle_runs": self.oracle_runs, "seconds": round(self.seconds, 1),
                "seed": self.seed, "workers": self.workers, "mode": self.mode,
                "properties": self.per_property,
                "coverage": {"drawn": len(self.coverage), "productions": self.productions},
                "findings_file": self.findings_file,
                "findings": [{"property": f["property"], "command": _cut(f["command"]),
                              "verdict": f["verdict"], "trace": _cut(f["trace"])}
                             for f in self.failures],
                "errors": list(self.errors), "interrupted": self.interrupted}


def _cut(text: str, most: int = 300) -> str:
    """A summary's excerpt (the findings file keeps the whole text)."""
    return text if len(text) <= most else f"{text[:most]}… ({len(text)} characters)"


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


# -- the parent -------------------------------------------------------------------------------


def _prerequisites(config: FuzzConfig) -> None:
    chosen_properties(config)
    if config.mode not in MODES:
        raise FuzzError(f"no mode {config.mode!r} (ci or deep)")
    if config.oracle:
        missing = [t for t in ("bwrap", "strace") if shutil.which(t) is None]
        if missing:
            raise FuzzError(f"--oracle needs {' and '.join(missing)} installed "
                            f"(apt-get install {' '.join(missing).replace('bwrap', 'bubblewrap')})")
    open_database(config.database)  # reachable, writable: said now, in one line
    store.check_writable(config.findings or store.default_path())


def run_fuzz(config: FuzzConfig,
             observer: Callable[[Snapshot], None] | None = None) -> FuzzReport:
    """Run the fuzzer; ``observer`` sees a :class:`Snapshot` a few times a second."""
    _prerequisites(config)
    run_seed = config.seed if config.seed is not None else secrets.randbits(32)
    workers = config.workers or os.cpu_count() or 1
    path = config.findings or store.default_path()
    tools = {name: tool for name, tool in installed_options().items()
             if not config.programs or name[0] in config.programs
             or " ".join(name) in config.programs}
    if not tools:
        raise FuzzError(f"none of {', '.join(config.programs)} is an installed program the "
                        "analyzer has an option table for")
    attacks, benign = attack_seeds(), benign_seeds()
    for prop in chosen_properties(config):  # declares the grammar's productions
        prop.examples(Context(config.mode, tools, attacks, benign))
    snap = Snapshot(config.seconds, workers=workers, alive=workers, productions=len(PRODUCTIONS))
    context = multiprocessing.get_context("fork")
    out: multiprocessing.Queue[tuple[Any, ...]] = context.Queue()
    stop = context.Event()
    procs = [context.Process(target=worker_main, daemon=True,
                             args=(config, i, workers, run_seed, tools, attacks, benign, out,
                                   stop))
             for i in range(workers)]
    start = time.monotonic()
    for proc in procs:
        proc.start()
    stats: dict[int, tuple[int, int, dict[str, int], dict[str, int]]] = {}
    limit = (config.seconds or math.inf) + GRACE[config.mode] + 60
    # SIGTERM ends the run as Ctrl-C does: workers stopped, findings kept
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        while snap.alive and time.monotonic() - start < limit:
            try:
                message = out.get(timeout=0.25)
            except queue_module.Empty:
                message = None
            if message is not None:
                _take(message, snap, stats, path)
                if config.first and snap.findings:
                    stop.set()
            snap.elapsed = time.monotonic() - start
            _sum(snap, stats)
            if observer is not None:
                observer(snap)
    except KeyboardInterrupt:
        snap.interrupted = True
        stop.set()
        for proc in procs:
            proc.terminate()  # a worker stops as on Ctrl-C: its oracle cleaned up
    finally:
        # a second Ctrl-C must not cut the wind-down short: findings in flight
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
        _wind_down(procs, out, snap, stats, path)
        signal.signal(signal.SIGINT, interrupt)
        signal.signal(signal.SIGTERM, previous)
        _sum(snap, stats)
    return FuzzReport(snap.examples, tuple(snap.findings), snap.oracle_runs,
                      time.monotonic() - start, run_seed, workers, config.mode,
                      dict(snap.per_property), dict(snap.coverage), len(PRODUCTIONS), str(path),
                      tuple(snap.errors), snap.interrupted)


def _wind_down(procs: list[Any], out: multiprocessing.Queue[tuple[Any, ...]],
               snap: Snapshot, stats: dict[int, tuple[int, int, dict[str, int], dict[str, int]]],
               path: Path) -> None:
    """Read what the workers still say while they exit (a worker whose last
    messages nobody reads never exits), then kill what is left."""
    deadline = time.monotonic() + 15
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        with contextlib.suppress(queue_module.Empty):
            _take(out.get(timeout=0.1), snap, stats, path)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
        proc.join()
    while True:
        try:
            _take(out.get_nowait(), snap, stats, path)
        except queue_module.Empty:
            break


def _take(message: tuple[Any, ...], snap: Snapshot,
          stats: dict[int, tuple[int, int, dict[str, int], dict[str, int]]], path: Path) -> None:
    kind, index = message[0], message[1]
    if kind == "stats":
        stats[index] = message[2], message[3], message[4], message[5]
    elif kind == "finding":
        record = message[2]
        key = (record["property"], record["command"])
        if all((f["property"], f["command"]) != key for f in snap.findings):
            snap.findings.append(record)
            try:
                store.save(path, record)
            except OSError as exc:  # the finding is still reported
                snap.errors.append(f"cannot save a finding to {path}: {exc.strerror or exc}")
    elif kind == "error":
        snap.errors.append(message[2])
    elif kind == "done":
        snap.alive -= 1


def _sum(snap: Snapshot,
         stats: dict[int, tuple[int, int, dict[str, int], dict[str, int]]]) -> None:
    snap.examples = sum(s[0] for s in stats.values())
    snap.oracle_runs = sum(s[1] for s in stats.values())
    snap.per_property = Counter()
    snap.coverage = Counter()
    for s in stats.values():
        snap.per_property.update(s[2])
        snap.coverage.update(s[3])
