"""The one error root of :mod:`gateway`.

Policy denials are values (a verdict with a reason), never exceptions. These
exceptions are for things that stop the gateway from doing its job::

    GatewayError
     └── UsageError        a command line or request the user got wrong
"""

from __future__ import annotations


class GatewayError(Exception):
    """Root of every exception raised by :mod:`gateway`."""


class UsageError(GatewayError):
    """Bad command-line usage; the CLI prints it on one line and exits 2."""
