"""One `shellgate fuzz` worker: rounds of hypothesis over the properties,
the oracle's sweep, findings sent to the parent (fuzz/runner.py).

Each round is one property, a few dozen examples, a seed drawn from the
run's seed, the worker's index and the round's number (so a round is
reproducible). Properties share the worker's time evenly; with the oracle,
half of it goes to the oracle — first a sweep of every installed option
alone (fuzz/sweep.py), then hypothesis's combinations. A failing example is
shrunk by hypothesis, for a bounded time, and sent to the parent; the
worker then treats that exact command as known, so that later rounds look
for other failures instead of finding it again.
"""

from __future__ import annotations

import ctypes
import math
import multiprocessing
import os
import random
import signal
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from . import findings as store
from .config import FuzzConfig, chosen_properties
from .coverage import COVERAGE
from .database import open_database
from .oracle import Oracle
from .properties import Context, Failure, Property, observe_many, oracle_signature
from .sweep import option_sweep

_FIXTURE = Path(__file__).with_name("fixture")
#: examples per hypothesis round, by mode (the oracle's cost ~0.1 s each)
_ROUND = {"ci": 60, "deep": 250}
MODES = tuple(_ROUND)
_ORACLE_ROUND = {"ci": 8, "deep": 20}
#: how long a failure found near the end may still be shrunk
GRACE = {"ci": 20.0, "deep": 120.0}
#: how long one round may generate examples
_ROUND_SECONDS = {"ci": 5.0, "deep": 20.0}
#: how long one failure may be shrunk
_SHRINK = {"ci": 15.0, "deep": 60.0}
_SWEEP_CHUNK = 24


class _PropertyFailed(AssertionError):
    """Raised inside a hypothesis round so that it shrinks the example."""


class _OutOfTime(BaseException):
    """Raised inside a round to end it now: hypothesis passes anything but
    an ``Exception`` straight through, generation and shrinking alike."""


# -- the worker ---------------------------------------------------------------------------------


class _Worker:
    def __init__(self, config: FuzzConfig, index: int, workers: int, run_seed: int,
                 ctx: Context, db: ExampleDatabase | None,
                 send: Callable[[tuple[Any, ...]], None], stop: Any = None) -> None:
        self.config, self.index, self.workers, self.run_seed = config, index, workers, run_seed
        self.ctx, self.db, self.send, self.stop = ctx, db, send, stop
        now = time.monotonic()
        self.start = now
        self.end = now + config.seconds if config.seconds is not None else math.inf
        self.hard_end = self.end + GRACE[config.mode]
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
        self.known.add(failure.key())
        record = store.to_record(failure, seed=self.run_seed, round_seed=round_seed,
                                 mode=self.config.mode)
        record["after_seconds"] = round(time.monotonic() - self.start, 1)
        self.send(("finding", self.index, record))

    def sweep(self, prop: Property, commands: list[str]) -> None:
        self.examples += len(commands)
        self.per_property[prop.name] += len(commands)
        for cmd, seen in observe_many(self.ctx, commands):
            failure = Failure(prop.name, {"command": cmd}, cmd, "allow",
                              "allowed, but: " + "; ".join(seen), oracle_signature(seen))
            if seen and failure.key() not in self.known:
                self.found(failure, 0)
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
            if failure is None or failure.key() in self.known:
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


def worker_main(config: FuzzConfig, index: int, workers: int, run_seed: int, tools: Any,
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
