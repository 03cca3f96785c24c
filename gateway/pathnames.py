"""Plain facts about path names, for every layer of the gateway: whether a
path lies below another, and where settings files are. Light on purpose:
a cold `shellgate run` asks both before it decides to load the settings
machinery (pydantic with it)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence

__all__ = ["LOCAL_FILES", "MANAGED_DIRS", "PROJECT_FILES", "USER_FILES", "answers_file",
           "inside", "managed_files", "settings_files", "state_dir"]

#: the managed policy's directories: /etc/shellgate wins over /etc/claude-code
MANAGED_DIRS = ("/etc/shellgate", "/etc/claude-code")
#: a project's files (relative to it), the local ones first
LOCAL_FILES = (".claude/settings.local.json", ".shellgate/settings.local.json")
PROJECT_FILES = (".claude/settings.json", ".shellgate/settings.json")
#: the user's own files (relative to the home)
USER_FILES = (".claude/settings.json", ".config/shellgate/settings.json")


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both normalized)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def managed_files(dirs: Sequence[str] = MANAGED_DIRS) -> list[str]:
    """Each directory's ``managed-settings.json``, then its drop-ins
    (``managed-settings.d/*.json``) in name order."""
    files: list[str] = []
    for folder in dirs:
        files.append(os.path.join(folder, "managed-settings.json"))
        drop_in = os.path.join(folder, "managed-settings.d")
        try:
            names = sorted(n for n in os.listdir(drop_in)
                           if n.endswith(".json") and not n.startswith("."))
        except OSError:
            continue
        files.extend(os.path.join(drop_in, n) for n in names)
    return files


def settings_files(project: str, home: str,
                   managed_dirs: Sequence[str] = MANAGED_DIRS) -> list[str]:
    """Every file a session's settings may come from, but the command
    line's own ``--settings``."""
    return [*managed_files(managed_dirs),
            *(os.path.join(project, name) for name in (*LOCAL_FILES, *PROJECT_FILES)),
            *(os.path.join(home, name) for name in USER_FILES)]


def state_dir(env: Mapping[str, str], home: str) -> str:
    """shellgate's state directory: ``$XDG_STATE_HOME/shellgate``, or
    ``~/.local/state/shellgate`` when that is unset or not absolute (as the
    XDG spec says: a relative one is ignored)."""
    state = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state):
        state = os.path.join(home, ".local", "state")
    return os.path.join(os.path.abspath(state), "shellgate")


def answers_file(project: str, env: Mapping[str, str], home: str) -> str:
    """Where the "always" answers a person gave for ``project`` are kept:
    in the state directory, keyed by the project's real path — not in the
    project, where a command or a `git clone` could write them."""
    key = hashlib.sha256(os.path.realpath(project).encode("utf-8", "surrogateescape"))
    return os.path.join(state_dir(env, home), "answers", key.hexdigest()[:32] + ".json")
