"""Data shared by the analyzer and the sandbox: sandbox profiles (TOML), the
sensitive-path list, the SBPL base profile.

This package holds data, not policy. Its one function reads a data file
shipped with it; each reader builds its own values from the result (the
dependency rule: analyzers and sandbox never import each other).
"""

from __future__ import annotations

import os
from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover -- a Python built without it
    from hashlib import blake2b

__all__ = ["digest", "read_text", "read_toml"]

_HERE = os.path.dirname(os.path.abspath(__file__))
#: parsed files, by name, read-only
_PARSED: dict[str, Mapping[str, Any]] = {}


def digest(raw: bytes) -> str:
    """The digest :mod:`.compiled` records of a file's bytes."""
    return blake2b(raw, digest_size=16).hexdigest()


def _read_bytes(name: str) -> bytes:
    if os.sep in name or name.startswith("."):
        raise ValueError(f"not a data file of this package: {name!r}")
    with open(os.path.join(_HERE, name), "rb") as handle:
        return handle.read()


def read_text(name: str) -> str:
    """The text of data file ``name`` shipped in this package."""
    return _read_bytes(name).decode("utf-8")


def _frozen(value: Any) -> Any:
    """``value`` read-only all the way down: tables as mapping views, arrays
    as tuples. The parsed data is shared by every reader of a process (the
    gateway server, the hook daemon): from a review, one caller's
    ``read_toml("sensitive-paths.toml")["paths"].clear()`` would have left
    every later sandbox of the process hiding nothing."""
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def read_toml(name: str) -> Mapping[str, Any]:
    """The parsed TOML data file ``name`` shipped in this package (the same
    read-only object on every call).

    From :mod:`.compiled` when it was made from these very bytes (every
    `shellgate run` and `check` is a new process, and parsing the TOML
    cost each one 25 ms); otherwise parsed from the file, which is always
    what counts."""
    parsed = _PARSED.get(name)
    if parsed is not None:
        return parsed
    raw = _read_bytes(name)
    try:
        from .compiled import DATA  # noqa: PLC0415

        made = DATA.get(name)
    except ImportError:
        made = None
    if made is not None and made[0] == digest(raw):
        parsed = made[1]
    else:
        import tomllib  # noqa: PLC0415

        parsed = tomllib.loads(raw.decode("utf-8"))
    frozen: Mapping[str, Any] = _frozen(parsed)
    _PARSED[name] = frozen
    return frozen
