"""Which workspaces the user trusts to run their own programs.

A repository's settings (``.claude/settings.json``, ``settings.local.json``,
``.shellgate/…``) arrive with a ``git clone``; their hooks are programs
that would run on the host, unsandboxed, at the first tool call. So they
run only in a workspace the user has trusted (``shellgate trust DIR``),
recorded outside every workspace: ``$XDG_CONFIG_HOME/shellgate/trusted.json``
(``~/.config/…``), a file no sandboxed command may write. A trusted
directory covers what lies below it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import GatewayError

#: a list of directories is small; a larger file is not ours
MAX_TRUST_BYTES = 1 << 20


class TrustError(GatewayError):
    """The trust file cannot be read or written (said in one line)."""


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    """Where the list is. A relative ``XDG_CONFIG_HOME`` or ``HOME`` is
    ignored, as the XDG spec says: taken from the gateway's working
    directory — the workspace — it was a trust file the agent could write
    (``XDG_CONFIG_HOME=.config``; ``mkdir -p .config/shellgate; printf …``)."""
    from sandbox import config_dir  # noqa: PLC0415 - the one rule, and the sandbox hides it

    env = os.environ if env is None else env
    home = env.get("HOME") or ""
    if not home.startswith("/"):
        import pwd  # noqa: PLC0415

        home = pwd.getpwuid(os.getuid()).pw_dir
    return Path(config_dir(env, home)) / "trusted.json"


def trusted_dirs(path: Path | None = None) -> tuple[str, ...]:
    """The trusted directories; an unreadable or malformed file trusts
    nothing (never more than it says)."""
    path = path or trust_file()
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TRUST_BYTES + 1)
        data = json.loads(raw) if len(raw) <= MAX_TRUST_BYTES else {}
    except (OSError, ValueError, RecursionError):
        return ()
    dirs = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(dirs, list):
        return ()
    return tuple(d for d in dirs if isinstance(d, str) and d.startswith("/"))


def is_trusted(directory: str, path: Path | None = None) -> bool:
    real = os.path.realpath(directory)
    for trusted in trusted_dirs(path):
        if real == trusted or real.startswith(trusted.rstrip("/") + "/"):
            return True
    return False


def trust(directory: str, path: Path | None = None, *, remove: bool = False) -> bool:
    """Add (or remove) ``directory``; True when the list changed. Written
    whole to a new file and renamed into place, owner-only."""
    path = path or trust_file()
    real = os.path.realpath(directory)
    if not os.path.isdir(real):
        raise TrustError(f"{directory!r} is not a directory")
    current = list(trusted_dirs(path))
    if remove:
        if real not in current:
            return False
        current.remove(real)
    else:
        if real in current:
            return False
        current.append(real)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        import tempfile  # noqa: PLC0415 - only to record a trust: not every hook call

        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trusted.")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump({"trusted": current}, fh, indent=2)
                fh.write("\n")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise TrustError(f"cannot write {path}: {exc.strerror or exc}") from None
    return True
