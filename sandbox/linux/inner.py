"""Launcher that runs *inside* the sandbox for the ``networked`` profile.

Standard library only: it is started as ``python -I -S -c SOURCE`` so
nothing from the caller's environment or site-packages is imported in the
sandbox.

It opens the listening socket ``127.0.0.1:PORT`` in the sandbox's own
network namespace, hands that socket to the host proxy over an inherited
socket pair (``SCM_RIGHTS``), closes every copy it holds and ``exec``s the
command. The host proxy then accepts the command's connections itself: no
process of ours stays in the sandbox. There is nothing for the command to
hijack — an in-sandbox bridge holding a way out was one (the command
rewrote its memory through ``/proc/<pid>/mem`` and made it connect to any
host unix socket) — and the sandbox needs no ``AF_UNIX`` socket at all.

The socket pair also reports how the launch went: it is close-on-exec, so
end-of-file right after the listener means the command started; ``E``
plus an errno means it could not be executed; ``F`` plus a reason means
the launcher failed before that.
"""

from __future__ import annotations

import array
import errno
import os
import socket
import sys

#: errors of execve(2) that a shell reports as 126 (found, not executable)
NOT_EXECUTABLE = frozenset({errno.EACCES, errno.ENOEXEC, errno.EISDIR, errno.EPERM})


def _send(channel: socket.socket, message: bytes, fds: list[int] | None = None) -> None:
    ancillary = []
    if fds:
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
    channel.sendmsg([message], ancillary)


def main(argv: list[str]) -> int:
    try:
        sep = argv.index("--")
    except ValueError:
        print("usage: inner --channel FD --port N -- ARGV...", file=sys.stderr)
        return 125
    opts = dict(zip(argv[:sep:2], argv[1:sep:2], strict=False))
    command = argv[sep + 1 :]
    channel = socket.socket(fileno=int(opts["--channel"]))
    if not command:
        _send(channel, b"Fno command")
        return 125
    try:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(opts["--port"])))
        listener.listen(128)
        _send(channel, b"L", [listener.fileno()])
        listener.close()
    except OSError as exc:
        _send(channel, f"Fcannot open the proxy port: {exc}".encode())
        return 125
    os.set_inheritable(channel.fileno(), False)  # closed by a successful exec
    try:
        os.execvp(command[0], command)  # noqa: S606 - running the command is the point
    except OSError as exc:
        code = exc.errno or errno.ENOENT
        _send(channel, f"E{code} {exc.strerror}".encode())  # the host reports it
        return 126 if code in NOT_EXECUTABLE else 127
    return 0  # unreachable


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
