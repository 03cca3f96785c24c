"""What the Bash tool reads back from a run: where the command ended up
(a marker line the shell prints on exit, held back from the output), and
whether the output is an image the model should see as one."""

from __future__ import annotations

import os

from ..context import SessionContext
from .images import Fitted, image_type, stdout_image, whole_image

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sandbox import ExecResult

# The image part lives in .images (Read and notebooks show images too):
# whether stdout is one whole image, and that image made fit to show.
__all__ = ["Fitted", "MarkerFilter", "audit_report", "cwd_marker", "cwd_trap", "image_type",
           "is_binary", "split_marker", "stdout_image", "whole_image"]


def audit_report(session: SessionContext, call_id: str, tool_use_id: str | None,
                 result: ExecResult) -> None:
    """What the post-run guards found goes into the audit log as well as the
    result: a cancelled call has no result, a background task's ends after
    its call did, and the log is what a person reviews later."""
    from sandbox import report_lines  # noqa: PLC0415 - loaded by the run already

    lines = report_lines(result, ending=False)
    if lines or result.tampered:
        session.audit.emit("sandbox.reported", session_id=session.session_id, call_id=call_id,
                           tool_use_id=tool_use_id, lines=list(lines),
                           tampered=list(result.tampered))


def is_binary(data: bytes) -> bool:
    """NUL bytes near the start: not text (a tarball, an object file)."""
    return b"\0" in data[:8192]


def cwd_marker(nonce: str) -> bytes:
    """The bytes that open the line naming the final directory."""
    return b"\n\x1fshellgate-cwd-" + nonce.encode() + b":"


def cwd_trap(nonce: str) -> str:
    """The shell line that prints the marker and ``pwd -P`` on exit (to
    stderr, so an image on stdout stays whole). Both are builtins: no
    subshell is forked for it. ``printf`` expands the escapes; the nonce is
    hex, so nothing here needs quoting."""
    if not nonce.isalnum():
        raise ValueError("the nonce must be alphanumeric")
    return f"trap 'printf \"\\n\\037shellgate-cwd-{nonce}:\" >&2; pwd -P >&2' EXIT"


def split_marker(stderr: bytes, marker: bytes) -> tuple[bytes, str | None]:
    """The command's own stderr and the directory the marker named (None
    when the command ended without printing it: `exec 2>&-`, a kill; or
    when what follows is not one canonical absolute path and a newline).
    Reproducer of the last (from a review): a directory named `..<LF>x`
    printed `…/sub/..` on the marker's line, which resolved to the parent."""
    at = stderr.rfind(marker)
    if at < 0:
        return stderr, None
    rest = stderr[at + len(marker):]
    if not rest.endswith(b"\n") or b"\n" in rest[:-1] or b"\0" in rest:
        return stderr[:at], None
    try:
        path = rest[:-1].decode()
    except UnicodeDecodeError:
        return stderr[:at], None
    if not path.startswith("/") or os.path.normpath(path) != path:
        return stderr[:at], None
    return stderr[:at], path


class MarkerFilter:
    """Holds the marker back from streamed stderr: whatever could be the
    start of it waits for the next chunk; from the marker on, nothing more
    is passed."""

    def __init__(self, marker: bytes) -> None:
        self.marker = marker
        self.held = b""
        self.done = False

    def feed(self, data: bytes) -> bytes:
        if self.done:
            return b""
        buf = self.held + data
        at = buf.find(self.marker)
        if at >= 0:
            self.done, self.held = True, b""
            return buf[:at]
        keep = next((k for k in range(min(len(self.marker) - 1, len(buf)), 0, -1)
                     if self.marker.startswith(buf[-k:])), 0)
        self.held = buf[len(buf) - keep:]
        return buf[: len(buf) - keep]
