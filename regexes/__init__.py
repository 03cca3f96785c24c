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

* the table is used only by the interpreter it was built for: the same
  implementation, ``major.minor.micro`` release, byte order and ``_sre``
  engine (``MAGIC``, code size, limits); any other gets ``re.compile`` for
  every pattern. The release is in the key because patch releases do
  assemble some patterns differently (from a review: ``(?:ab){2147483647}c``
  has another minimum width in 3.11.2 than in 3.11.7);
* a pattern missing from the table (new, edited, or made at run time) is
  compiled by ``re.compile``: a stale table costs time, never a verdict; so
  is a table or an entry that cannot be used (not loadable, of the wrong
  shape, refused by ``_sre.compile``);
* ``_sre.compile`` checks the code it is given for memory safety only (it
  cannot make the engine read out of bounds): that each entry is *its*
  pattern's code is held by ``tests/regexes``, which rebuilds every entry
  with ``re``'s own parser and compiler, and by ``make lint`` (``python -m
  regexes.build --check``). The table is the package's code like any other
  module: what may write it may write the analyzer, and a sandboxed command
  may write neither (``sandbox/selfcode.py``).

This package imports nothing of shellgate: every package may use it.
"""

from __future__ import annotations

import _sre
import sys

# Neither re nor typing is imported at run time unless a pattern misses the
# table: with what they import (enum, functools, contextlib, warnings...) they
# are a fifth of a cold `shellgate check`; mypy reads this block.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import AnyStr

__all__ = ["ASCII", "DOTALL", "IGNORECASE", "MULTILINE", "VERBOSE", "Entry", "engine_key",
           "fnmatchcase", "regex", "start_recording"]

# re's flags, for modules that name them without importing re: the values
# of sre_constants' SRE_FLAG_*, unchanged since Python 2 (a test holds them
# to re's own)
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16
VERBOSE = 64
ASCII = 256

# One table entry: the flags the pattern ends with (its inline flags folded
# in), the engine code (native unsigned 32-bit words, as bytes: the table
# loads in a tenth of the time a tuple of ints takes), the number of groups,
# name -> group and group -> name.
Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]

def engine_key() -> tuple[object, ...]:
    """What the assembled code depends on: a table built under another key is
    never used."""
    return (sys.implementation.name, sys.version_info[:3], _sre.MAGIC, _sre.CODESIZE,
            _sre.MAXREPEAT, _sre.MAXGROUPS, sys.byteorder)


def _entries() -> dict[tuple[str | bytes, int], Entry]:
    try:
        from regexes import table  # noqa: PLC0415 - it may be missing or being rebuilt

        engine, entries = table.ENGINE, table.ENTRIES
    except Exception:  # any table that cannot load: every pattern is compiled by re
        return {}
    if memoryview(b"\0\0\0\0").cast("I").itemsize != _sre.CODESIZE:
        return {}  # the words are not the engine's size
    if engine != engine_key() or not isinstance(entries, dict):
        return {}
    return entries  # type: ignore[return-value]  # each entry is checked at its use


_ENTRIES = _entries()
# The build's recorder: while it holds a list, every pattern asked for is added.
_RECORDER: list[list[tuple[str | bytes, int]]] = []


def regex(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, from the build-time table when it holds
    the pattern for this interpreter."""
    if not isinstance(flags, int):
        return _compile(pattern, flags)  # re's own error for a wrong type
    flags = int(flags)  # a RegexFlag is its value
    for recorded in _RECORDER:
        recorded.append((pattern, flags))
    # The key holds the pattern itself: 'a' and b'a' are different keys.
    entry = _ENTRIES.get((pattern, flags))
    if entry is not None:
        try:
            final_flags, code, groups, groupindex, indexgroup = entry
            compiled: re.Pattern[AnyStr] = _sre.compile(
                pattern, final_flags, memoryview(code).cast("I").tolist(), groups,
                groupindex, indexgroup)
        except Exception:  # noqa: S110 - an entry of the wrong shape: re's way
            pass
        else:
            return compiled
    return _compile(pattern, flags)


def _compile(pattern: AnyStr, flags: int) -> re.Pattern[AnyStr]:
    import re  # noqa: PLC0415 - a pattern the table does not hold

    return re.compile(pattern, flags)


def start_recording() -> list[tuple[str | bytes, int]]:
    """Record every pattern asked for from now on (for the table's build)."""
    recorded: list[tuple[str | bytes, int]] = []
    _RECORDER[:] = [recorded]
    return recorded


def fnmatchcase(name: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase``, imported (with re under it) at the first
    glob matched rather than at every start."""
    from fnmatch import fnmatchcase as match  # noqa: PLC0415

    return match(name, pattern)
