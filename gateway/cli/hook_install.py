"""``shellgate hook install|uninstall [--project|--user]``: add shellgate to
a Claude Code settings file as a PreToolUse hook, or take it out — without
touching any other entry, keeping the file's indentation and key order.
Both are idempotent; a file that is not JSON is never rewritten."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import UsageError

#: the tools the hook judges, as Claude Code's matcher
MATCHER = "Bash|Read|Edit|Write|Glob|Grep|WebFetch|NotebookEdit"
#: seconds Claude Code gives the hook (it answers by its own deadline first)
TIMEOUT_S = 30


def hook_command() -> str:
    """The command Claude Code runs: this installation's ``shellgate``, by
    its absolute path (a PATH without it must not silently drop the hook)."""
    found = shutil.which("shellgate")
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    path = str(here) if here is not None and here.name == "shellgate" else found
    return f"{path} hook" if path else "shellgate hook"


def is_ours(entry: Any) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("command"), str)
            and entry["command"].rstrip().endswith(("shellgate hook", "/shellgate hook")))


def change_hook(action: str, *, project: bool, cwd: str) -> int:
    path = (Path(cwd) / ".claude" / "settings.json" if project
            else Path(os.path.expanduser("~")) / ".claude" / "settings.json")
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} does not hold a JSON object; nothing was changed")
    changed = _install(data) if action == "install" else _uninstall(data)
    if not changed:
        print(f"{path}: shellgate hook already {'there' if action == 'install' else 'absent'}")
        return 0
    _write(path, data, text)
    print(f"{path}: shellgate hook {'added' if action == 'install' else 'removed'}")
    return 0


def _install(data: dict[str, Any]) -> bool:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError("'hooks' in the settings is not an object; nothing was changed")
    groups = hooks.setdefault("PreToolUse", [])
    if not isinstance(groups, list):
        raise UsageError("'hooks.PreToolUse' is not a list; nothing was changed")
    if any(is_ours(h) for g in groups if isinstance(g, dict)
           for h in (g.get("hooks") or [])):
        return False
    groups.append({"matcher": MATCHER, "hooks": [
        {"type": "command", "command": hook_command(), "timeout": TIMEOUT_S}]})
    return True


def _uninstall(data: dict[str, Any]) -> bool:
    hooks = data.get("hooks")
    groups = hooks.get("PreToolUse") if isinstance(hooks, dict) else None
    if not isinstance(groups, list):
        return False
    changed = False
    kept = []
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(entries, list) and any(is_ours(h) for h in entries):
            changed = True
            rest = [h for h in entries if not is_ours(h)]
            if rest:
                kept.append({**group, "hooks": rest})
            continue
        kept.append(group)
    if changed and isinstance(hooks, dict):
        if kept:
            hooks["PreToolUse"] = kept
        else:
            del hooks["PreToolUse"]
            if not hooks:
                del data["hooks"]
    return changed


def _indent(text: str) -> int | str:
    """The file's own indentation (two spaces when it has none to show)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _write(path: Path, data: dict[str, Any], before: str) -> None:
    out = json.dumps(data, indent=_indent(before), ensure_ascii=False)
    if not before or before.endswith("\n"):
        out += "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        raise UsageError(f"{path} is a symbolic link; edit the file it leads to")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(out)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
