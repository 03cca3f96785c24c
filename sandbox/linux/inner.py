"""Launcher that runs *inside* the sandbox for the ``networked`` profile.

Standard library only: it is started as ``python -I -S inner.py`` so nothing
from the caller's environment or site-packages is imported in the sandbox.

It listens on ``127.0.0.1:PORT`` inside the sandbox's network namespace,
forks a bridge that forwards each connection to the host proxy's unix
socket, then loads a stricter seccomp filter on itself (no ``AF_UNIX``
sockets: the bridge may reach the proxy, the command may not reach any host
socket) and ``exec``s the command. When the command exits, the sandbox's
PID 1 exits and the kernel ends the bridge with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import sys
import threading

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def load_filter(program: bytes) -> None:
    """Install a classic-BPF seccomp program (as exported by libseccomp)."""
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def _relay(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def _serve(listener: socket.socket, socket_path: str) -> None:
    while True:
        client, _ = listener.accept()
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(socket_path)
        except OSError:
            client.close()
            continue
        threading.Thread(target=_relay, args=(client, upstream), daemon=True).start()
        threading.Thread(target=_relay, args=(upstream, client), daemon=True).start()


def main(argv: list[str]) -> int:
    try:
        sep = argv.index("--")
    except ValueError:
        print("usage: inner.py --socket PATH --port N [--filter-fd FD] -- ARGV...", file=sys.stderr)
        return 125
    opts = dict(zip(argv[:sep:2], argv[1:sep:2], strict=False))
    command = argv[sep + 1 :]
    if not command:
        print("inner.py: no command", file=sys.stderr)
        return 125
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(opts["--port"])))
    listener.listen(64)
    if os.fork() == 0:  # the bridge
        try:
            _serve(listener, opts["--socket"])
        finally:
            os._exit(0)
    listener.close()
    if "--filter-fd" in opts:
        fd = int(opts["--filter-fd"])
        with os.fdopen(fd, "rb") as handle:
            program = handle.read()
        try:
            load_filter(program)
        except OSError as exc:
            print(f"shellgate: cannot load the sandbox filter: {exc}", file=sys.stderr)
            return 125
    try:
        os.execvp(command[0], command)  # noqa: S606 - running the command is the point
    except OSError as exc:
        print(f"shellgate: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # unreachable


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
