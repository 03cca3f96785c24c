"""The fuzz package's one error root: a run that cannot start (a missing
tool, an unreachable database, a property that does not exist), said in
one line. A property that fails is a finding, never an exception."""

from __future__ import annotations


class FuzzError(Exception):
    """The fuzzer cannot run as asked; the message is one line for the user."""
