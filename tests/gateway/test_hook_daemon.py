"""`shellgate hook`'s warm daemon: a real daemon process on a real unix
socket, reached by the real hook command. It must answer as the
in-process judgement does, see each settings change, keep its socket to
its user, leave when idle or replaced, and never make the hook answer
less strictly when it is stale, stopped or talking nonsense."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from gateway.cli import hook_client, warm_client, warm_sources

pytestmark = pytest.mark.sandbox  # the file tools' policy is the sandbox's plan


def _env(tmp_path: Path, runtime: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "SHELLGATE_AUDIT_LOG": str(tmp_path / "audit"),
           "XDG_RUNTIME_DIR": str(runtime), "SHELLGATE_HOOK_DAEMON": "1"}
    env.pop("CLAUDE_PROJECT_DIR", None)
    return {**env, **extra}


def _call(tool: str, tool_input: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01"}


def _hook(payload: Any, env: dict[str, str]) -> dict[str, Any] | None:
    done = subprocess.run([sys.executable, "-m", "gateway", "hook"],
                          input=json.dumps(payload).encode(), capture_output=True,
                          timeout=90, env=env, check=True)
    out = done.stdout.decode().strip()
    return json.loads(out) if out else None


def _decision(answer: Any) -> str | None:
    return None if answer is None else str(answer["hookSpecificOutput"]["permissionDecision"])


def _socket(env: dict[str, str]) -> Path:
    where = hook_client.address(env)
    assert where is not None
    return Path(where)


def _warm(payload: dict[str, Any], env: dict[str, str]) -> Path:
    """Make a first call (it starts the daemon) and wait until it listens."""
    _hook(payload, env)
    where = _socket(env)
    deadline = time.monotonic() + 60
    while not where.exists():
        assert time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.05)
    return where


def _ask(payload: dict[str, Any], env: dict[str, str]) -> object:
    """The daemon's own message (raises Absent when it gives none). On a
    loaded machine (the suite runs on several workers) a child may take
    longer than the client's short wait to say it took the call; the hook
    then answers in its own process, which is right but not what these
    tests look at: asked again, a few times."""
    for _ in range(3):
        try:
            return hook_client.ask(payload, time.monotonic() + 20, env)
        except hook_client.Absent as exc:
            if "did not take the call" not in str(exc):
                raise
    return hook_client.ask(payload, time.monotonic() + 20, env)


def _settled(where: Path, pattern: str) -> list[Path]:
    """The files matching ``pattern`` once none came or went for a second
    (on a loaded machine the daemon's spares take longer to warm up)."""
    deadline = time.monotonic() + 30
    seen = sorted(where.glob(pattern))
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = sorted(where.glob(pattern))
        if now == seen:
            return now
        seen = now
    return seen


def _daemon_pids(runtime: Path) -> list[int]:
    out = []
    for proc in psutil.process_iter(["cmdline", "ppid"]):
        with contextlib.suppress(psutil.Error):
            line = proc.info["cmdline"] or []
            if any(str(runtime) in p for p in line) and "gateway.cli.warm_daemon" in line:
                out.append(proc.pid)
    return out


def _gone(runtime: Path, where: Path, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not where.exists() and not _daemon_pids(runtime):
            return True
        time.sleep(0.1)
    return False


def test_the_daemon_answers_every_call_as_the_hook_does_in_its_own_process(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    home = Path(env["HOME"])
    cases = [
        ("Bash", {"command": "git status; ls -la"}),
        ("Bash", {"command": "npm test"}),
        ("Bash", {"command": "cat ~/.ssh/id_rsa"}),
        ("Bash", {"command": "rm -rf ~"}),
        ("Read", {"file_path": str(workspace / "README.md")}),
        ("Read", {"file_path": str(home / ".ssh" / "id_rsa")}),
        ("Write", {"file_path": str(workspace / ".git" / "hooks" / "pre-commit"),
                   "content": "x"}),
        ("Glob", {"pattern": "**/*.md"}),
        ("Glob", {"pattern": "keys/*"}),  # through a link out of the project
        ("Grep", {"pattern": "KEY", "glob": ".env"}),
        ("WebFetch", {"url": "http://169.254.169.254/latest/meta-data/", "prompt": "p"}),
        # the answers only the hook gives: what the host runs, what only the
        # sandbox hides, what the environment changes, a credential by content
        ("Write", {"file_path": str(home / ".bashrc"), "content": "x"}),
        ("Bash", {"command": "sort -o ~/.bashrc README.md"}),
        ("Bash", {"command": "git config core.pager less"}),
        ("Bash", {"command": "ps aux"}),
        ("Bash", {"command": "hostname -I"}),
        ("Bash", {"command": "cat creds.inc"}),
        ("Read", {"file_path": str(workspace / "creds.inc")}),
        ("mcp__srv__tool", {"x": 1}),
        ("WebFetch", {"url": "http://localhost:8080/", "prompt": "p"}),
        ("Write", {"file_path": str(workspace / "notes.txt"), "content": "x"}),  # a hard link
        ("Bash", {"command": "cat *.md"}),  # dotglob on in ~/.bashrc
    ]
    (workspace / "notes.txt").write_text("n\n")
    os.link(workspace / "notes.txt", workspace / "other-name.txt")
    (home / ".bashrc").write_text("shopt -s dotglob\n")
    (workspace / ".env").write_text("KEY=1\n")
    (workspace / "keys").symlink_to(home / ".ssh")
    (workspace / "creds.inc").write_text("[http]\n\tproxy = http://u:pw@p:1\n")
    _warm(_call("Bash", {"command": "true"}, workspace), env)
    alone = {**env, "SHELLGATE_HOOK_DAEMON": "0"}
    seen = set()
    for tool, data in cases:
        call = _call(tool, data, workspace)
        message = _ask(call, env)
        assert isinstance(message, dict) and "answer" in message, message
        expected = _hook(call, alone)
        assert message["answer"] == expected, (tool, data)
        assert _hook(call, env) == expected  # the hook, through the daemon
        seen.add(_decision(expected))
    assert seen == {"allow", "deny", "ask", None}  # every kind of answer was compared


def test_the_socket_and_its_directory_are_the_users_alone(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = _warm(_call("Bash", {"command": "true"}, workspace), env)
    assert stat.S_IMODE(where.parent.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(where.lstat().st_mode)
    assert stat.S_IMODE(where.lstat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_another_user_cannot_reach_the_daemon(workspace: Path, tmp_path: Path,
                                              runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = _warm(_call("Bash", {"command": "true"}, workspace), env)
    probe = ("import os, socket, sys\nos.setgid(65534); os.setuid(65534)\n"
             "s = socket.socket(socket.AF_UNIX)\n"
             "try:\n    s.connect(sys.argv[1])\nexcept PermissionError:\n    sys.exit(3)\n"
             "sys.exit(0)")
    control = subprocess.run([sys.executable, "-c", probe, str(where)], check=False)
    assert control.returncode == 3
    # the control: the same probe as the daemon's own user connects
    mine = subprocess.run([sys.executable, "-c", probe.replace(
        "os.setgid(65534); os.setuid(65534)", "pass"), str(where)], check=False)
    assert mine.returncode == 0


@pytest.mark.parametrize("mode", [0o755, 0o711, 0o777])
def test_a_runtime_directory_others_may_enter_gets_no_daemon(
        workspace: Path, tmp_path: Path, runtime: Path, mode: int) -> None:
    runtime.chmod(mode)
    env = _env(tmp_path, runtime)
    assert hook_client.address(env) is None
    call = _call("Bash", {"command": "cat ~/.ssh/id_rsa"}, workspace)
    assert _decision(_hook(call, env)) == "deny"  # judged in its own process
    time.sleep(0.5)
    assert not list(runtime.rglob("*.sock")) and not _daemon_pids(runtime)


def test_a_settings_change_is_seen_by_the_next_call(workspace: Path, tmp_path: Path,
                                                    runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    call = _call("Bash", {"command": "git log --oneline -5"}, workspace)
    _warm(call, env)
    before = _ask(call, env)
    assert isinstance(before, dict) and _decision(before["answer"]) == "allow"
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(git log:*)"]}}))
    after = _ask(call, env)
    assert isinstance(after, dict) and _decision(after["answer"]) == "deny"
    assert "Bash(git log:*)" in after["answer"]["hookSpecificOutput"][
        "permissionDecisionReason"]


def test_the_daemon_leaves_when_idle(workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime, SHELLGATE_HOOK_DAEMON_IDLE="1")
    where = _warm(_call("Bash", {"command": "true"}, workspace), env)
    assert _gone(runtime, where, within=20)


def test_the_daemon_leaves_when_its_socket_is_removed_or_replaced(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = _warm(_call("Bash", {"command": "true"}, workspace), env)
    assert _daemon_pids(runtime)
    where.unlink()
    where.write_text("not a socket")  # replaced by something else
    deadline = time.monotonic() + 20
    while _daemon_pids(runtime):
        assert time.monotonic() < deadline, "the daemon stayed"
        time.sleep(0.1)
    assert where.read_text() == "not a socket"  # it did not remove what is not its own


def test_a_client_of_another_version_gets_no_answer(workspace: Path, tmp_path: Path,
                                                    runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = _warm(_call("Bash", {"command": "true"}, workspace), env)
    request = {"protocol": hook_client.PROTOCOL, "version": "0.0.1",
               "key": hook_client.key(env), "cwd": str(workspace),
               "umask": 0o22, "deadline": 10,
               "payload": _call("Bash", {"command": "ls"}, workspace)}
    for wrong in (request, {**request, "version": hook_client.VERSION, "protocol": 99},
                  {**request, "version": hook_client.VERSION, "key": "0" * 32}):
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(20)
            sock.connect(str(where))
            sock.sendall(json.dumps(wrong).encode() + b"\n")
            sock.shutdown(socket.SHUT_WR)
            reply = json.loads(sock.makefile("rb").read().removeprefix(hook_client.ACK))
        assert "stale" in reply and "answer" not in reply
    right = {**request, "version": hook_client.VERSION}
    with socket.socket(socket.AF_UNIX) as sock:  # the control
        sock.settimeout(20)
        sock.connect(str(where))
        sock.sendall(json.dumps(right).encode() + b"\n")
        sock.shutdown(socket.SHUT_WR)
        assert "answer" in json.loads(sock.makefile("rb").read().removeprefix(hook_client.ACK))


def test_the_version_the_client_sends_is_the_installed_one() -> None:
    assert importlib.metadata.version("shellgate") == hook_client.VERSION


def test_a_changed_package_file_makes_the_daemon_stale(workspace: Path, tmp_path: Path,
                                                       runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    call = _call("Bash", {"command": "ls"}, workspace)
    where = _warm(call, env)
    assert isinstance(_ask(call, env), dict)
    data = Path(warm_client.PACKAGE_ROOT) / "profiles" / "sensitive-paths.toml"
    st = data.stat()
    try:
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        with pytest.raises(hook_client.Absent):
            _ask(call, env)
        assert _gone(runtime, where, within=20)
    finally:
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _decision(_hook(call, env)) == "allow"  # and the hook still answers


def test_a_stopped_daemon_costs_time_but_not_the_answer(workspace: Path, tmp_path: Path,
                                                        runtime: Path) -> None:
    env = _env(tmp_path, runtime, SHELLGATE_HOOK_TIMEOUT="6")
    call = _call("Bash", {"command": "cat ~/.ssh/id_rsa"}, workspace)
    _warm(call, env)
    pids = _daemon_pids(runtime)
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    # a spare the daemon was forking as it was stopped is stopped too (seen
    # under load: it took one call, and that call did not wait)
    time.sleep(0.2)
    for pid in set(_daemon_pids(runtime)) - set(pids):
        os.kill(pid, signal.SIGSTOP)
        pids.append(pid)
    try:
        started = time.monotonic()
        assert _decision(_hook(call, env)) == "deny"
        assert _decision(_hook(_call("Bash", {"command": "ls"}, workspace), env)) == "allow"
        # it did ask the daemon, and waited for a child to take each call
        assert time.monotonic() - started >= 2 * hook_client.ACK_S
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("reply", [
    b"", b"garbage\n", b'{"answer": {"hookSpecificOutput": {"permissionDecision": "allow"}}}\n',
    b'{"answer": "allow"}\n', b'{"stale": "x"}\n', b'{"busy": "x"}\n',
    b'{"error": "boom"}\n', b"[" * 100000, b"+", b"+garbage",
    b'+{"answer": {"hookSpecificOutput": {"permissionDecision": "allow"}}}\n',
    b'+{"answer": "allow"}\n', b'+{"stale": "x"}\n', b'+{"error": "boom"}\n',
    b"+" + b"[" * 100000, b"+" + b" " * (5 << 20),
])
def test_a_daemon_talking_nonsense_is_not_believed(workspace: Path, tmp_path: Path,
                                                   runtime: Path, reply: bytes) -> None:
    env = _env(tmp_path, runtime)
    where = _socket(env)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(where))
    server.listen(8)
    served = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = server.accept()
                with conn:
                    conn.recv(1 << 20)
                    served.append(1)
                    conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        answer = _hook(_call("Bash", {"command": "cat ~/.ssh/id_rsa"}, workspace), env)
        assert _decision(answer) == "deny"  # judged in the hook's own process
        assert answer is not None
        assert "sensitive" in answer["hookSpecificOutput"]["permissionDecisionReason"]
        assert served  # the control: the fake daemon was asked
    finally:
        server.close()


def test_only_one_daemon_serves_a_socket(workspace: Path, tmp_path: Path,
                                         runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = str(_socket(env))
    argv = [sys.executable, "-P", "-m", "gateway.cli.warm_daemon", "hook", where]
    first = subprocess.Popen(argv, env=env, cwd="/")
    try:
        deadline = time.monotonic() + 60
        while not Path(where).exists():
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        second = subprocess.run(argv, env=env, cwd="/", timeout=60, check=False)
        assert second.returncode == 0  # it found the lock taken, and left
        assert first.poll() is None
    finally:
        first.terminate()
        first.wait(timeout=20)
    assert not Path(where).exists()  # the daemon took its socket with it


def test_a_daemon_started_for_another_environment_refuses_to_serve(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = str(_socket(env))
    other = {**env, "HOME": str(tmp_path)}  # judged with another home
    done = subprocess.run([sys.executable, "-P", "-m", "gateway.cli.warm_daemon", "hook", where],
                          env=other, cwd="/", timeout=60, check=False)
    assert done.returncode == 2 and not Path(where).exists()


def test_the_daemon_judges_relative_audit_paths_from_the_callers_directory(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime, SHELLGATE_AUDIT_LOG="audit-here.jsonl")
    call = _call("Bash", {"command": "ls"}, workspace)
    subprocess.run([sys.executable, "-m", "gateway", "hook"], input=json.dumps(call).encode(),
                   capture_output=True, env=env, cwd=workspace, check=True, timeout=90)
    where = _socket(env)
    deadline = time.monotonic() + 60
    while not where.exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    (workspace / "audit-here.jsonl").unlink()
    done = subprocess.run([sys.executable, "-m", "gateway", "hook"],
                          input=json.dumps(call).encode(), capture_output=True, env=env,
                          cwd=workspace, check=True, timeout=90)
    assert _decision(json.loads(done.stdout)) == "allow"
    assert "permission.decided" in (workspace / "audit-here.jsonl").read_text()
    assert warm_sources.fingerprint()  # the package's files are seen


def test_a_fifo_planted_beside_the_socket_does_not_hang_the_hook(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime, SHELLGATE_HOOK_TIMEOUT="8")
    where = _socket(env)
    where.parent.mkdir(mode=0o700, exist_ok=True)
    os.mkfifo(str(where).removesuffix(".sock") + ".started")
    started = time.monotonic()
    answer = _hook(_call("Bash", {"command": "cat ~/.ssh/id_rsa"}, workspace), env)
    assert _decision(answer) == "deny"
    assert time.monotonic() - started < 8  # answered before its deadline
    assert not where.exists()  # and no daemon was started through the FIFO


def test_spares_do_not_outlive_a_daemon_killed_as_it_starts(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = _socket(env)
    argv = [sys.executable, "-P", "-m", "gateway.cli.warm_daemon", "hook", str(where)]
    daemon = subprocess.Popen(argv, env=env, cwd="/")
    deadline = time.monotonic() + 60
    while not where.exists():
        assert time.monotonic() < deadline and daemon.poll() is None
        time.sleep(0.005)
    daemon.kill()  # while its spares warm up
    daemon.wait()
    deadline = time.monotonic() + 20
    while _daemon_pids(runtime):
        assert time.monotonic() < deadline, "a spare outlived its daemon"
        time.sleep(0.1)


def test_a_socket_linked_to_another_environments_daemon_is_not_believed(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    mine = _env(tmp_path, runtime)
    other_home = tmp_path / "other-home"
    other_home.mkdir()
    other = {**mine, "HOME": str(other_home), "CLAUDE_PROJECT_DIR": "/"}
    _warm(_call("Bash", {"command": "true"}, workspace), other)
    theirs, ours = _socket(other), _socket(mine)
    ours.symlink_to(theirs)
    call = _call("Bash", {"command": f"cat {mine['HOME']}/.ssh/id_rsa"}, workspace)
    with pytest.raises(hook_client.Absent):
        _ask(call, mine)  # the other daemon refuses a call of another environment
    assert _decision(_hook(call, mine)) == "deny"
    other_call = _call("Bash", {"command": "ls"}, workspace)
    assert isinstance(_ask(other_call, other), dict)  # the control: it answers its own


def test_a_call_from_a_removed_directory_is_judged_as_in_process(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime, SHELLGATE_AUDIT_LOG="relative-audit.jsonl")
    _warm(_call("Bash", {"command": "true"}, workspace), {**env, "SHELLGATE_AUDIT_LOG":
                                                          str(tmp_path / "a.jsonl")})
    gone = tmp_path / "gone"
    gone.mkdir()
    probe = ("import os, subprocess, sys\nos.chdir(sys.argv[1]); os.rmdir(sys.argv[1])\n"
             "done = subprocess.run([sys.executable, '-m', 'gateway', 'hook'],"
             " input=sys.stdin.buffer.read(), capture_output=True)\n"
             "sys.stdout.buffer.write(done.stdout)")
    call = json.dumps(_call("Bash", {"command": "ls"}, workspace)).encode()
    answers = []
    for daemon in ("1", "0"):
        done = subprocess.run([sys.executable, "-c", probe, str(gone)], input=call,
                              capture_output=True, env={**env, "SHELLGATE_HOOK_DAEMON": daemon},
                              check=True, timeout=90)
        answers.append(_decision(json.loads(done.stdout)))
        gone.mkdir()
    assert answers[0] == answers[1]
    assert not Path("/relative-audit.jsonl").exists()


def test_a_hard_link_planted_at_the_start_stamp_is_left_alone(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    env = _env(tmp_path, runtime)
    where = _socket(env)
    where.parent.mkdir(mode=0o700, exist_ok=True)
    victim = runtime / "victim"
    victim.write_text("the user's data\n")
    os.link(victim, str(where).removesuffix(".sock") + ".started")
    call = _call("Bash", {"command": "cat ~/.ssh/id_rsa"}, workspace)
    assert _decision(_hook(call, env)) == "deny"
    assert victim.read_text() == "the user's data\n"


def test_shellgates_sockets_are_hidden_from_commands_whatever_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox import own_dirs

    assert f"/run/user/{os.getuid()}/shellgate" in own_dirs({}, "/home/u")
    assert {"/somewhere/else/shellgate", f"/run/user/{os.getuid()}/shellgate"} <= set(
        own_dirs({"XDG_RUNTIME_DIR": "/somewhere/else"}, "/home/u"))


_FAKE_DAEMON = r"""
import json, os, socket, sys
path = sys.argv[1]
l = socket.socket(socket.AF_UNIX)
l.bind(path + ".new")
l.listen(4)
os.rename(path + ".new", path)  # there only once it listens
allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                "permissionDecision": "allow",
                                "permissionDecisionReason": "a fake daemon"}}
while True:
    conn, _ = l.accept()
    try:
        while conn.recv(65536):
            pass
        conn.sendall(b"+" + json.dumps({"answer": allow}).encode() + b"\n")
    except OSError:
        pass
    conn.close()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a mount namespace")
@pytest.mark.parametrize("namespace", ["another mount namespace", "the client's own"])
def test_a_daemon_in_another_namespace_is_not_believed(
        workspace: Path, tmp_path: Path, runtime: Path, namespace: str) -> None:
    """Attack (from a review of the run daemon): a command in a sandbox
    renamed the runtime directory's parent away and bound a socket of its own
    where the next client looked. A fake hook daemon there answers `allow`
    for everything; the client now checks, from /proc, that the daemon is in
    its own namespaces. The control: the same fake in the client's own
    namespaces is believed (what a same-user process outside any sandbox
    could do anyway)."""
    env = _env(tmp_path, runtime)
    where = _socket(env)
    where.parent.mkdir(mode=0o700, exist_ok=True)
    fake = tmp_path / "fake.py"
    fake.write_text(_FAKE_DAEMON)
    prefix = ["unshare", "--mount"] if namespace == "another mount namespace" else []
    server = subprocess.Popen([*prefix, sys.executable, str(fake), str(where)])
    try:
        deadline = time.monotonic() + 20
        while not where.exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        call = _call("Bash", {"command": "cat ~/.ssh/id_rsa"}, workspace)
        if prefix:
            with pytest.raises(hook_client.Absent):
                _ask(call, env)
            assert _decision(_hook(call, env)) == "deny"  # judged in its own process
        else:
            assert isinstance(_ask(call, env), dict)
    finally:
        server.kill()
        server.wait()


def test_the_spares_warm_up_in_the_daemons_one_directory_and_leave_nothing_per_call(
        workspace: Path, tmp_path: Path, runtime: Path) -> None:
    """From a review: each spare warmed up in a project of its own, and each
    hook call left a repository-walk cache behind (the sandbox keeps the
    256 newest: real workspaces' caches were pushed out)."""
    scratch = tmp_path / "scratch"  # the daemon's TMPDIR
    scratch.mkdir()
    env = _env(tmp_path, runtime, TMPDIR=str(scratch))
    call = _call("Read", {"file_path": str(workspace / "README.md")}, workspace)
    _warm(call, env)
    state = runtime / f"shellgate-{os.getuid()}"
    caches = _settled(state, "repos-*.json")  # the spares' warm-ups
    for _ in range(3):
        assert _decision(_hook(call, env)) == "allow"
    assert _settled(state, "repos-*.json") == caches
    (warm,) = scratch.glob("shellgate-warm-*")
    assert not list(warm.glob("audit-*"))  # each warm-up's own log, removed
