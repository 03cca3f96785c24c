"""``shellgate check``'s warm daemon: the run daemon's protocol
(:mod:`.run_daemon`: the client's standard streams, working directory,
umask, environment and words, served by ``main()`` in a forked child that
takes the client's place; the client is :mod:`.run_client`), with the
analyzer imported and warmed instead of the sandbox.

A cold ``shellgate check`` spends two thirds of its time importing the
analyzer (its grammar, tables and checks); through the daemon it costs the
client's interpreter start and the analysis. The child analyses exactly as
the client's own process would: the workspace's facts (links, ``.env``
files, repositories) are read afresh for each call, and nothing the
daemon's warm-up learned about its throwaway project is an answer for
another (the analyzer keeps only what does not depend on the files).
A call of another verb is refused unrun.

``SHELLGATE_CHECK_DAEMON=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import os

from . import warm_client
from .run_daemon import serve_verb
from .warm_daemon import scratch

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket

    from .warm_sources import Sources

#: children at once (spares and busy ones); past it, calls wait in the
#: backlog, and their clients check in their own process
MAX_CHILDREN = 16
#: no daemon on a kernel without SO_PEERPIDFD: the child takes the
#: client's streams and working directory, as the run daemon's does
PID_FALLBACK = False
#: what the daemon checks once at its start, and a spare before its call:
#: the plain and the JSON form, a pipeline with readers, a destructive
#: command (every check and validator runs on each)
_WARM_UP = (["check", "git log --oneline -5 && cat README.md | grep -c warm"],
            ["check", "--json", "rm -rf build/ && sed -n 1p README.md > out.txt"])


def own_address() -> str | None:
    return warm_client.address(os.environ, "check", warm_client.facts())


def warm_up(words: tuple[list[str], ...] = _WARM_UP, *, make: bool = True) -> None:
    """Import the verb and check ``words`` in the daemon's throwaway
    project (made by the daemon's own warm-up: ``make``; output to the
    daemon's, which is /dev/null). Any failure — the project gone, its
    directory unwritable — leaves the daemon or the spare as warm as it
    got (from a review: a warm-up that raised killed every spare before
    its accept, and each check waited a second for none)."""
    from . import check, main  # noqa: F401, PLC0415 -- loaded once, for the children

    here = os.getcwd()
    with contextlib.suppress(BaseException):
        project = scratch(make=make)
        if project is None:
            return
        readme = os.path.join(project, "README.md")
        if make:
            with open(readme, "w", encoding="utf-8") as handle:
                handle.write("warm\n")
        os.chdir(project)
        try:
            for call in words:
                main(call)
        finally:
            os.chdir(here)


def warm_spare() -> None:
    """Check the commonest form once: the pages of the analysis are then
    the spare's own, not copied from the daemon at the call's first touch."""
    warm_up(_WARM_UP[:1], make=False)


def serve(conn: socket.socket, sources: Sources, status: bytes) -> int:
    return serve_verb("check", conn, sources, status)
