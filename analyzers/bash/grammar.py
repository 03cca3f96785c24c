"""Where the bash grammar comes from.

``tree_sitter_bash/__init__.py`` imports ``importlib.resources`` (and with it
pathlib, tempfile, random, urllib.parse, ipaddress) only to read a highlight
query the analyzer never uses: about 10 ms of every cold ``shellgate check``,
most of an interpreter's own start. The grammar itself is the package's
``_binding`` extension, so it is loaded here directly: found by the same
``sys.path`` search an ``import tree_sitter_bash`` would make, loaded under
its own module name, and the ordinary import is the fallback whenever the
package does not look exactly as expected (a wheel that changed layout, a
zipped install, a meta-path finder of an editable install).
"""

from __future__ import annotations

import sys
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder
from typing import Any

_PACKAGE = "tree_sitter_bash"
_BINDING = f"{_PACKAGE}._binding"


def _binding_module() -> Any:
    """The grammar's extension module, or None when it is not where a plain
    install puts it."""
    loaded = sys.modules.get(_BINDING)
    if loaded is not None:
        return loaded
    package = PathFinder.find_spec(_PACKAGE)
    locations = package.submodule_search_locations if package is not None else None
    if not locations:
        return None
    finder_spec = PathFinder.find_spec(_BINDING, list(locations))
    if finder_spec is None or not isinstance(finder_spec.loader, ExtensionFileLoader):
        return None
    origin = finder_spec.origin or ""
    if not any(origin.endswith(suffix) for suffix in EXTENSION_SUFFIXES):
        return None
    loader = ExtensionFileLoader(_BINDING, origin)
    spec = ModuleSpec(_BINDING, loader, origin=origin)
    module = loader.create_module(spec)
    loader.exec_module(module)
    return module


def bash_language() -> Any:
    """The capsule ``tree_sitter.Language`` takes for bash."""
    try:
        module = _binding_module()
    except (ImportError, OSError):
        module = None
    if module is None or not callable(getattr(module, "language", None)):
        import tree_sitter_bash  # noqa: PLC0415 - the fallback costs what grammar.py saves

        return tree_sitter_bash.language()
    return module.language()
