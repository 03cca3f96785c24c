"""`shellgate fuzz`'s engine: worker processes running the properties under
hypothesis, for a time or a number of examples, sharing an example database.

Each worker runs *rounds*: one property, a few dozen examples, a seed drawn
from the run's seed, the worker's index and the round's number (so a round
is reproducible). Properties share a worker's time evenly; with the oracle,
half of it goes to the oracle — first a sweep of every installed option
alone (fuzz/sweep.py), then hypothesis's combinations. A failing example is
shrunk by hypothesis and sent to the parent, which saves it at once
(fuzz/findings.py); the worker then treats that exact command as known, so
later rounds look for other failures instead of finding it again.

Workers are processes (the parser holds the GIL), forked after the parent
has learnt the installed tools' options; the database is hypothesis's, keyed
by property name so that a fleet of machines shares what each has found.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import multiprocessing
import os
import queue as queue_module
import random
import secrets
import shutil
import signal
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from . import findings as store
from .coverage import COVERAGE, PRODUCTIONS
from .database import open_database
from .errors import FuzzError
from .mutate import attack_seeds, benign_seeds
from .options import installed_options
from .oracle import Oracle
from .properties import PROPERTIES, Context, Failure, Property, observe_many
from .sweep import option_sweep

_FIXTURE = Path(__file__).with_name("fixture")
#: examples per hypothesis round, by mode (the oracle's cost ~0.1 s each)
_ROUND = {"ci": 60, "deep": 250}
_ORACLE_ROUND = {"ci": 8, "deep": 20}
#: how long a failure found near the end may still be shrunk
_GRACE = {"ci": 20.0, "deep": 120.0}
#: how long one round may generate examples
_ROUND_SECONDS = {"ci": 5.0, "deep": 20.0}
#: how long one failure may be shrunk
_SHRINK = {"ci": 15.0, "deep": 60.0}
_SWEEP_CHUNK = 24


@dataclass(frozen=True, slots=True)
class FuzzConfig:
    seconds: float | None = 60.0
    examples: int | None = None
    seed: int | None = None
    oracle: bool = False
    workers: int = 0
    mode: str = "ci"
    database: str | None = None
    findings: Path | None = None
    properties: tuple[str, ...] = ()
    #: only these programs' options (``sort``, ``git log``); empty: all
    programs: tuple[str, ...] = ()
    #: stop at the first finding
    first: bool = False


@dataclass
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


@dataclass(frozen=True, slots=True)
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


class _PropertyFailed(AssertionError):
    """Raised inside a hypothesis round so that it shrinks the example."""


class _OutOfTime(BaseException):
    """Raised inside a round to end it now: hypothesis passes anything but
    an ``Exception`` straight through, generation and shrinking alike."""


def chosen_properties(config: FuzzConfig) -> list[Property]:
    names = config.properties or tuple(PROPERTIES)
    unknown = [n for n in names if n not in PROPERTIES]
    if unknown:
        raise FuzzError(f"no property {unknown[0]!r} (there are: {', '.join(PROPERTIES)})")
    chosen = [PROPERTIES[n] for n in names if config.oracle or not PROPERTIES[n].oracle]
    if not chosen:
        raise FuzzError("the oracle property needs --oracle")
    return chosen


# -- a worker ---------------------------------------------------------------------------------


class _Worker:
    def __init__(self, config: FuzzConfig, index: int, workers: int, run_seed: int,
                 ctx: Context, db: ExampleDatabase | None,
                 send: Callable[[tuple[Any, ...]], None], stop: Any = None) -> None:
        self.config, self.index, self.workers, self.run_seed = config, index, workers, run_seed
        self.ctx, self.db, self.send, self.stop = ctx, db, send, stop
        now = time.monotonic()
        self.start = now
        self.end = now + config.seconds if config.seconds is not None else math.inf
        self.hard_end = self.end + _GRACE[config.mode]
        share = config.examples / workers if config.examples is not None else None
        self.budget = math.ceil(share) if share is not None else None
        self.examples = 0
        self.per_property: Counter[str] = Counter()
        self.known: set[tuple[str, str]] = set()
        self.last_sent = 0.0
        self.strategies: dict[str, SearchStrategy[dict[str, Any]]] = {}

    def done(self) -> bool:
        return time.monotonic() > self.end or bool(_signalled) or (
            self.budget is not None and self.examples >= self.budget) or (
            self.stop is not None and self.stop.is_set())

    def run(self, props: list[Property]) -> None:
        oracle = [p for p in props if p.oracle]
        fast = [p for p in props if not p.oracle]
        share = {p.name: (0.5 if fast else 1.0) if p.oracle else
                 (0.5 if oracle else 1.0) / len(fast) for p in props}
        spent = dict.fromkeys(share, 0.0)
        # built once: a property's generator is a big tree of strategies
        self.strategies = {p.name: p.examples(self.ctx) for p in props}
        sweep = (option_sweep(self.ctx.tools, self.run_seed)[self.index::self.workers]
                 if oracle else [])
        number = 0
        while not self.done():
            prop = min(props, key=lambda p: spent[p.name] / share[p.name])
            start = time.monotonic()
            # the sweep first: every option alone, before combinations
            if prop.oracle and sweep:
                self.sweep(prop, sweep[:_SWEEP_CHUNK])
                del sweep[:_SWEEP_CHUNK]
            else:
                self.round(prop, number)
            spent[prop.name] += time.monotonic() - start
            number += 1
        self.report(force=True)

    def report(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last_sent > 0.5:
            self.last_sent = now
            self.send(("stats", self.index, self.examples, self.ctx.oracle_runs,
                       dict(self.per_property), dict(COVERAGE)))

    def found(self, failure: Failure, round_seed: int) -> None:
        self.known.add((failure.property, failure.command))
        record = store.to_record(failure, seed=self.run_seed, round_seed=round_seed,
                                 mode=self.config.mode)
        record["after_seconds"] = round(time.monotonic() - self.start, 1)
        self.send(("finding", self.index, record))

    def sweep(self, prop: Property, commands: list[str]) -> None:
        self.examples += len(commands)
        self.per_property[prop.name] += len(commands)
        for cmd, seen in observe_many(self.ctx, commands):
            if seen:
                self.found(Failure(prop.name, {"command": cmd}, cmd, "allow",
                                   "allowed, but: " + "; ".join(seen)), 0)
        self.report()

    def round(self, prop: Property, number: int) -> None:
        # reproducible from the run's seed (a seed, not a secret)
        round_seed = random.Random(  # noqa: S311
            f"{self.run_seed}:{self.index}:{number}").getrandbits(63)
        failures: list[Failure] = []
        shrink_until = [math.inf]
        # a round ends on time too, so that one property's slow examples
        # never starve the others of their share
        round_end = min(self.end, time.monotonic() + _ROUND_SECONDS[self.config.mode])

        def test(example: dict[str, Any]) -> None:
            # past the end nothing more is tried; a failure is shrunk for a
            # bounded time (the oracle's examples cost a sandbox run each)
            now = time.monotonic()
            if now > (shrink_until[0] if failures else round_end) or (
                    not failures and self.done()):
                raise _OutOfTime
            self.examples += 1
            self.per_property[prop.name] += 1
            self.report()
            failure = _check(prop, self.ctx, example)
            if failure is None or (prop.name, failure.command) in self.known:
                return
            if not failures:
                shrink_until[0] = min(now + _SHRINK[self.config.mode], self.hard_end)
            failures.append(failure)
            raise _PropertyFailed(failure.trace)

        size = (_ORACLE_ROUND if prop.oracle else _ROUND)[self.config.mode]
        wrapped = settings(
            database=self.db, max_examples=size, deadline=None, derandomize=False,
            suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
            phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
            verbosity=Verbosity.quiet, print_blob=False,
        )(hypothesis_seed(round_seed)(given(self.strategies[prop.name])(test)))
        # one key per property, the same on every machine: the fleet's
        # shared database replays each property's failures to all
        wrapped._hypothesis_internal_database_key = (  # type: ignore[attr-defined]
            f"shellgate-fuzz:{prop.name}".encode())
        try:
            wrapped()
        except _OutOfTime:
            pass
        except Exception:
            if not failures:
                raise
        if failures:
            self.found(min(failures, key=lambda f: (len(f.command), f.command)), round_seed)


def _check(prop: Property, ctx: Context, example: dict[str, Any]) -> Failure | None:
    """The property's check; its own crash is a finding too (fail closed)."""
    try:
        return prop.check(ctx, example)
    except Exception as exc:
        cmd = str(example.get("command", example.get("inner", "")))
        return Failure(prop.name, example, cmd, "raised",
                       "".join(traceback.format_exception(exc, limit=-6))[:2000])


