"""Plain facts about path names, for every layer of the gateway: whether a
path lies below another, and where settings files are. Light on purpose:
a cold `shellgate run` asks both before it decides to load the settings
machinery (pydantic with it)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence

# shellgate's own directories are named in one place, the sandbox's (which
# hides them from every command): the gateway writes where it hides
from sandbox import state_dir

__all__ = ["AUDIT_LOG_ENV", "LOCAL_FILES", "MANAGED_DIRS", "PROJECT_FILES", "USER_FILES",
           "answers_file", "audit_path", "inside", "managed_files", "settings_files",
           "state_dir"]

#: the environment variable naming the audit log (the ``--audit-log`` flag wins)
AUDIT_LOG_ENV = "SHELLGATE_AUDIT_LOG"

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


def audit_path(flag: str | None, env: Mapping[str, str]) -> str:
    """Where the audit log is: ``--audit-log``, else ``$SHELLGATE_AUDIT_LOG``,
    else ``audit/`` in the state directory. Always absolute."""
    raw = flag or env.get(AUDIT_LOG_ENV) or ""
    if raw:
        return os.path.abspath(os.path.expanduser(raw))
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(state_dir(env, home), "audit")


def answers_file(project: str, env: Mapping[str, str], home: str) -> str:
    """Where the "always" answers a person gave for ``project`` are kept:
    in the state directory, keyed by the project's real path — not in the
    project, where a command or a `git clone` could write them."""
    key = hashlib.sha256(os.path.realpath(project).encode("utf-8", "surrogateescape"))
    return os.path.join(state_dir(env, home), "answers", key.hexdigest()[:32] + ".json")
