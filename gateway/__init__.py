"""shellgate's gateway: the tool system, the CLI and (later) the MCP server.

Public face: the error root and the CLI entry point.
"""

# No `from __future__ import annotations` here, and nothing imported before
# the sys.path fix below but sys and os (both loaded at interpreter start,
# never looked for on the path): `python -m gateway` imports this package
# before gateway/__main__.py runs, with the working directory — the
# workspace, where sandboxed commands write — first on sys.path. From a
# review: a command wrote `typing.py` into the workspace, and the next
# `python -m gateway check ls` on the host imported and ran it (a
# `__future__.py` was run by this file's own future import). The console
# script has its own directory there instead; here the entry is removed, as
# `python -P` would (later imports are looked for there too: a planted
# `psutil.py` ran at the first process count).
import os
import sys


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # removed: nothing can be imported from it either
        return None


if (sys.argv[:1] == ["-m"] and not sys.flags.safe_path and sys.path
        and sys.path[0] in ("", _cwd())):
    del sys.path[0]

from .plugins_off import install as _plugins_off  # noqa: E402 - after the sys.path fix

_plugins_off()  # before any pydantic model exists (plugins_off.py says why)

from .cli import main  # noqa: E402
from .errors import GatewayError, UsageError  # noqa: E402

__all__ = ["GatewayError", "UsageError", "main"]
