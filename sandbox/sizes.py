"""Byte sizes as people write them in profiles, settings and flags.

``2GiB``, ``2G``, ``512M``, ``16MiB``, ``1048576``, and for memory also
``50%`` (of this machine's RAM), ``auto`` (half of it) and ``off`` (no
limit). Units are binary (``1K`` = 1024), as ``free``, ``df -h`` and tmpfs'
``size=`` read them.
"""

from __future__ import annotations

import functools
import os
import re

from regexes import regex

from .errors import PolicyError

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = regex(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", re.IGNORECASE)
_PERCENT = regex(r"(\d+(?:\.\d+)?)\s*%")
#: words meaning "no memory limit"
_OFF = frozenset({"off", "none", "unlimited", "no"})


@functools.cache
def total_ram() -> int:
    """This machine's physical memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def parse_size(value: object, *, what: str = "size") -> int:
    """Bytes from an int or a string such as ``512M`` / ``2GiB``."""
    if isinstance(value, bool):
        raise PolicyError(f"{what}: expected a size such as 512M or 2G, got {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise PolicyError(f"{what}: must be more than 0 bytes, got {value}")
        return value
    if isinstance(value, str):
        match = _SIZE.fullmatch(value.strip())
        if match:
            number = float(match.group(1)) * _UNITS[match.group(2).lower()]
            if number < 1:
                raise PolicyError(f"{what}: must be more than 0 bytes, got {value!r}")
            return int(number)
    raise PolicyError(f"{what}: expected a size such as 512M or 2G, got {value!r}")


def parse_memory(value: object) -> int | None:
    """A memory limit: a size, a percentage of RAM, ``auto`` (half of RAM)
    or ``off`` / ``None`` (no limit)."""
    if value is None:
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _OFF:
            return None
        if word == "auto":
            return total_ram() // 2
        match = _PERCENT.fullmatch(word)
        if match:
            share = float(match.group(1))
            if not 0 < share <= 100:
                raise PolicyError(f"memory: a share of RAM is between 0% and 100%, got {value}")
            return int(total_ram() * share / 100)
    return parse_size(value, what="memory")


def human(size: int) -> str:
    """``2.0 GiB``, ``256 MiB``, ``512 KiB``, ``100 B``."""
    for unit, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit:
            value = size / unit
            return f"{value:.0f} {name}" if value == int(value) else f"{value:.1f} {name}"
    return f"{size} B"
