"""Feeding the command's standard input through a pipe the parent owns.

The command never receives the caller's descriptor itself. Attack, from
an outside review: ``shellgate run -- sh -c 'echo pwned > /proc/self/fd/0'
< notes.txt`` reopened the inherited descriptor of the host file
read-write through ``/proc/self/fd/0`` and rewrote it — the sandbox's
read-only mounts do not apply to a file opened outside it. A pipe has no
path to reopen: the command reads exactly the bytes, and nothing else.

The copy runs on a thread, so an idle stdin (a terminal or a pipe nobody
writes to) never delays the start, and it stops as soon as the command is
gone (``stop()``) or stops reading (``EPIPE``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading

_CHUNK = 65536


class StdinFeeder:
    """Copies ``source`` (bytes, or a descriptor read until end-of-file)
    into the write end ``sink`` of the command's stdin pipe, then closes it."""

    def __init__(self, source: bytes | int, sink: int) -> None:
        self._source = source
        self._sink = sink
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="shellgate-stdin", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """The command has ended: stop copying, release every descriptor.
        Also when it never started (the start gate failed): from a review,
        joining the unstarted thread raised, and the sandbox's own reason
        became "internal error: cannot join thread before it is started"."""
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"x")
        if self._thread.ident is not None:
            self._thread.join(timeout)
        else:
            with contextlib.suppress(OSError):
                os.close(self._sink)  # the thread would have closed it
        for fd in (self._stop_r, self._stop_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        try:
            os.set_blocking(self._sink, False)
            if isinstance(self._source, bytes):
                self._write_all(self._source)
            else:
                self._copy_fd(self._source)
        except OSError:
            pass  # EPIPE: the command stopped reading; anything else ends the copy too
        finally:
            with contextlib.suppress(OSError):
                os.close(self._sink)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            readable, writable, _ = select.select([self._stop_r], [self._sink], [])
            if readable:
                return
            if writable:
                try:
                    written = os.write(self._sink, view[:_CHUNK])
                except BlockingIOError:
                    continue
                view = view[written:]

    def _copy_fd(self, source: int) -> None:
        while True:
            readable = select.select([self._stop_r, source], [], [])[0]
            if self._stop_r in readable:
                return
            try:
                chunk = os.read(source, _CHUNK)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EINTR):
                    continue
                return
            if not chunk:
                return
            self._write_all(chunk)
