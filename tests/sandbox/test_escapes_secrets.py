"""Escape tests: secrets in home directories, other projects' .env files, the
environment, and what /proc and /sys show.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import os
import shlex
import uuid
from pathlib import Path

import pytest
from escape_kit import (
    PY,
    assert_secret_absent,
    consume_control,
    require,
    sh,
)

pytestmark = [pytest.mark.sandbox]



# -- 6. secrets in the home directory -----------------------------------------

READ_ATTACKS = {
    "cat": "cat {path}; cat {path} > stolen.txt",
    "cp": "cp {path} stolen.txt",
    "python": PY + " -c 'import sys; open(\"stolen.txt\", \"w\").write(open(sys.argv[1]).read())'"
              " {path}",
    "via /proc/self/root": "cat /proc/self/root{path} > stolen.txt",
    "via a symlink in the workspace": "ln -s {path} link && cat link > stolen.txt",
    "archive the directory": "tar cf stolen.tar {dir} 2>/dev/null; grep -rs . {dir} > stolen.txt",
}


@pytest.mark.parametrize("attack", list(READ_ATTACKS))
def test_home_directory_secrets_cannot_be_read(
    workspace: Path, home_secrets: dict[str, tuple[Path, str]], attack: str
) -> None:
    """Attack: read (or copy into the workspace) a private key under ~/.ssh
    and the credentials under ~/.aws."""
    for path, secret in home_secrets.values():
        script = READ_ATTACKS[attack].format(path=shlex.quote(str(path)),
                                             dir=shlex.quote(str(path.parent)))
        proc = sh(workspace, f"{script}; echo ran > control.txt")
        consume_control(workspace, proc)
        assert_secret_absent(workspace, proc, secret)
        for stolen in workspace.glob("stolen*"):
            stolen.unlink()
        (workspace / "link").unlink(missing_ok=True)


def test_home_directory_secrets_stay_hidden_when_home_points_elsewhere(
    workspace: Path, tmp_path: Path, home_secrets: dict[str, tuple[Path, str]]
) -> None:
    """Attack: the gateway runs with HOME set to a scratch directory; the
    command reads the real user's key by its absolute path."""
    path, secret = home_secrets["ssh"]
    scratch_home = tmp_path / "scratch-home"
    scratch_home.mkdir()
    env = {**os.environ, "HOME": str(scratch_home)}
    proc = sh(workspace, f"cat {shlex.quote(str(path))} > stolen.txt; echo ran > control.txt",
              env=env)
    consume_control(workspace, proc)
    assert_secret_absent(workspace, proc, secret)


# -- 7. secrets in the environment --------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "MY_SERVICE_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN",
     "SLACK_BOT_TOKEN", "AWS_SECRET_ACCESS_KEY", "DATABASE_PASSWORD"],
)
def test_secrets_in_the_callers_environment_do_not_reach_the_command(
    workspace: Path, name: str
) -> None:
    """Attack: read an API key or token the gateway was started with, from
    `env` or any /proc/*/environ inside."""
    secret = f"secret-{uuid.uuid4().hex}"
    control = f"control-{uuid.uuid4().hex}"
    env = {**os.environ, name: secret, "TZ": control}
    script = """
        env > env.txt
        cat /proc/self/environ > environ.bin
        for f in /proc/[0-9]*/environ; do cat "$f"; done > all-environ.bin 2>/dev/null
        env
        echo ran > control.txt
    """
    proc = sh(workspace, script, env=env)
    consume_control(workspace, proc)
    require(control in (workspace / "env.txt").read_text(),
            "an allowed variable (TZ) passes, so env.txt is the real environment", proc)
    assert_secret_absent(workspace, proc, secret)
