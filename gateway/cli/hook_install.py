"""``shellgate hook install|uninstall [--project|--user]``: add shellgate to
a Claude Code settings file as a PreToolUse hook, or take it out — without
touching any other entry, keeping the file's indentation and key order.
Both are idempotent; a file that is not JSON is never rewritten."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import UsageError

#: the tools the hook judges, as Claude Code's matcher
#: every tool Claude Code calls, MCP tools included: shellgate's deny and ask
#: rules hold for all of them (from a review: a deny rule for an MCP tool,
#: WebSearch or Task was never enforced, as the hook was never called)
MATCHER = "*"
#: seconds Claude Code gives the hook (it answers by its own deadline first)
TIMEOUT_S = 30


def hook_command() -> str:
    """The command Claude Code runs: this installation's ``shellgate``, by
    its absolute path, quoted for the shell Claude Code runs it with.

    Never found on PATH, and never written bare: from a review, ``python
    -m gateway hook install`` wrote the first ``shellgate`` on PATH (a
    project's ``bin/`` that direnv had put first ran before every tool
    call), and a path with a space (``/home/A B/.venv/bin/shellgate``) was
    written unquoted — the shell ran ``/home/A``, exit 127, which Claude
    Code reads as no objection to every call."""
    here = Path(sys.argv[0]).absolute() if sys.argv and sys.argv[0] else None
    if here is None or here.name != "shellgate" or not here.is_file():
        here = Path(sys.executable).absolute().with_name("shellgate")
    if not here.is_file() or not os.access(here, os.X_OK):
        raise UsageError("cannot find this installation's shellgate command (next to "
                         f"{sys.executable}); run hook install with it")
    return f"{shlex.quote(str(here))} hook"


def is_ours(entry: Any) -> bool:
    """An entry that runs a ``shellgate hook`` and nothing else (from a
    review: ``curl …|sh; shellgate hook``, which a cloned repository's
    settings may hold, counted as ours, and install added nothing)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    try:
        words = shlex.split(entry["command"])
    except ValueError:
        return False
    return len(words) == 2 and os.path.basename(words[0]) == "shellgate" and words[1] == "hook"


def _entry() -> dict[str, Any]:
    return {"type": "command", "command": hook_command(), "timeout": TIMEOUT_S}


def change_hook(action: str, *, project: bool, cwd: str) -> int:
    path = (Path(cwd) / ".claude" / "settings.json" if project
            else Path(os.path.expanduser("~")) / ".claude" / "settings.json")
    if project and path.parent.is_symlink():
        # From a review: a repository's `.claude` linked to another
        # directory; install wrote the settings there.
        raise UsageError(f"{path.parent} is a symbolic link; nothing was changed")
    if path.is_symlink():
        raise UsageError(f"{path} is a symbolic link; edit the file it leads to")
    if path.exists() and not path.is_file():
        raise UsageError(f"{path} is not a regular file; nothing was changed")
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
    """Add the entry; one already there counts only when it is exactly
    what install writes (from a review: a repository's settings held
    ``{"matcher": "Nothing", "hooks": [{"command": "…/shellgate hook"}]}``;
    install said "already there", and no call was ever judged). Other
    entries of ours are replaced."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError("'hooks' in the settings is not an object; nothing was changed")
    groups = hooks.setdefault("PreToolUse", [])
    if not isinstance(groups, list):
        raise UsageError("'hooks.PreToolUse' is not a list; nothing was changed")
    want = {"matcher": MATCHER, "hooks": [_entry()]}
    ours = [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if is_ours(h)]
    if len(ours) == 1 and want in groups:
        return False
    _uninstall(data)
    hooks = data.setdefault("hooks", {})
    hooks.setdefault("PreToolUse", []).append(want)
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
