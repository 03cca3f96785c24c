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

``tree_sitter/__init__.py`` in turn imports ``typing`` (for one Protocol the
analyzer never uses), and typing imports contextlib, warnings and re's
aliases: about 5 ms more. Its ``_binding`` extension is loaded the same way,
and registered under its own name, so that a later ``import tree_sitter``
(tests, ``shellgate fuzz``) finds it and uses the very same types.
"""

from __future__ import annotations

import sys
from types import ModuleType

# The import system's own classes, as the interpreter loaded them at start:
# importlib.machinery is these same objects, behind a package whose import
# loads warnings (about 1 ms of a cold start); it is the fallback.
if "_frozen_importlib_external" in sys.modules and "_frozen_importlib" in sys.modules:
    _external = sys.modules["_frozen_importlib_external"]
    EXTENSION_SUFFIXES = _external.EXTENSION_SUFFIXES
    ExtensionFileLoader = _external.ExtensionFileLoader
    PathFinder = _external.PathFinder
    ModuleSpec = sys.modules["_frozen_importlib"].ModuleSpec
else:  # pragma: no cover - an interpreter without the frozen import system
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _binding_module(package_name: str) -> Any:
    """``package_name``'s ``_binding`` extension module, or None when it is
    not where a plain install puts it."""
    name = f"{package_name}._binding"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    package = PathFinder.find_spec(package_name)
    locations = package.submodule_search_locations if package is not None else None
    if not locations:
        return None
    finder_spec = PathFinder.find_spec(name, list(locations))
    if finder_spec is None or not isinstance(finder_spec.loader, ExtensionFileLoader):
        return None
    origin = finder_spec.origin or ""
    if not any(origin.endswith(suffix) for suffix in EXTENSION_SUFFIXES):
        return None
    loader = ExtensionFileLoader(name, origin)
    spec = ModuleSpec(name, loader, origin=origin)
    module = loader.create_module(spec)
    module.__spec__, module.__loader__ = spec, loader  # as the import system sets them
    loader.exec_module(module)
    return module


def _re_compile(pattern: str, flags: int = 0) -> object:
    import re  # noqa: PLC0415 - the first query that matches a regex

    return re.compile(pattern, flags)


def _int_enum(name: str, members: dict[str, int]) -> Any:
    from values import IntEnum  # noqa: PLC0415 - values imports no enum either

    made: Any = type(IntEnum)
    return made(name, (IntEnum,), {**members, "__module__": "tree_sitter"})


def _with_stand_ins(load: Callable[[], Any]) -> Any:
    """``load()`` with stand-ins for ``re`` and ``enum`` while it runs, for
    those not loaded yet. tree-sitter's extension imports re only to keep
    ``re.compile`` for the ``#match?`` predicate of queries, which the
    analyzer never runs; importing re for it is a tenth of a cold `shellgate
    check` (re, its parser and compiler, copyreg). The stand-in's compile
    imports the real re at its first call. It imports enum only for
    ``IntEnum("LogType", {"PARSE": 0, "LEX": 1})``, the kind of a parser's
    log line, which the analyzer never asks for: enum, with the functools
    and collections it imports, is 3.5 ms more; the stand-in makes it with
    :class:`values.IntEnum` (same members, same lookups). Both stand-ins
    leave sys.modules as soon as the extension has loaded, so every
    ``import re`` or ``import enum`` after that gets the real module."""
    stand_ins: dict[str, ModuleType] = {}
    if "re" not in sys.modules:
        stand_ins["re"] = ModuleType("re", "re.compile on first use (analyzers/bash/grammar.py)")
        stand_ins["re"].compile = _re_compile  # type: ignore[attr-defined]
    if "enum" not in sys.modules:
        stand_ins["enum"] = ModuleType("enum", "IntEnum's functional form "
                                       "(analyzers/bash/grammar.py)")
        stand_ins["enum"].IntEnum = _int_enum  # type: ignore[attr-defined]
    sys.modules.update(stand_ins)
    try:
        return load()
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


def tree_sitter_module() -> Any:
    """What the analyzer uses of ``tree_sitter`` (``Language``, ``Parser``):
    its extension module, or the package when that cannot be loaded alone."""
    try:
        module = _with_stand_ins(lambda: _binding_module("tree_sitter"))
    except Exception:  # any failure of the direct load (a release that needs more
        module = None  # of re at its start, say): the package's own import then
    if module is None or not all(callable(getattr(module, attr, None))
                                 for attr in ("Language", "Parser")):
        import tree_sitter  # noqa: PLC0415 - the fallback costs what this saves

        return tree_sitter
    # registered only once it loaded whole: the package's own import of it
    # then takes this module instead of loading the extension a second time
    sys.modules.setdefault("tree_sitter._binding", module)
    return module


def bash_language() -> Any:
    """The capsule ``tree_sitter.Language`` takes for bash."""
    try:
        module = _binding_module("tree_sitter_bash")
    except (ImportError, OSError):
        module = None
    if module is None or not callable(getattr(module, "language", None)):
        import tree_sitter_bash  # noqa: PLC0415 - the fallback costs what grammar.py saves

        return tree_sitter_bash.language()
    return module.language()
