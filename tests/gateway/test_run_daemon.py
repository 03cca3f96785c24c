"""`shellgate run`'s warm daemon: a real daemon process on a real unix
socket, reached by the real `shellgate run` command, running real
bubblewrap. A run through it must be the run in the client's own process
(output, status, stdin, messages, working directory), must stop when the
client is interrupted or killed, must never run a command twice, and must
serve only a client of its own user and state."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
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


def _same_but_time(ran: tuple[int, str, str]) -> tuple[int, str, str]:
    """A run's ending with the time a timeout took left out (`timed out
    after 1.0s` in one, 1.1s in the other, on a loaded machine)."""
    code, out, err = ran
    return code, out, re.sub(r"timed out after [0-9.]+s", "timed out after Ns", err)


def test_a_run_through_the_daemon_is_the_run_in_its_own_process(
        workspace: Path, runtime: Path) -> None:
    env = _env(runtime, SG_MARK="marked")
    _warm(env, workspace)
    alone = {**env, "SHELLGATE_RUN_DAEMON": "0"}
    for argv, stdin in CASES:
        expected = _same_but_time(_run(argv, alone, workspace, stdin))
        assert _same_but_time(_run(argv, env, workspace, stdin)) == expected, argv
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


def test_a_spare_rehearses_a_run_before_its_call_and_keeps_nothing_of_it(
        workspace: Path, runtime: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"  # the daemon's TMPDIR
    scratch.mkdir()
    env = _env(runtime, TMPDIR=str(scratch))
    _warm(env, workspace)
    (daemon,) = _daemons(runtime)[:1]
    assert _wait_for(lambda: len(daemon.children()) == 2)

    def read_anything(spare: psutil.Process) -> bool:
        # a fork's I/O counters start at zero: a spare that has read
        # nothing has not rehearsed (the run path reads the profile, the
        # mount table, ...). Where /proc refuses another process's counters
        # to a user (the unprivileged leg of the suite: not dumpable, its
        # interpreter unreadable to it), the rest is proved (threads,
        # processes, descriptors, leftovers); the root leg proves this too
        try:
            return spare.io_counters().read_chars > 0
        except psutil.AccessDenied:
            return os.geteuid() != 0

    def rehearsed() -> bool:
        # once done, a spare holds one thread and no process
        return all(read_anything(p) and p.num_threads() == 1 and not p.children()
                   for p in daemon.children())

    assert _wait_for(rehearsed)
    # one throwaway directory for the daemon and all its spares: the calls
    # that follow leave no cache of their own behind (from a review: a
    # directory per spare wrote a repository-walk cache per call)
    state = runtime / f"shellgate-{os.getuid()}"
    caches = sorted(state.glob("repos-*.json"))
    for _ in range(4):
        assert _run(["--", "true"], env, workspace)[0] == 0
    assert _wait_for(rehearsed)
    assert len(list(scratch.glob("shellgate-warm-*"))) == 1
    assert sorted(state.glob("repos-*.json")) == caches
    # and nothing a rehearsal opened is still open in a spare waiting for
    # its call: it holds only what it was forked with (the daemon's, less
    # the lock)

    def held(pid: int) -> Counter[str] | None:
        try:
            return Counter(os.readlink(f"/proc/{pid}/fd/{fd}")
                           for fd in os.listdir(f"/proc/{pid}/fd"))
        except PermissionError:  # as read_anything: the root leg looks
            assert os.geteuid() != 0
            return None

    forked_with = held(daemon.pid)
    for spare in daemon.children():
        holds = held(spare.pid)
        if holds is not None and forked_with is not None:
            assert list((holds - forked_with).elements()) == []
    # and the call that follows is served by a rehearsed spare as by any
    assert _run(["--", "sh", "-c", "echo $PWD"], env, workspace) == (0, f"{workspace}\n", "")
    # the daemon takes its throwaway directory with it when it leaves
    for sock in (runtime / "shellgate").glob("run-*.sock"):
        sock.unlink()
    assert _wait_for(lambda: not daemon.is_running())
    assert not list(scratch.glob("shellgate-warm-*"))


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
         f"sleep 2; echo yes > {marker}"], env=env, cwd=workspace)
    # A daemon slower than ACK_S to answer (a loaded machine) leaves the run
    # to the client's own process: the command must go with the client
    # either way, so the sandbox is looked for below both.
    host = psutil.Process(client.pid)
    assert _wait_for(lambda: _bwraps_below(daemon) or _bwraps_below(host))
    client.send_signal(how)
    assert client.wait(20) == status
    # the sandbox goes with it, and the command never finishes
    assert _wait_for(lambda: not _bwraps_below(daemon), within=10)
    time.sleep(2.5)
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
    mine = warm_client.facts()
    assert any(f.startswith("limits=") and "Max open files" in f for f in mine)
    for name in ("cgroup=", "personality=", "root=", "sched=", "attr/current="):
        assert any(f.startswith(name) for f in mine), name
    for field in ("NoNewPrivs", "Seccomp", "CapEff", "Uid", "Groups", "Cpus_allowed_list"):
        assert any(f.startswith(f"b'{field}:") for f in mine), field
    assert sum(f.startswith("ns/") and "unreadable" not in f for f in mine) >= 7
    assert warm_client.facts(os.getpid()) == mine  # read the same way for a peer
    code = ("import resource, sys; from gateway.cli import warm_client; "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
            "print(repr(warm_client.facts()))")
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
    right_key = warm_client.key(env, warm_client.facts())
    import socket

    for key, environ in ((right_key, other), ("0" * 32, {k.encode(): v.encode()
                                                          for k, v in env.items()})):
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(sock))
            assert conn.recv(1) == run_client.HELLO
            fds = [os.open("/dev/null", os.O_RDWR) for _ in range(3)]
            fds.append(os.open(workspace, os.O_RDONLY | os.O_DIRECTORY))
            data = run_client.request(words, environ, key)
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


_KNOCK = r"""
import os, socket, sys
sock_path, request_file, cwd = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX)
s.connect(sock_path)
s.settimeout(10)
hello = s.recv(1)
if hello != b"?":
    print("closed-unanswered")
    sys.exit(0)
fd = os.open(cwd, os.O_RDONLY | os.O_DIRECTORY)
data = open(request_file, "rb").read()
s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                    b"".join(f.to_bytes(4, sys.byteorder) for f in (0, 1, 2, fd)))])
reply = b""
while True:
    chunk = s.recv(256)
    if not chunk:
        break
    reply += chunk
print("reply", reply)
"""


def test_a_sandboxed_command_that_reaches_a_daemon_gets_no_run_from_it(
        workspace: Path, runtime: Path, tmp_path: Path) -> None:
    """Attack (from a review): a daemon whose runtime directory is not the
    one a run hides (another environment's) is visible to a command in a
    sandbox with unix sockets allowed; it sent a request in the daemon's
    environment (no secret) asking for a run with a host directory writable,
    and had a file written there. The daemon now checks, from /proc, that
    its client is in its own namespaces and state. The control: the same
    request from the host is run."""
    env = _env(runtime)
    sock = _warm(env, workspace)
    victim = Path(tempfile.mkdtemp(prefix="sg-victim-", dir="/var/tmp"))
    try:
        words = ["run", "--cwd", str(victim), "--allow-write", str(victim), "--", "sh", "-c",
                 "echo pwned > pwned"]
        environ = {k.encode(): v.encode() for k, v in env.items()}
        key = subprocess.run([sys.executable, "-c", "import os; from gateway.cli import "
                              "run_client, warm_client; print(warm_client.key(os.environ, "
                              "warm_client.facts()))"], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
        request = workspace / "request.bin"
        request.write_bytes(run_client.request(words, environ, key))
        (workspace / "knock.py").write_text(_KNOCK)
        settings = tmp_path / "settings.json"
        settings.write_text('{"sandbox": {"network": {"allowUnixSockets": true}}}')
        # the sandboxed command runs in its own process, with another
        # runtime directory: the daemon's is not hidden from it
        other = {**env, "SHELLGATE_RUN_DAEMON": "0", "XDG_RUNTIME_DIR": str(tmp_path)}
        code, out, err = _run(["--settings", str(settings), "--", "python3", "knock.py",
                               str(sock), "request.bin", "."], other, workspace)
        assert code == 0, err
        assert out.split() == ["closed-unanswered"]
        assert not (victim / "pwned").exists()
        # the control: from the host, the same request is run
        control = subprocess.run(["python3", "knock.py", str(sock), "request.bin", "."],
                                 cwd=workspace, capture_output=True, text=True, timeout=60,
                                 check=True)
        assert "reply b'+=0" in control.stdout, control.stdout
        assert (victim / "pwned").read_text() == "pwned\n"
    finally:
        shutil.rmtree(victim, ignore_errors=True)


_FAKE = r"""
import os, socket, sys
path, log = sys.argv[1:3]
l = socket.socket(socket.AF_UNIX)
l.bind(path)
l.listen(4)
with open(log, "w") as out:
    out.write("listening\n")
while True:
    conn, _ = l.accept()
    conn.settimeout(3)
    try:
        conn.sendall(b"?")  # a client that closed at once: a broken pipe here
        data, anc, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(64))
    except OSError:
        data, anc = b"", []
    with open(log, "a") as out:
        out.write(f"request {len(data)} bytes, {len(anc)} fds\n")
    for _, _, payload in anc:  # the client's streams: not kept open
        for i in range(0, len(payload) - 3, 4):
            os.close(int.from_bytes(payload[i:i + 4], sys.byteorder))
    try:
        conn.sendall(b"-not today\n")
    except OSError:
        pass
    conn.close()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a mount namespace")
@pytest.mark.parametrize("namespace", ["another mount namespace", "the client's own"])
def test_a_client_sends_nothing_to_a_daemon_in_another_state(
        workspace: Path, runtime: Path, tmp_path: Path, namespace: str) -> None:
    """Attack (from a review): a command in a sandbox renamed the runtime
    directory's parent away, made its own, and bound a socket where the
    next client looked; the client sent it its standard streams and its
    working directory (a host descriptor: `openat(cwd, "../../..")` wrote
    the host's root). The client now checks, from /proc, that the daemon is
    in its own namespaces and state before it sends anything. The control:
    a fake in the client's own namespaces is sent the request (and refuses
    it: the run happens in the client's own process)."""
    env = _env(runtime)
    where = subprocess.run([sys.executable, "-c", "import os; from gateway.cli import "
                            "run_client, warm_client; print(warm_client.address(os.environ, "
                            "'run', warm_client.facts()))"], env=env, capture_output=True,
                           text=True, check=True).stdout.strip()
    fake, log = tmp_path / "fake.py", tmp_path / "fake.log"
    fake.write_text(_FAKE)
    prefix = ["unshare", "--mount"] if namespace == "another mount namespace" else []
    server = subprocess.Popen([*prefix, sys.executable, str(fake), where, str(log)])
    try:
        # listening, not only bound: a connect in between is refused, and
        # the client would then start a daemon of its own
        assert _wait_for(lambda: log.exists() and "listening" in log.read_text())
        code, out, _ = _run(["--", "sh", "-c", "echo ran here"], env, workspace)
        assert (code, out) == (0, "ran here\n")  # in the client's own process
        def requests() -> list[str]:
            return [line for line in log.read_text().splitlines() if line.startswith("request")]

        # the client connected (the fake logs once it has read the connection)
        assert _wait_for(requests, within=10)
        got = requests()
        if prefix:
            assert set(got) == {"request 0 bytes, 0 fds"}  # and closed it unsent
        else:
            assert got[0] != "request 0 bytes, 0 fds" and got[0].endswith(", 1 fds"), got
    finally:
        server.kill()
        server.wait()


def test_a_client_under_no_new_privileges_runs_in_its_own_process(
        workspace: Path, runtime: Path) -> None:
    """Landlock (which /proc does not show) needs no-new-privileges for
    anyone but root: such a client is not served (from a review: a client
    confined by Landlock wrote, through an unconfined daemon, a file its own
    process could not)."""
    env = _env(runtime)
    _warm(env, workspace)
    client = subprocess.Popen(["setpriv", "--no-new-privs", sys.executable, "-m", "gateway",
                               "run", "--", "sleep", "2"], env=env, cwd=workspace)
    try:
        assert _wait_for(lambda: _bwraps_below(psutil.Process(client.pid)))
    finally:
        assert client.wait(30) == 0


def test_a_spare_reaped_before_its_news_is_not_counted_busy(tmp_path: Path) -> None:
    """From a review: a child that took a call and exited before the daemon
    read its news was reaped first, then counted busy for ever; a flood of
    short calls filled the daemon with such phantoms, and it served no more."""
    import struct
    from types import SimpleNamespace

    from gateway.cli import warm_daemon

    lock = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    daemon = warm_daemon.Daemon(str(tmp_path / "x.sock"), 1.0,
                                SimpleNamespace(MAX_CHILDREN=4), lock)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    daemon.spares.add(pid)

    def reaped() -> bool:
        daemon.reap()
        return pid not in daemon.spares

    assert _wait_for(reaped)
    daemon.took(struct.pack("i", pid))  # its news, read after the reap
    assert pid not in daemon.busy
    assert not daemon.spares
    os.close(lock)
