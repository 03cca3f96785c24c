"""Background runs: a sandboxed command on a thread, read as it goes."""

from __future__ import annotations

import codecs
import threading
from collections.abc import Sequence

from .policy import SandboxPolicy
from .runner import Backend, run
from .supervise import ExecResult, OutputCallback, kill_tree


class BackgroundProcess:
    """A sandboxed command running on a thread: read its output as it comes,
    wait for it, or stop it (the whole process tree)."""

    def __init__(self, on_output: OutputCallback | None = None) -> None:
        self._listener = on_output
        self._lock = threading.Lock()
        self._chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        # One incremental decoder per stream: a UTF-8 character split
        # between two reads is decoded whole on the second, never as two
        # replacement characters.
        self._decoders = {
            name: codecs.getincrementaldecoder("utf-8")("replace") for name in self._chunks
        }
        self._result: ExecResult | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._pid: int | None = None
        self._stopping = False

    def _on_output(self, stream: str, data: bytes) -> None:
        with self._lock:
            self._chunks[stream].append(data)
        if self._listener is not None:
            try:
                self._listener(stream, data)  # as it comes: a caller streams progress
            except Exception:  # a listener's bug must not stop the run
                self._listener = None  # the output is still kept for read()

    def _on_start(self, pid: int) -> None:
        with self._lock:
            self._pid = pid
            stopping = self._stopping
        if stopping:  # stop() came before the process existed: it ends now
            kill_tree(pid)

    def read(self) -> tuple[str, str]:
        """New output since the last call: (stdout, stderr). Bytes of a
        character not yet complete wait for the next call (or the end)."""
        with self._lock:
            final = self._done.is_set()
            texts = [
                self._decoders[name].decode(b"".join(self._chunks[name]), final=final)
                for name in ("stdout", "stderr")
            ]
            self._chunks = {"stdout": [], "stderr": []}
        return texts[0], texts[1]

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> ExecResult | None:
        """The result once the command ended (``None`` if still running)."""
        self._done.wait(timeout)
        if self._error is not None:
            raise self._error
        return self._result

    def stop(self, timeout: float = 5.0) -> ExecResult | None:
        """Kill the whole process tree and wait for the result."""
        # A stop that comes before the process has started (a call cancelled
        # at once) is remembered: the process is killed as soon as it exists,
        # instead of running on unstopped.
        with self._lock:
            self._stopping = True
            pid = self._pid
        if pid is not None and self.running:
            kill_tree(pid)
        return self.wait(timeout)


def start_background(
    argv: Sequence[str],
    policy: SandboxPolicy,
    *,
    cwd: str,
    workspace: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    backend: Backend | None = None,
    on_output: OutputCallback | None = None,
) -> BackgroundProcess:
    """Start ``argv`` in the sandbox without waiting for it. ``on_output``
    hears every chunk as it arrives (on the run's thread); :meth:`read`
    still returns everything since its last call."""
    bg = BackgroundProcess(on_output)

    def target() -> None:
        try:
            bg._result = run(
                argv,
                policy,
                cwd=cwd,
                workspace=workspace,
                env=env,
                timeout=timeout,
                on_output=bg._on_output,
                on_start=bg._on_start,
                backend=backend,
            )
        except BaseException as exc:  # handed to the caller by wait()
            bg._error = exc
        finally:
            bg._done.set()

    threading.Thread(target=target, name="shellgate-background", daemon=True).start()
    return bg
