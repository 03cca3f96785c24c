"""Regular expressions compiled at build time, not at every process start.

Every ``shellgate run``, ``check`` and ``hook`` is a new process, and the
analyzer, the sandbox and the gateway hold some two hundred regular
expressions. ``re.compile`` parses and assembles each one in pure Python
(``re._parser``, ``re._compiler``): about 15 ms of a cold ``shellgate
check`` went to it before the first command was read. The engine itself
(``_sre``) only needs the assembled code, so :func:`regex` takes the code
from a table built once by ``python -m regexes.build`` (``make tables``)
with this same interpreter, and hands it to ``_sre.compile``: the pattern
object is the one ``re.compile`` returns, made in microseconds.

Why it is safe:

* the table is used only by an interpreter of the kind it was built for:
  the same implementation, ``major.minor`` version, byte order and ``_sre``
  engine (``MAGIC``, code size, limits); any other gets ``re.compile`` for
  every pattern. Patch releases share the engine's code format, and
  ``tests/regexes`` holds every installed interpreter of the table's minor
  version (the unprivileged leg's system ``python3``) to assembling the
  very same code;
* a pattern missing from the table (new, edited, or made at run time) is
  compiled by ``re.compile``: a stale table costs time, never a verdict;
* ``_sre.compile`` validates the code it is given (a malformed table raises,
  it cannot make the engine read out of bounds), and
  ``tests/regexes`` rebuilds every entry with ``re``'s own parser and
  compiler and requires it to be identical, and requires the table to hold
  every pattern the packages compile at import.

This package imports nothing of shellgate: every package may use it.
"""

from __future__ import annotations

import _sre
import re
import sys
from typing import AnyStr, cast

__all__ = ["Entry", "engine_key", "regex", "start_recording"]

# One table entry: the flags the pattern ends with (its inline flags folded
# in), the engine code (native unsigned 32-bit words, as bytes: the table
# loads in a tenth of the time a tuple of ints takes), the number of groups,
# name -> group and group -> name.
Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]

def engine_key() -> tuple[object, ...]:
    """What the assembled code depends on: a table built under another key is
    never used."""
    return (sys.implementation.name, sys.version_info[:2], _sre.MAGIC, _sre.CODESIZE,
            _sre.MAXREPEAT, _sre.MAXGROUPS, sys.byteorder)


def _entries() -> dict[tuple[str | bytes, int], Entry]:
    try:
        from regexes import table  # noqa: PLC0415 - it may be missing or being rebuilt
    except (ImportError, SyntaxError, NameError):  # every pattern is compiled by re
        return {}
    if memoryview(b"\0\0\0\0").cast("I").itemsize != _sre.CODESIZE:
        return {}  # the words are not the engine's size
    return cast("dict[tuple[str | bytes, int], Entry]",
                table.ENTRIES if engine_key() == table.ENGINE else {})


_ENTRIES = _entries()
# The build's recorder: while it holds a list, every pattern asked for is added.
_RECORDER: list[list[tuple[str | bytes, int]]] = []


def regex(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, from the build-time table when it holds
    the pattern for this interpreter."""
    flags = int(flags)
    for recorded in _RECORDER:
        recorded.append((pattern, flags))
    # The key holds the pattern itself: 'a' and b'a' are different keys.
    entry = _ENTRIES.get((pattern, flags))
    if entry is None:
        return re.compile(pattern, flags)
    final_flags, code, groups, groupindex, indexgroup = entry
    compiled: re.Pattern[AnyStr] = _sre.compile(
        pattern, final_flags, memoryview(code).cast("I").tolist(), groups, groupindex,
        indexgroup)
    return compiled


def start_recording() -> list[tuple[str | bytes, int]]:
    """Record every pattern asked for from now on (for the table's build)."""
    recorded: list[tuple[str | bytes, int]] = []
    _RECORDER[:] = [recorded]
    return recorded
