"""What the Bash tool reads back from a run: where the command ended up
(a marker line the shell prints on exit, held back from the output), and
whether the output is an image the model should see as one."""

from __future__ import annotations

import os

#: magic bytes -> media type: images the model is shown as images (a plot
#: a command prints, a screenshot Read opens)
IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(head: bytes) -> str | None:
    """The media type of an image that starts with ``head``, if it is one."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in IMAGE_MAGIC if head.startswith(magic)), None)


def whole_image(data: bytes) -> str | None:
    """The media type of ``data`` when it is one whole image: the magic at
    the start and the format's end marker at the end. Reproducer (from a
    review): `printf '\\377\\330\\377'; echo text` was sent as a JPEG,
    the text lost and an image the API refuses put on the wire."""
    media = image_type(data)
    body = data.rstrip(b"\n")  # `cat plot.png; echo`
    ends = {
        "image/png": body.endswith(b"IEND\xaeB`\x82") and data[12:16] == b"IHDR",
        "image/jpeg": body.endswith(b"\xff\xd9"),
        "image/gif": body.endswith(b"\x3b"),
        "image/webp": int.from_bytes(data[4:8], "little") + 8 in (len(body), len(body) - 1),
    }
    return media if media is not None and ends.get(media, False) else None


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
