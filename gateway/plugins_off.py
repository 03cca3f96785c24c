"""pydantic's plugin loader, replaced by one that finds no plugin.

At the first model it builds, pydantic imports ``pydantic.plugin._loader``,
which imports ``importlib.metadata`` and loads every entry point of the
``pydantic`` group that any installed distribution declares — third-party
code running inside the gateway, seeing (and able to wrap) every validation
of a tool call or a settings file. shellgate validates with pydantic alone,
so the loader here has none to offer. It also spares each cold start the
import of ``importlib.metadata`` (``email``, ``zipfile``, ``csv``, ...:
~10 ms of a cold ``shellgate hook``).

Reproducer of what it stops: a ``*.dist-info/entry_points.txt`` on
``sys.path`` with ``[pydantic]\\nx = evil:plugin`` made pydantic import
``evil`` at the first model; ``tests/gateway/test_plugins_off.py`` holds
that it no longer does.

Installed by ``gateway/__init__.py`` before any model exists. Should
pydantic stop importing the module by this name, the stub is simply unused
(and the test fails, saying so).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["install"]

LOADER = "pydantic.plugin._loader"


def _no_plugins() -> Iterable[object]:
    return ()


def install() -> None:
    """Put the empty loader in place, unless pydantic already loaded its own
    (then models exist already and it has run: nothing left to change)."""
    if LOADER in sys.modules:
        return
    # type(sys) is types.ModuleType: `types` is not loaded at start, and
    # every client of a warm daemon would import it for this alone
    stub = type(sys)(LOADER, "shellgate: pydantic plugins are not loaded")
    stub.get_plugins = _no_plugins  # type: ignore[attr-defined]
    sys.modules[LOADER] = stub
