"""Running one hook command on the host: its JSON on stdin, its output
bounded, its whole process tree killed at its timeout.

Hooks are the user's own programs (their settings, or a repository they
trusted), so they run outside the sandbox with the user's environment —
as Claude Code runs them — plus ``CLAUDE_PROJECT_DIR`` and
``SHELLGATE_PROJECT_DIR``. They never see the audit log's key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Mapping
from typing import Any

from values import valueclass

from .config import HookCommand

#: what is kept of each stream; the rest is read and dropped, so a hook
#: that prints forever neither blocks on a full pipe nor fills memory
MAX_OUTPUT_BYTES = 1 << 20
#: the shell Claude Code runs hook commands with
SHELL = "/bin/sh"


@valueclass
class HookRun:
    """How one hook run ended."""

    hook: HookCommand
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    duration_ms: float = 0.0
    #: it could not be started at all (no shell, a bad working directory)
    error: str | None = None
    #: not started on purpose: what it runs changed since the session began
    refused: bool = False


def hook_env(project_dir: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a hook gets: the user's, the project's directory
    under both names, and never the audit log's HMAC key (a hook that
    leaked it would let anyone re-chain a rewritten log)."""
    env = dict(os.environ if base is None else base)
    env["CLAUDE_PROJECT_DIR"] = project_dir
    env["SHELLGATE_PROJECT_DIR"] = project_dir
    env.pop("SHELLGATE_AUDIT_KEY", None)
    return env


async def run_hook(hook: HookCommand, payload: Mapping[str, Any], *, cwd: str,
                   env: Mapping[str, str]) -> HookRun:
    """Run ``hook`` with ``payload`` as JSON on its stdin. Never raises but
    for a cancellation, and then only after the hook's tree is killed."""
    started = time.perf_counter()
    # Encoded before anything starts. From a review: a lone surrogate in the
    # model's input (`"description": "\ud800"`) failed the UTF-8 encoding
    # after the hook had started — it ran without its input, unaudited and
    # unwaited, and the call's result was lost; JSON's own escapes carry it.
    try:
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    except UnicodeEncodeError:
        data = json.dumps(payload, default=str).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        return HookRun(hook, None, error=f"its input could not be written as JSON ({exc})",
                       duration_ms=_ms(started))
    try:
        proc = await asyncio.create_subprocess_exec(
            SHELL, "-c", hook.command, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=cwd,
            env=dict(env), start_new_session=True)
    except OSError as exc:
        return HookRun(hook, None, error=f"could not start: {exc.strerror or exc}",
                       duration_ms=_ms(started))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        outcome = await asyncio.wait_for(_converse(proc, data), hook.timeout_s)
    except TimeoutError:
        await _kill_tree(proc)
        return HookRun(hook, None, timed_out=True, duration_ms=_ms(started))
    except asyncio.CancelledError:
        await asyncio.shield(_kill_tree(proc))
        raise
    out, err, code = outcome
    # a child it started with its output sent elsewhere (`notify … &`) is
    # its own deliberate business and lives on; one that kept our pipes
    # open kept this call waiting, and was killed at the timeout
    return HookRun(hook, code, _text(out), _text(err), duration_ms=_ms(started))


async def _converse(proc: asyncio.subprocess.Process, data: bytes
                    ) -> tuple[bytes, bytes, int]:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    async def feed() -> None:
        assert proc.stdin is not None
        # a hook that never reads its stdin must not block us: a broken
        # pipe or reset is its business
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(data)
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.close()

    _, out, err = await asyncio.gather(feed(), _bounded(proc.stdout), _bounded(proc.stderr))
    return out, err, await proc.wait()


async def _bounded(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < MAX_OUTPUT_BYTES:
            kept += chunk[: MAX_OUTPUT_BYTES - len(kept)]
    return bytes(kept)


async def _kill_tree(proc: asyncio.subprocess.Process) -> None:
    """The hook, its process group, and any descendant that left the group
    (``setsid``) while its parent still lived."""
    import psutil  # noqa: PLC0415

    victims: list[psutil.Process] = []
    with contextlib.suppress(psutil.Error):
        victims = psutil.Process(proc.pid).children(recursive=True)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for child in victims:
        with contextlib.suppress(psutil.Error):
            child.kill()
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
