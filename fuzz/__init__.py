"""The fuzzer and the execution oracle (see fuzz/oracle.py)."""

from __future__ import annotations

from .oracle import Observation, Oracle

__all__ = ["Observation", "Oracle"]
