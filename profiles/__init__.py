"""Data shared by the analyzer and the sandbox: sandbox profiles (TOML), the
sensitive-path list, the SBPL base profile.

This package holds data, not policy. Its one function reads a data file
shipped with it; each reader builds its own values from the result (the
dependency rule: analyzers and sandbox never import each other).
"""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any

__all__ = ["read_text", "read_toml"]


def read_text(name: str) -> str:
    """The text of data file ``name`` shipped in this package."""
    return resources.files(__name__).joinpath(name).read_text("utf-8")


def read_toml(name: str) -> dict[str, Any]:
    """The parsed TOML data file ``name`` shipped in this package."""
    return tomllib.loads(read_text(name))
