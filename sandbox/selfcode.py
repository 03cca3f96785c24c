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

So these are never writable for a run: every directory on the process's
import path (a new module there is imported by the next start: an editable
checkout's top holds only what it imports, then), the directory this
package was imported from (in a checkout, the gateway's packages —
including those this process has not loaded, such as the analyzer under
``shellgate run``), every top-level
module or package this process has imported, and its environment
(``sys.prefix``). One that lies in a writable root is blocked there; a
writable root at or below one of them is dropped (the run may write
nothing there). Known to the sandbox as "this process's code", nothing
about tools.
"""

from __future__ import annotations

import os
import sys

__all__ = ["own_code"]


def own_code(roots: list[str]) -> list[str]:
    """The real paths of this process's code that lie in one of ``roots``
    (real paths) or hold one of them: its import path entries, the directory
    this package was imported from, the top-level modules it loaded, its
    environment. A root at or below one of them is not writable at all
    (build_plan drops it): a command could add a module the gateway would
    import; any other is blocked inside its root."""
    real: dict[str, str] = {}

    def resolved(path: str) -> str:
        # the parent's real path, asked once; the last component followed
        # too when it is a link (from a review: a venv or an installed
        # package reached through a symlink into the workspace)
        head, tail = os.path.split(os.path.abspath(path))
        if head not in real:
            real[head] = os.path.realpath(head)
        joined = os.path.join(real[head], tail)
        return os.path.realpath(joined) if os.path.islink(joined) else joined

    def overlaps(path: str) -> bool:
        return any(path == r or path.startswith(r.rstrip("/") + "/")
                   or r.startswith(path.rstrip("/") + "/") for r in roots)

    candidates = [sys.prefix]
    # every directory the process imports from: a command could add a
    # module there (from a review: a sitecustomize.py at the top of an
    # editable checkout ran at every interpreter start)
    candidates += [p for p in sys.path if isinstance(p, str) and p]
    # where this package was imported from (on the import path too, unless
    # reached through a relative entry): it holds every package installed
    # beside it, the analyzer included when this process has not loaded it
    candidates.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name, module in list(sys.modules.items()):
        if "." in name or module is None:
            continue  # a submodule lies inside its top-level package
        package = getattr(module, "__path__", None)
        if package is not None:
            candidates += [p for p in package if isinstance(p, str)]
        elif isinstance(file := getattr(module, "__file__", None), str):
            candidates.append(file)  # a single-file module
    found = {path for path in map(resolved, candidates) if overlaps(path)}
    return sorted(p for p in found if os.path.exists(p))
