"""The fuzzer of the bash analyzer and its execution oracle.

`shellgate fuzz` (:func:`run_fuzz`) draws bash from a grammar
(fuzz/strategies.py) and checks the analyzer's properties
(fuzz/properties.py) — with ``oracle=True`` also by running what it allows
in a throwaway sandbox (fuzz/oracle.py). Nothing here is imported by
`check`, `run` or `hook`.
"""

from __future__ import annotations

from .config import FuzzConfig
from .errors import FuzzError
from .findings import default_path as default_findings_path
from .findings import load as load_findings
from .oracle import Observation, Oracle
from .properties import PROPERTIES, Context, Failure, Property
from .runner import FuzzReport, Snapshot, run_fuzz
from .worker import make_context

__all__ = [
    "PROPERTIES",
    "Context",
    "Failure",
    "FuzzConfig",
    "FuzzError",
    "FuzzReport",
    "Observation",
    "Oracle",
    "Property",
    "Snapshot",
    "default_findings_path",
    "load_findings",
    "make_context",
    "run_fuzz",
]
