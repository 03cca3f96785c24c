"""The one error root of :mod:`analyzers`.

Analysis never raises for bad *input*: an empty, huge, binary or malformed
command is a value (a fail-closed verdict). ``AnalyzerError`` is reserved for
misuse of the API by a caller, e.g. a relative working directory::

    AnalyzerError
     └── InvalidArgument      an argument the caller got wrong (not the command)
"""

from __future__ import annotations


class AnalyzerError(Exception):
    """Root of every exception raised by :mod:`analyzers`."""


class InvalidArgument(AnalyzerError, ValueError):
    """A caller-supplied argument other than the command text is invalid."""
