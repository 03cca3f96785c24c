"""`shellgate check`'s warm daemon: a real daemon on a real unix socket,
reached by the real `shellgate check` command. A check through it must be
the check in the client's own process — verdict, output, exit status, the
workspace's facts read afresh from the client's working directory — and
the client must not have loaded the analyzer at all. A daemon serves its
own verb only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gateway.cli import run_client, warm_client


def _env(runtime: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "SHELLGATE_CHECK_DAEMON": "1",
            **extra}


def _check(args: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"",
           ) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "gateway", "check", *args], input=stdin,
                          capture_output=True, env=env, cwd=cwd, timeout=120, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _warm(env: dict[str, str], cwd: Path) -> Path:
    """A first check (it starts the daemon), then wait until it listens."""
    _check(["true"], env, cwd)
    here = Path(env["XDG_RUNTIME_DIR"]) / "shellgate"
    deadline = time.monotonic() + 60
    while not list(here.glob("check-*.sock")):
        assert time.monotonic() < deadline, "the check daemon did not start"
        time.sleep(0.05)
    time.sleep(0.5)  # its spares
    (sock,) = here.glob("check-*.sock")
    return sock


CASES = [
    (["git log --oneline -5"], b""),
    (["--json", "cat notes.txt | grep -c x"], b""),
    (["rm -rf /"], b""),
    (["cat k"], b""),  # k is a link to /etc/shadow: the client's cwd is the one read
    (["cat", ".env"], b""),
    (["sed -i s/a/b/ notes.txt"], b""),
    (["--jsonl"], b'{"command": "ls"}\n"cat k"\nnot json\n{"command": "curl x | sh"}\n'),
    (["--cwd", "sub", "cat ../k"], b""),
    ([], b""),  # a usage error
    (["--no-such-flag", "ls"], b""),
]


def test_a_check_through_the_daemon_is_the_check_in_its_own_process(
        workspace: Path, runtime: Path) -> None:
    (workspace / "notes.txt").write_text("x\n")
    (workspace / "k").symlink_to("/etc/shadow")
    (workspace / ".env").write_text("TOKEN=1\n")
    (workspace / "sub").mkdir()
    env = _env(runtime)
    _warm(env, workspace)
    alone = {**env, "SHELLGATE_CHECK_DAEMON": "0"}
    seen = []
    for args, stdin in CASES:
        expected = _check(args, alone, workspace, stdin)
        assert _check(args, env, workspace, stdin) == expected, args
        seen.append(expected)
    # every kind of ending was compared: each verdict, a stream, a usage error
    out = "".join(o for _, o, _ in seen)
    assert all(word in out for word in ("ALLOW", "ASK", "DENY", '"line": 3'))
    assert {code for code, _, _ in seen} == {0, 2}


@pytest.mark.parametrize(("daemon", "loaded"), [("1", False), ("0", True)],
                         ids=["through the daemon", "the control: in its own process"])
def test_the_client_never_loads_the_analyzer(workspace: Path, runtime: Path, daemon: str,
                                             loaded: bool) -> None:
    env = _env(runtime)
    _warm(env, workspace)
    # a stream kept open: the client is there to be looked at, and its
    # answer to the first line proves the call is being served
    client = subprocess.Popen([sys.executable, "-m", "gateway", "check", "--jsonl"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env={**env, "SHELLGATE_CHECK_DAEMON": daemon}, cwd=workspace)
    assert client.stdin is not None and client.stdout is not None
    try:
        client.stdin.write(b'"ls"\n')
        client.stdin.flush()
        assert json.loads(client.stdout.readline())["line"] == 1
        maps = Path(f"/proc/{client.pid}/maps").read_text()
        assert ("tree_sitter" in maps) == loaded  # the grammar's library
    finally:
        client.stdin.close()
        assert client.wait(30) == 0


@pytest.mark.parametrize(("service", "words", "served"), [
    ("check", ["check", "ls"], True),
    ("check", ["run", "--", "true"], False),
    ("check", ["hook"], False),
])
def test_a_daemon_serves_its_own_verb_only(workspace: Path, runtime: Path, service: str,
                                           words: list[str], served: bool,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(runtime)
    where = _warm(env, workspace)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(workspace)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    null = os.open(os.devnull, os.O_RDWR)
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    try:
        for fd in (0, 1, 2):
            os.dup2(null, fd)  # the served call writes to this process's streams
        status = run_client._call(sock, str(where), words, warm_client.facts(), service)
    finally:
        for fd, old in zip((0, 1, 2), saved, strict=True):
            os.dup2(old, fd)
            os.close(old)
        os.close(null)
        sock.close()
    assert (status is not None) == served
