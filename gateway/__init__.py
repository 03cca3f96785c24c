"""shellgate's gateway: the tool system, the CLI and (later) the MCP server.

Public face: the error root and the CLI entry point.
"""

from __future__ import annotations

from .cli import main
from .errors import GatewayError, UsageError

__all__ = ["GatewayError", "UsageError", "main"]
