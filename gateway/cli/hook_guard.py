"""The guard of ``shellgate hook``: the first code that runs, standard
library only, so that no failure after it can let a dangerous call through.

Claude Code treats a PreToolUse hook that crashes (any exit but 0 and 2),
prints garbage or times out as *no objection*: the call goes ahead. So
every way out of here prints a valid answer and exits 0 — the real one, or,
when anything failed (a broken install, an import error, a bug, bad input,
a hang past the deadline), a fail-closed one: ``deny`` when the call names
a secret or a hard limit the plain text shows, otherwise ``ask``.

Reproducer of what it stops: ``mv gateway/analyzers.py …`` in a broken
install; the hook exits 1 with a traceback, and Claude Code runs
``cat ~/.ssh/id_rsa`` as if the hook had agreed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from types import FrameType
from typing import Any

#: Claude Code's hook JSON is a page; a larger input is not a hook call
MAX_INPUT_BYTES = 16 << 20
#: the answer is given by then, whatever happens (Claude Code waits 60 s)
DEFAULT_DEADLINE_S = 20.0

#: what the plain text of a call must show for the fallback to deny: the
#: secrets and the destruction a person would never approve blind
_SENSITIVE = re.compile(
    r"\.ssh/|id_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/|\.gnupg/|\.kube/config|\.docker/config"
    r"|\.netrc\b|\.git-credentials|/etc/(?:shadow|gshadow|sudoers)|\.config/gcloud"
    r"|\.azure/|/proc/\d+/environ|/proc/self/environ")
_HARD_LIMIT = re.compile(
    r"\brm\s+(?:-\w+\s+)*(?:/|~/?|\$HOME/?|/\*)(?:\s|$)|\bmkfs\b|\bdd\b[^|;&]*\bof=/dev/"
    r"|:\(\)\s*\{|>\s*/dev/sd[a-z]")

#: the run's state, read by the deadline's signal handler
_state: dict[str, Any] = {"answered": False, "payload": None}


def run() -> int:
    """Answer the PreToolUse call on stdin; always exit 0."""
    try:
        deadline = float(os.environ.get("SHELLGATE_HOOK_TIMEOUT", DEFAULT_DEADLINE_S))
        if not 0 < deadline < 3600:
            deadline = DEFAULT_DEADLINE_S
    except ValueError:
        deadline = DEFAULT_DEADLINE_S
    signal.signal(signal.SIGALRM, _on_deadline)
    signal.setitimer(signal.ITIMER_REAL, deadline)
    try:
        raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        if len(raw) > MAX_INPUT_BYTES:
            return _emit(fallback(None, "the hook input is larger than 16 MiB"))
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            return _emit(fallback(None, "the hook input is not JSON"))
        if not isinstance(payload, dict):
            return _emit(fallback(None, "the hook input is not a JSON object"))
        _state["payload"] = payload
        from .hook import answer  # noqa: PLC0415 -- the heavy part, after the guard

        return _emit(answer(payload))
    except BaseException as exc:  # every failure is an answer here, SystemExit too
        why = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
        return _emit(fallback(_state["payload"], why))


def fallback(payload: Any, why: str) -> dict[str, Any]:
    """The fail-closed answer: deny what the plain text shows is a secret or
    a hard limit, ask about everything else."""
    text = _flat(payload.get("tool_input") if isinstance(payload, dict) else None)
    if _SENSITIVE.search(text):
        return decision("deny", f"shellgate could not judge this call ({why}); it names a "
                        "sensitive path, so it is refused")
    if _HARD_LIMIT.search(text):
        return decision("deny", f"shellgate could not judge this call ({why}); it looks like "
                        "a hard limit (destroying a disk or the home), so it is refused")
    return decision("ask", f"shellgate could not judge this call ({why}); a person decides")


def decision(kind: str, reason: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": kind,
                                   "permissionDecisionReason": reason}}


def _flat(value: Any, depth: int = 0) -> str:
    """Every string of a tool's input, joined (bounded)."""
    if depth > 20:
        return ""
    if isinstance(value, str):
        return value[:1_000_000]
    if isinstance(value, dict):
        return "\n".join(_flat(v, depth + 1) for v in list(value.values())[:1000])
    if isinstance(value, list):
        return "\n".join(_flat(v, depth + 1) for v in value[:1000])
    return ""


def _emit(answer: dict[str, Any] | None) -> int:
    """Print the answer once (``None``: no decision — Claude Code's own
    rules and prompt decide) and exit 0."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    if not _state["answered"]:
        _state["answered"] = True
        if answer:
            sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


def _on_deadline(signum: int, frame: FrameType | None) -> None:
    if not _state["answered"]:
        _emit(fallback(_state["payload"], "it took longer than its deadline"))
    os._exit(0)
