"""`shellgate run`'s warm daemon: a real daemon process on a real unix
socket, reached by the real `shellgate run` command, running real
bubblewrap. A run through it must be the run in the client's own process
(output, status, stdin, messages, working directory), must stop when the
client is interrupted or killed, must never run a command twice, and must
serve only a client of its own user and state."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from gateway.cli import run_client, warm_client

pytestmark = pytest.mark.sandbox


def _env(runtime: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "SHELLGATE_RUN_DAEMON": "1",
            **extra}


def _run(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"",
         ) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "gateway", "run", *argv], input=stdin,
                          capture_output=True, env=env, cwd=cwd, timeout=120, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _daemons(runtime: Path) -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            line = proc.info["cmdline"] or []
            if "gateway.cli.warm_daemon" in line and any(str(runtime) in p for p in line):
                out.append(proc)
    return out


def _warm(env: dict[str, str], cwd: Path) -> Path:
    """A first run (it starts the daemon), then wait until it listens."""
    _run(["--", "true"], env, cwd)
    here = Path(env["XDG_RUNTIME_DIR"]) / "shellgate"
    deadline = time.monotonic() + 60
    while not list(here.glob("run-*.sock")):
        assert time.monotonic() < deadline, "the run daemon did not start"
        time.sleep(0.05)
    time.sleep(0.5)  # its spares
    (sock,) = here.glob("run-*.sock")
    return sock


def _bwraps_below(proc: psutil.Process) -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        return [p for p in proc.children(recursive=True) if p.name() == "bwrap"]
    return []


def _wait_for(predicate: object, within: float = 20.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


CASES = [
    (["--", "sh", "-c", "echo out; echo err >&2; exit 3"], b""),
    (["--", "cat"], b"piped in\nand more\n"),
    (["--", "pwd"], b""),
    (["--", "sh", "-c", 'echo "$SG_MARK"'], b""),
    (["--", "nonexistent-command-sg"], b""),
    (["--timeout", "1", "--", "sleep", "5"], b""),
    (["--", "sh", "-c", "echo x > /etc/sg-daemon-test"], b""),
    (["--", "sh", "-c", "umask"], b""),
    ([], b""),  # a usage error
    (["--memory", "nonsense", "--", "true"], b""),
]


def test_a_run_through_the_daemon_is_the_run_in_its_own_process(
        workspace: Path, runtime: Path) -> None:
    env = _env(runtime, SG_MARK="marked")
    _warm(env, workspace)
    alone = {**env, "SHELLGATE_RUN_DAEMON": "0"}
    for argv, stdin in CASES:
        expected = _run(argv, alone, workspace, stdin)
        assert _run(argv, env, workspace, stdin) == expected, argv
    assert not Path("/etc/sg-daemon-test").exists()
    assert {_run(argv, alone, workspace, stdin)[0] for argv, stdin in CASES} >= {
        0, 2, 3, 124, 125, 127}  # every kind of ending was compared


def test_the_command_runs_under_the_daemon_not_the_client(
        workspace: Path, runtime: Path) -> None:
    env = _env(runtime)
    _warm(env, workspace)
    (daemon,) = _daemons(runtime)[:1]
    client = subprocess.Popen([sys.executable, "-m", "gateway", "run", "--", "sleep", "3"],
                              env=env, cwd=workspace)
    try:
        assert _wait_for(lambda: _bwraps_below(daemon))
        assert not _bwraps_below(psutil.Process(client.pid))
    finally:
        assert client.wait(30) == 0


@pytest.mark.parametrize(("how", "status"), [(signal.SIGINT, 130), (signal.SIGKILL, -9),
                                             (signal.SIGTERM, -15), (signal.SIGHUP, -1)])
def test_an_interrupted_or_killed_client_takes_its_command_with_it(
        workspace: Path, runtime: Path, how: signal.Signals, status: int) -> None:
    env = _env(runtime)
    _warm(env, workspace)
    (daemon,) = _daemons(runtime)[:1]
    marker = workspace / "survived"
    client = subprocess.Popen(
        [sys.executable, "-m", "gateway", "run", "--", "sh", "-c",
         f"sleep 4; echo yes > {marker}"], env=env, cwd=workspace)
    assert _wait_for(lambda: _bwraps_below(daemon))
    client.send_signal(how)
    assert client.wait(20) == status
    # the sandbox goes with it, and the command never finishes
    assert _wait_for(lambda: not _bwraps_below(daemon), within=10)
    time.sleep(4.5)
    assert not marker.exists()


def test_a_stopped_daemon_costs_a_second_and_runs_the_command_once(
        workspace: Path, runtime: Path) -> None:
    env = _env(runtime)
    _warm(env, workspace)
    stopped = [p for d in _daemons(runtime) for p in (d, *d.children())]
    for proc in stopped:
        proc.suspend()
    count = workspace / "count"
    try:
        started = time.monotonic()
        code, _, err = _run(["--", "sh", "-c", f"echo ran >> {count}"], env, workspace)
        assert code == 0, err
        assert time.monotonic() - started >= warm_client.ACK_S
    finally:
        for proc in stopped:
            with contextlib.suppress(psutil.Error):
                proc.resume()
    # the call that waited in the backlog is taken by a spare now: it must
    # not run the command a second time
    time.sleep(3)
    assert count.read_text() == "ran\n"


def test_a_client_with_lower_limits_is_not_served_by_a_daemon_with_higher_ones(
        workspace: Path, runtime: Path) -> None:
    env = _env(runtime)
    _warm(env, workspace)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    lower = min(soft, 200)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (lower, lower))

    done = subprocess.run([sys.executable, "-m", "gateway", "run", "--", "sh", "-c",
                           "ulimit -n"], env=env, cwd=workspace, capture_output=True,
                          preexec_fn=limited, timeout=120, check=True)
    assert done.stdout.decode().strip() == str(lower)
    # another state, another daemon's name (started for the next such call)
    assert _wait_for(lambda: len(list((runtime / "shellgate").glob("run-*.started"))) == 2)


def test_the_facts_name_what_a_child_inherits() -> None:
    mine = run_client.facts()
    assert any(f.startswith("RLIMIT_NOFILE=") for f in mine)
    assert any(f.startswith("cgroup=") for f in mine)
    assert any("NoNewPrivs" in f for f in mine)
    assert sum(f.startswith("ns=") for f in mine) >= 7
    code = ("import resource, sys; from gateway.cli import run_client; "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
            "print(repr(run_client.facts()))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout
    assert eval(other) != mine  # our own repr


def test_the_socket_is_hidden_from_sandboxed_commands(workspace: Path, runtime: Path) -> None:
    env = _env(runtime)
    sock = _warm(env, workspace)
    assert sock.exists()  # the control: it is there on the host
    code, out, _ = _run(["--", "sh", "-c", f"test -e {sock} && echo visible || echo hidden;"
                         f" ls -A {sock.parent} 2>/dev/null"], env, workspace)
    assert code == 0
    assert out.split() == ["hidden"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_another_user_cannot_reach_the_daemon(workspace: Path, runtime: Path) -> None:
    env = _env(runtime)
    sock = _warm(env, workspace)
    probe = ("import os, socket, sys\nos.setgid(65534); os.setuid(65534)\n"
             "s = socket.socket(socket.AF_UNIX)\n"
             "try:\n    s.connect(sys.argv[1])\nexcept PermissionError:\n    sys.exit(3)\n"
             "sys.exit(0)")
    assert subprocess.run([sys.executable, "-c", probe, str(sock)], check=False).returncode == 3
    mine = probe.replace("os.setgid(65534); os.setuid(65534)", "pass")
    assert subprocess.run([sys.executable, "-c", mine, str(sock)], check=False).returncode == 0


def test_a_request_of_another_environment_is_refused_unrun(
        workspace: Path, runtime: Path) -> None:
    env = _env(runtime)
    sock = _warm(env, workspace)
    marker = workspace / "ran"
    words = ["run", "--", "sh", "-c", f"echo x > {marker}"]
    other = {k.encode(): v.encode() for k, v in env.items()} | {b"HOME": b"/nonexistent"}
    right_key = warm_client.key(env, run_client.facts())
    import socket

    for key, environ in ((right_key, other), ("0" * 32, {k.encode(): v.encode()
                                                          for k, v in env.items()})):
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(sock))
            assert conn.recv(1) == run_client.HELLO
            fds = [os.open("/dev/null", os.O_RDWR) for _ in range(3)]
            fds.append(os.open(workspace, os.O_RDONLY | os.O_DIRECTORY))
            data = run_client.request(words, environ, key, 0o22)
            conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                   b"".join(f.to_bytes(4, sys.byteorder) for f in fds))])
            for fd in fds:
                os.close(fd)
            reply = conn.recv(256)
        assert reply.startswith(run_client.REFUSED), reply
    time.sleep(0.5)
    assert not marker.exists()


@pytest.mark.parametrize("daemon", ["1", "0"])
def test_a_host_rename_of_a_protected_file_stops_a_run_through_the_daemon(
        workspace: Path, runtime: Path, daemon: str) -> None:
    """The host-path watch (sandbox/linux/watch.py) works in the daemon's
    children: it is one inotify instance per process, and a child forked
    with the daemon's would arm watches no thread reads. The in-process
    run is the control."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    env = _env(runtime, SHELLGATE_RUN_DAEMON=daemon)
    if daemon == "1":
        _warm(env, workspace)
    client = subprocess.Popen([sys.executable, "-m", "gateway", "run", "--", "sh", "-c",
                               "touch started; sleep 20"], env=env, cwd=workspace,
                              stderr=subprocess.PIPE)
    assert _wait_for((workspace / "started").exists)
    # served where it is meant to be: the daemon's child, or this client
    assert bool(_bwraps_below(psutil.Process(client.pid))) == (daemon == "0")
    time.sleep(0.3)
    subprocess.run(["git", "-C", str(workspace), "config", "user.name", "on the host"],
                   check=True)
    _, err = client.communicate(timeout=20)
    assert b"was replaced or removed during the run" in err