def make_context(config: FuzzConfig, tools: Any, attacks: tuple[str, ...],
                 benign: tuple[str, ...]) -> Context:
    oracle = Oracle(_FIXTURE) if config.oracle else None
    workspace = oracle.workspace("/oracle/project") if oracle is not None else None
    return Context(config.mode, tools, attacks, benign, oracle, workspace)


def _worker_main(config: FuzzConfig, index: int, workers: int, run_seed: int, tools: Any,
                 attacks: tuple[str, ...], benign: tuple[str, ...],
                 out: multiprocessing.Queue[tuple[Any, ...]], stop: Any) -> None:
    warnings.simplefilter("ignore")
    _die_with_parent()
    ctx: Context | None = None
    try:
        ctx = make_context(config, tools, attacks, benign)
        db = open_database(config.database)
        _Worker(config, index, workers, run_seed, ctx, db, out.put, stop).run(
            chosen_properties(config))
    except KeyboardInterrupt:
        out.cancel_join_thread()  # the parent may be gone: never block on exit
    except BaseException as exc:
        out.put(("error", index, f"worker {index}: {type(exc).__name__}: "
                 + " ".join(str(exc).split())[:300]))
    finally:
        if ctx is not None and ctx.oracle is not None:
            ctx.oracle.close()
        out.put(("done", index))


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


_signalled: list[int] = []


def _note_signal(signum: int, frame: object) -> None:
    _signalled.append(signum)


def _die_with_parent() -> None:
    """A worker outlives nothing: SIGTERM when the parent dies (Linux
    prctl PR_SET_PDEATHSIG; a killed `shellgate fuzz` left its workers
    fuzzing for the rest of the hour). SIGTERM and Ctrl-C are noted, not
    raised (raised, they land in hypothesis's gc callbacks), and end the
    round at its next example."""
    signal.signal(signal.SIGTERM, _note_signal)
    signal.signal(signal.SIGINT, _note_signal)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        _signalled.append(signal.SIGTERM)  # the parent died before the prctl


# -- the parent -------------------------------------------------------------------------------


def _prerequisites(config: FuzzConfig) -> None:
    chosen_properties(config)
    if config.mode not in _ROUND:
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
    procs = [context.Process(target=_worker_main, daemon=True,
                             args=(config, i, workers, run_seed, tools, attacks, benign, out,
                                   stop))
             for i in range(workers)]
    start = time.monotonic()
    for proc in procs:
        proc.start()
    stats: dict[int, tuple[int, int, dict[str, int], dict[str, int]]] = {}
    limit = (config.seconds or math.inf) + _GRACE[config.mode] + 60
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
