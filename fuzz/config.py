"""What a `shellgate fuzz` run is asked to do, and which properties that
means (shared by the parent, fuzz/runner.py, and its workers, fuzz/worker.py)."""

from __future__ import annotations

from pathlib import Path

from values import valueclass

from .errors import FuzzError
from .properties import PROPERTIES, Property


@valueclass
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


def chosen_properties(config: FuzzConfig) -> list[Property]:
    names = config.properties or tuple(PROPERTIES)
    unknown = [n for n in names if n not in PROPERTIES]
    if unknown:
        raise FuzzError(f"no property {unknown[0]!r} (there are: {', '.join(PROPERTIES)})")
    chosen = [PROPERTIES[n] for n in names if config.oracle or not PROPERTIES[n].oracle]
    if not chosen:
        raise FuzzError("the oracle property needs --oracle")
    return chosen
