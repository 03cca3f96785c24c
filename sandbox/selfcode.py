"""The code of the process that runs the sandbox, where a command could
change it: kept read-only.

The gateway runs from a checkout or a virtualenv, and an agent may well
work in that very project (developing shellgate with shellgate, or a
project that vendors it). Then its packages, their bytecode caches and its
interpreter's environment lie in a writable root, and a sandboxed command
could rewrite what the host runs at its next start: from a review,
``shellgate run -- python -c '<rewrite regexes/__pycache__/table…pyc>'``
in such a checkout swapped two compiled patterns, and the next ``shellgate
check 'cat {/etc/shadow,x}'`` said allow — with ``git status`` clean (a
pyc is ignored by git). Editing ``analyzers/*.py`` itself worked the same
way.

So, when they lie in a writable root, these are blocked for the run: every
package installed beside this one (the sibling directories holding an
``__init__.py``: in a checkout, the gateway's packages — including those
this process has not loaded, such as the analyzer under ``shellgate run``),
every top-level module or package this process has imported, and its
environment (``sys.prefix``). Known to the sandbox as "this process's
code", nothing about tools.
"""

from __future__ import annotations

import os
import sys

__all__ = ["own_code"]


def own_code(roots: list[str]) -> list[tuple[str, str, bool]]:
    """``block`` entries (path, kind, no stub) for the loaded code and the
    environment of this process that lie in one of ``roots`` (real paths)."""
    under = tuple(r.rstrip("/") + "/" for r in roots)
    inside = set(roots)
    real: dict[str, str] = {}  # a directory's real path, asked once

    def resolved(path: str) -> str:
        head, tail = os.path.split(os.path.abspath(path))
        if head not in real:
            real[head] = os.path.realpath(head)
        return os.path.join(real[head], tail)

    found: set[str] = set()
    candidates = [sys.prefix]
    installed = resolved(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if installed in inside or installed.startswith(under):
        with os.scandir(installed) as entries:
            candidates += [e.path for e in entries if e.is_dir(follow_symlinks=False)
                           and os.path.isfile(os.path.join(e.path, "__init__.py"))]
    for name, module in list(sys.modules.items()):
        if "." in name or module is None:
            continue  # a submodule lies inside its top-level package
        package = getattr(module, "__path__", None)
        if package is not None:
            candidates += [p for p in package if isinstance(p, str)]
        elif isinstance(file := getattr(module, "__file__", None), str):
            candidates.append(file)  # a single-file module
    for candidate in candidates:
        path = resolved(candidate)
        if path in inside or path.startswith(under):
            found.add(path)
    return [(p, "dir" if os.path.isdir(p) else "file", False) for p in sorted(found)
            if os.path.exists(p)]
