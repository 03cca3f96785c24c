"""The hook's warm daemon (see :mod:`.warm_daemon` for the daemon and
:mod:`.hook_client` for the client).

It imports the judgement once and warms it on a throwaway project; each
call is judged in a forked child exactly as the in-process hook would
judge it — the child reads the settings, the trust file, the repository's
facts and writes the audit log afresh — and exits. A call that costs the
analyzer its memory or its time (``"a|" * 50000``) costs a child, not the
daemon: the client falls back to its own judgement.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

from . import hook_client, hook_guard
from .warm_daemon import STALE, scratch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .warm_sources import Sources

#: children at once (spares and those judging); past it, calls wait in the
#: socket's backlog, and their clients judge them past their share of time
MAX_CHILDREN = 8
#: a kernel without SO_PEERPIDFD serves too (the daemon judges, never runs)
PID_FALLBACK = True
#: what a spare judges before it waits: the commonest calls (a spare costs
#: the machine this much CPU after each call; the daemon warmed the rest)
_SPARE_WARM_UP = ("Bash", "Read")
#: a request is a page; a larger one is not a hook call
MAX_REQUEST_BYTES = 17 << 20
#: how long a child waits for its request's bytes
REQUEST_TIMEOUT_S = 5.0
#: the longest a judgement may take in a child, whatever the client said
MAX_JUDGEMENT_S = 30.0


def own_address() -> str | None:
    return hook_client.address(os.environ)


def warm_up(tools: tuple[str, ...] | None = None, *, make: bool = True) -> None:
    """Import and exercise every path a judgement of ``tools`` (default:
    all) takes, on the daemon's throwaway project (made by the daemon's own
    warm-up: ``make``; one per daemon, as the run and check daemons': from
    a review, a project per spare left a repository-walk cache per call)
    with a throwaway audit log of this process's own, so that each child
    starts warm."""
    from .hook import JUDGED, answer  # noqa: PLC0415

    here = scratch(make=make)
    if here is None:
        return
    project = Path(here) / "project"
    if make:
        project.mkdir(exist_ok=True)
        (project / "README.md").write_text("warm\n")
    audit = Path(here) / f"audit-{os.getpid()}.jsonl"
    saved = {k: os.environ.get(k) for k in ("SHELLGATE_AUDIT_LOG", "CLAUDE_PROJECT_DIR")}
    os.environ["SHELLGATE_AUDIT_LOG"] = str(audit)
    os.environ["CLAUDE_PROJECT_DIR"] = str(project)
    inputs: dict[str, dict[str, Any]] = {
        "Bash": {"command": "git log --oneline -5 && cat README.md | grep -c warm"},
        "Read": {"file_path": str(project / "README.md")},
        "Edit": {"file_path": str(project / "README.md"), "old_string": "warm",
                 "new_string": "cold"},
        "Write": {"file_path": str(project / "new.txt"), "content": "x"},
        "Glob": {"pattern": "*.md"},
        "Grep": {"pattern": "warm"},
        "WebFetch": {"url": "https://example.com/", "prompt": "x"},
        "NotebookEdit": {"notebook_path": str(project / "a.ipynb"), "new_source": "x"},
    }
    try:
        for name in JUDGED if tools is None else tools:
            with contextlib.suppress(Exception):
                answer({"hook_event_name": "PreToolUse", "tool_name": name,
                        "tool_input": inputs.get(name, {}), "cwd": str(project),
                        "session_id": "warm-up", "tool_use_id": "toolu_warm"})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for leftover in Path(here).glob(f"{audit.name}*"):  # the log, its lock
            with contextlib.suppress(OSError):
                leftover.unlink()


def warm_spare() -> None:
    # a warm-up that fails (TMPDIR gone or full) leaves the spare cold, never
    # dead: from a review, a spare that raised here died before its accept,
    # and each call waited a second for one
    with contextlib.suppress(BaseException):
        warm_up(_SPARE_WARM_UP, make=False)


def serve(conn: socket.socket, sources: Sources, status: bytes) -> int:
    """Judge one call on ``conn`` (``status``: the client's, checked)."""
    del status
    conn.sendall(hook_client.ACK)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, REQUEST_TIMEOUT_S)
    if sources.changed():
        _reply(conn, {"stale": "the package changed under the daemon"})
        return STALE
    request = _read_request(conn)
    # the judgement has the hook's own deadline, not the read's 5 s: on a
    # loaded machine a judgement that asks git took longer, the timer
    # killed the child mid-call, and the client judged again in its own
    # process
    signal.setitimer(signal.ITIMER_REAL, hook_guard.MAX_DEADLINE_S)
    _reply(conn, _judged(request))
    return 0


def _read_request(conn: socket.socket) -> dict[str, Any]:
    conn.settimeout(REQUEST_TIMEOUT_S)
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            raise ValueError("the request is too large")
        chunks.append(chunk)
    request = json.loads(b"".join(chunks).decode("ascii"))
    if not isinstance(request, dict):
        raise ValueError("the request is not an object")
    return request


def _judged(request: dict[str, Any]) -> dict[str, Any]:
    """The message for one request, as the guard's judging child makes it."""
    if (request.get("protocol") != hook_client.PROTOCOL
            or request.get("version") != hook_client.VERSION):
        return {"stale": "another version of shellgate"}
    if request.get("key") != hook_client.key(os.environ):
        return {"stale": "a call of another environment"}
    cwd, umask, deadline = request.get("cwd"), request.get("umask"), request.get("deadline")
    if not isinstance(cwd, str) or not isinstance(umask, int) or not isinstance(
            deadline, (int, float)):
        return {"stale": "a malformed request"}
    # the client's own working directory and umask: a relative audit log
    # path (SHELLGATE_AUDIT_LOG=log) means the same file as in-process
    os.chdir(cwd)
    os.umask(umask & 0o777)
    signal.setitimer(signal.ITIMER_REAL, max(0.1, min(float(deadline), MAX_JUDGEMENT_S)))
    payload = request.get("payload")
    if not isinstance(payload, dict):
        return {"error": "the hook input is not a JSON object"}
    from .hook import answer  # noqa: PLC0415 -- imported by the warm-up

    try:
        return {"answer": answer(payload)}
    except BaseException as exc:  # each failure is reported, as in-process
        from .hook_guard import why  # noqa: PLC0415

        return {"error": why(exc)}


def _reply(conn: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n")
