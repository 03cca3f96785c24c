"""shellgate's gateway: the tool system, the CLI and (later) the MCP server.

Public face: the error root and the CLI entry point.
"""

from __future__ import annotations

from .plugins_off import install as _plugins_off

_plugins_off()  # before any pydantic model exists (plugins_off.py says why)

from .cli import main  # noqa: E402
from .errors import GatewayError, UsageError  # noqa: E402

__all__ = ["GatewayError", "UsageError", "main"]
