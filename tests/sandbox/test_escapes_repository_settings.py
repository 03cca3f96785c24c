"""A repository never widens the sandbox, whichever verb reads its file.

Attack (from a review of `shellgate run`): `shellgate run --settings
.claude/settings.json` — the README's own example — applied a cloned
repository's ``sandbox`` key unchecked: ``allowWrite`` and
``allowUnixSockets`` let the command write outside the workspace and talk
to the user's ssh-agent, while `shellgate tool` refused the same file. Now
every verb loads settings one way: a file where sandboxed commands may
write (the workspace, an `--allow-write` path, a root the settings grant)
is a repository's, whatever flag names it; the user's and the policy's own
files are never one, even with the home as the workspace.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import socket
import tempfile
from pathlib import Path

import pytest
from escape_kit import PY, consume_control, output, require, sh

pytestmark = pytest.mark.sandbox


def _settings(path: Path, sandbox: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"sandbox": sandbox}))
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    where = tmp_path / "outside"
    where.mkdir()
    return where


#: how the repository's file reaches `run`: named by the flag, or found
#: as the project's own (read by every verb)
NAMINGS = {"--settings": True, "found in the project": False}


def _naming(workspace: Path, naming: str) -> tuple[str, ...]:
    return ("--settings", str(workspace / ".claude" / "settings.json")) if NAMINGS[naming] else ()


@pytest.mark.parametrize("naming", NAMINGS)
def test_a_repository_settings_file_cannot_make_a_path_outside_writable(
        workspace: Path, outside: Path, naming: str) -> None:
    _settings(workspace / ".claude" / "settings.json",
              {"filesystem": {"allowWrite": [str(outside)]}})
    proc = sh(workspace, f"echo planted > {shlex.quote(str(outside / 'planted'))}; "
                         "echo ran > control.txt", options=_naming(workspace, naming))
    consume_control(workspace, proc)
    assert not (outside / "planted").exists(), output(proc)
    assert "a repository's settings cannot widen the sandbox" in output(proc)


@pytest.mark.parametrize("naming", NAMINGS)
def test_a_repository_settings_file_cannot_open_unix_sockets(
        workspace: Path, naming: str) -> None:
    """The socket stands for the user's ssh-agent: a command that reaches
    it signs with the user's keys."""
    _settings(workspace / ".claude" / "settings.json", {"network": {"allowUnixSockets": True}})
    # under /var/tmp, which the sandbox shows (its /tmp is its own)
    where = Path(tempfile.mkdtemp(prefix="sg-agent-", dir="/var/tmp"))
    path = where / "agent.sock"
    with contextlib.ExitStack() as cleanup, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        cleanup.callback(shutil.rmtree, where, True)
        listener.bind(str(path))
        listener.listen(4)
        listener.settimeout(0.5)
        connect = (f"{PY} -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); "
                   f"s.settimeout(3); s.connect(sys.argv[1])' {shlex.quote(str(path))}")
        proc = sh(workspace, f"{connect}; echo ran > control.txt",
                  options=_naming(workspace, naming))
        consume_control(workspace, proc)
        try:
            conn, _ = listener.accept()
            conn.close()
            reached = True
        except TimeoutError:
            reached = False
    assert not reached, output(proc)


def test_a_settings_file_in_an_allowed_write_path_is_a_repositorys(
        workspace: Path, outside: Path, tmp_path: Path) -> None:
    """`--allow-write shared --settings shared/s.json`: a command may have
    written that file, so it may narrow, not widen."""
    shared = tmp_path / "shared"
    settings = _settings(shared / "s.json", {"filesystem": {"allowWrite": [str(outside)]}})
    proc = sh(workspace, f"echo planted > {shlex.quote(str(outside / 'planted'))}; "
                         "echo ran > control.txt",
              options=("--allow-write", str(shared), "--settings", str(settings)))
    consume_control(workspace, proc)
    assert not (outside / "planted").exists(), output(proc)


def test_the_users_own_settings_widen_the_sandbox_with_the_home_as_workspace(
        tmp_path: Path, outside: Path) -> None:
    """The user's file is the user's, even named by `--settings` with the
    home as the workspace (`--cwd ~`): the sandbox keeps it read-only, so
    no command wrote it. Its grant holds (the control of the tests above:
    the same grant from the user is applied)."""
    home = tmp_path / "home"
    home.mkdir()
    settings = _settings(home / ".claude" / "settings.json",
                         {"filesystem": {"allowWrite": [str(outside)]}})
    env = {**os.environ, "HOME": str(home)}
    proc = sh(home, f"echo planted > {shlex.quote(str(outside / 'planted'))}; "
                    "echo ran > control.txt", options=("--settings", str(settings)), env=env)
    consume_control(home, proc)
    require(proc.returncode == 0, "the run succeeded", proc)
    assert (outside / "planted").read_text() == "planted\n", output(proc)
    assert "repository" not in output(proc)
