"""The macOS backend: an SBPL profile for ``/usr/bin/sandbox-exec``.

The profile is generated from the same :class:`~sandbox.plan.FsPlan` as the
bwrap mounts: ``(deny default)``, reads allowed except the hidden paths,
writes only below the writable roots minus the protected paths and stubs, and
``file-write-unlink``/rename denied on the pinned ancestors (so a protected
tree cannot be moved away and replaced). Network is denied except to the
proxy's loopback port. ``sandbox-exec`` is always run by absolute path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import profiles as profile_data

from ..errors import SandboxUnavailable
from ..plan import FsPlan

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def _q(path: str) -> str:
    """An SBPL string literal."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _strictly_inside(path: str, root: str) -> bool:
    return path.startswith(root.rstrip("/") + "/")


def sbpl_profile(plan: FsPlan, *, proxy_port: int | None = None) -> str:
    """The complete profile text for ``plan`` (deterministic: golden-tested)."""
    lines = [profile_data.read_text("base.sbpl").rstrip(), ""]
    hidden = [*plan.hidden_dirs, *plan.hidden_files]
    if hidden:
        lines.append(";; sensitive paths: neither read nor written")
        lines.append("(deny file-read* file-write*")
        lines += [f"  (subpath {_q(p)})" for p in hidden]
        lines[-1] += ")"
    writable = [*plan.writable, *([plan.private_tmp] if plan.private_tmp else [])]
    if writable:
        lines.append(";; writable roots")
        lines.append("(allow file-write*")
        lines += [f"  (subpath {_q(p)})" for p in writable]
        lines[-1] += ")"
    protected = [*plan.protected, *(p for p, _ in plan.missing)]
    if protected:
        lines.append(";; mandatory write denies inside the writable roots (existing or not)")
        lines.append("(deny file-write*")
        lines += [f"  (subpath {_q(p)})" for p in protected]
        lines[-1] += ")"
    # A root granted below a read-only directory (`--allow-write
    # ~/.config/app` in home mode) widens that path only; SBPL's last match
    # wins, so it is allowed again, then what is protected inside it denied.
    widened = [w for w in plan.writable if any(_strictly_inside(w, p) for p in protected)]
    if widened:
        lines.append(";; writable roots granted below a read-only directory")
        lines.append("(allow file-write*")
        lines += [f"  (subpath {_q(w)})" for w in widened]
        lines[-1] += ")"
        inner = [p for p in protected if any(_strictly_inside(p, w) or p == w for w in widened)]
        if inner:
            lines.append("(deny file-write*")
            lines += [f"  (subpath {_q(p)})" for p in inner]
            lines[-1] += ")"
    if plan.pinned:
        lines.append(";; ancestors of protected paths cannot be renamed or removed")
        lines.append("(deny file-write-unlink")
        lines += [f"  (literal {_q(p)})" for p in plan.pinned]
        lines[-1] += ")"
    if proxy_port is not None:
        lines.append(";; network: only the shellgate proxy on loopback")
        lines.append(f'(allow network-outbound (remote tcp "localhost:{proxy_port}"))')
    else:
        lines.append(";; network: none")
    return "\n".join(lines) + "\n"


def seatbelt_command(
    argv: Sequence[str], plan: FsPlan, *, proxy_port: int | None = None
) -> list[str]:
    if not os.path.exists(SANDBOX_EXEC):
        raise SandboxUnavailable(f"{SANDBOX_EXEC} not found (macOS only)")
    return [SANDBOX_EXEC, "-p", sbpl_profile(plan, proxy_port=proxy_port), *argv]
