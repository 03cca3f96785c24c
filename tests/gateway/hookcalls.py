"""`shellgate hook` called as Claude Code calls it: a new process per call,
the PreToolUse JSON on stdin, the answer read from stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def hook_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A home of its own (with a key in ~/.ssh) and an audit log of its own."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    env = {**os.environ, "HOME": str(home), "SHELLGATE_AUDIT_LOG": str(tmp_path / "audit")}
    env.pop("CLAUDE_PROJECT_DIR", None)  # the project is the call's cwd unless a test says
    env.update(extra)
    return env


def ask_hook(tool: str, tool_input: dict[str, Any], cwd: Path | str,
             env: dict[str, str], mode: str = "default") -> str | None:
    """The hook's permission decision, or None for no decision."""
    payload = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(cwd),
               "permission_mode": mode, "hook_event_name": "PreToolUse",
               "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01"}
    done = subprocess.run([sys.executable, "-m", "gateway", "hook"], capture_output=True,
                          input=json.dumps(payload).encode(), timeout=90, env=env, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode().strip()
    return json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out else None
