""""Always allow": the rule goes into the project's local settings file
(``.claude/settings.local.json``, Claude Code's own), written by the gateway
itself — sandboxed commands and the file tools can never write that file
(``profiles/host-run-files.toml`` blocks it), so a model cannot grant
itself a rule."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile

from .settings import MAX_SETTINGS_BYTES
from .sources import LOCAL_SETTINGS


def save_allow_rule(project: str, rule: str) -> str:
    """Add ``rule`` to ``permissions.allow`` of the local settings file;
    returns the path written. Raises ``OSError``/``ValueError`` with a
    one-line reason when the file cannot be kept whole (it is never
    overwritten when it holds something other than a JSON object)."""
    path = os.path.join(project, LOCAL_SETTINGS)
    data: dict[str, object] = {}
    mode = 0o600
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SETTINGS_BYTES + 1)
            mode = os.fstat(fh.fileno()).st_mode & 0o777
    except FileNotFoundError:
        raw = b""
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ValueError(f"{path} is too large to edit")
    if raw.strip():
        loaded = json.loads(raw.decode("utf-8-sig"))
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} does not hold a JSON object; not changed")
        data = loaded
    perms = data.setdefault("permissions", {})
    if not isinstance(perms, dict):
        raise ValueError(f"{path}: 'permissions' is not an object; not changed")
    allow = perms.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ValueError(f"{path}: 'permissions.allow' is not a list; not changed")
    if rule not in allow:
        allow.append(rule)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".settings.", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
