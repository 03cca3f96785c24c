"""Escape tests: TCP and unix-socket services on the host, the networked profile and its proxy.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import socket
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest
from escape_kit import (
    PROXY,
    PY,
    RUN_TIMEOUT,
    accepted,
    consume_control,
    need_host_address,
    output,
    pypi_reachable,
    require,
    sh,
    tcp_listener,
    unique_seconds,
)

pytestmark = [pytest.mark.sandbox]


# -- 8. TCP services on the host -------------------------------------------------


def _tcp_attack(host: str, port: int) -> str:
    return f"""
        curl -sS -m 3 -o /dev/null http://{host}:{port}/
        {PY} -c 'import socket; socket.create_connection(("{host}", {port}), timeout=3)'
        bash -c 'echo hello > /dev/tcp/{host}/{port}'
        echo ran > control.txt
    """


def _proxy_attack(host: str, port: int) -> str:
    """Ask the proxy itself (NO_PROXY would send curl around it)."""
    return f"""
        for url in http://{host}:{port}/ https://{host}:{port}/; do
            curl -sS -m 5 --noproxy '' -x {PROXY} -o /dev/null \\
                -w 'proxy %{{http_code}} %{{http_connect}}\\n' "$url"
        done
        {PY} -c 'import socket; socket.create_connection(("{host}", {port}), timeout=3)'
        echo ran > control.txt
    """


@pytest.mark.parametrize("target", ["127.0.0.1", "localhost", "host address"])
@pytest.mark.parametrize("profile", ["workspace-write", "networked"])
def test_a_command_cannot_reach_a_tcp_service_on_the_host(
    workspace: Path, profile: str, target: str
) -> None:
    """Attack: connect to a service listening on the host (0.0.0.0, so its
    loopback and its own address). With the networked profile the targets
    are even allowed by --allow-domain: the proxy must still refuse names
    that resolve to loopback."""
    host = need_host_address() if target == "host address" else target
    with tcp_listener("0.0.0.0") as (listener, port):
        if profile == "networked":
            options = ("--profile", "networked", "--allow-domain", "localhost",
                       "--allow-domain", "127.0.0.1")
            proc = sh(workspace, _proxy_attack(host, port), options=options)
        else:
            proc = sh(workspace, _tcp_attack(host, port))
        consume_control(workspace, proc)
        assert accepted(listener) == 0, output(proc)
    if profile == "networked":
        replies = [line for line in proc.stdout.decode().splitlines() if line.startswith("proxy")]
        require(len(replies) == 2, "both requests were answered by the proxy", proc)
        assert all("403" in line for line in replies), replies


def test_the_proxy_refuses_an_allowed_name_that_is_the_hosts_own_address(
    workspace: Path,
) -> None:
    """Attack: an allowlisted name (here, the IP literal) that is the host
    itself: the proxy's connection comes from the host, so any service on
    0.0.0.0 answers it."""
    host = need_host_address()
    with tcp_listener("0.0.0.0") as (listener, port):
        # One short request: when it escapes, nothing on the host answers it.
        script = f"curl -sS -m 2 http://{host}:{port}/; echo ran > control.txt"
        proc = sh(workspace, script, options=("--profile", "networked", "--allow-domain", host))
        consume_control(workspace, proc)
        assert accepted(listener) == 0, output(proc)


# -- 9. unix sockets ------------------------------------------------------------


@pytest.mark.parametrize("profile", ["workspace-write", "networked"])
def test_a_command_cannot_connect_to_a_host_unix_socket(
    workspace: Path, outside: Path, tmp_path: Path, profile: str
) -> None:
    """Attack: talk to a host service over its unix socket (docker.sock,
    an agent, a database), outside the workspace or even inside it."""
    paths = [outside / "service.sock", workspace / "s.sock", tmp_path / "host-tmp.sock"]
    listeners = []
    try:
        for path in paths:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(path))
            listener.listen(16)
            listener.setblocking(False)
            listeners.append(listener)
        attempts = "\n".join(
            f"{PY} -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(3); "
            f"s.connect(sys.argv[1])' {shlex.quote(str(p))}\n"
            f"curl -sS -m 3 --unix-socket {shlex.quote(str(p))} http://service/"
            for p in paths)
        script = f"{attempts}\ntest -S s.sock && echo visible > control.txt"
        proc = sh(workspace, script, options=("--profile", profile))
        require(consume_control(workspace, proc).strip() == "visible",
                "the workspace socket is visible inside", proc)
        assert [accepted(listener) for listener in listeners] == [0] * len(paths), output(proc)
    finally:
        for listener in listeners:
            listener.close()


# -- 15. the networked profile ---------------------------------------------------------


def test_an_allowed_domain_works_only_through_the_proxy(workspace: Path) -> None:
    """Positive case and its bypass: pypi.org (allowed by the networked
    profile) answers through the proxy; going around the proxy fails."""
    if not pypi_reachable():
        pytest.skip("pypi.org:443 is not reachable from this host, so the positive case "
                    "cannot be checked")
    script = """
        curl -sS -m 20 -o /dev/null -w 'proxied %{http_code}\\n' https://pypi.org/simple/pip/
        curl -sS -m 5 --noproxy '*' -o /dev/null -w 'direct %{http_code}\\n' \\
            https://pypi.org/simple/pip/
        true
    """
    proc = sh(workspace, script, options=("--profile", "networked"))
    lines = proc.stdout.decode().splitlines()
    assert "proxied 200" in lines, output(proc)
    assert "direct 000" in lines, output(proc)


def test_a_domain_not_in_the_allowlist_gets_a_403_naming_the_domain_and_the_setting(
    workspace: Path,
) -> None:
    """Attack: reach a domain that is not allowlisted, over plain HTTP and
    over CONNECT."""
    script = """
        curl -sS -m 10 -w '\\nhttp %{http_code}\\n' http://example.com/
        curl -sS -m 10 -o /dev/null -w 'connect %{http_connect}\\n' https://example.com/
        true
    """
    proc = sh(workspace, script, options=("--profile", "networked"))
    text = proc.stdout.decode()
    assert "http 403" in text.splitlines(), output(proc)
    assert "connect 403" in text.splitlines(), output(proc)
    assert "example.com" in text and "sandbox.network.allowedDomains" in text


def test_a_host_that_is_not_allowed_is_never_contacted(workspace: Path) -> None:
    """Attack: reach the host's own address through the proxy (not on the
    allowlist): a 403, and the listener on the host sees nothing."""
    host = need_host_address()
    with tcp_listener(host) as (listener, port):
        proc = sh(workspace, _proxy_attack(host, port), options=("--profile", "networked"))
        consume_control(workspace, proc)
        assert accepted(listener) == 0
    replies = [line for line in proc.stdout.decode().splitlines() if line.startswith("proxy")]
    assert len(replies) == 2 and all("403" in line for line in replies), output(proc)


@pytest.mark.parametrize("name", ["example.com", "pypi.org"])
@pytest.mark.parametrize("profile", ["workspace-write", "networked"])
def test_dns_resolution_inside_the_sandbox_fails(
    workspace: Path, profile: str, name: str
) -> None:
    """Attack: exfiltrate through DNS queries (`$(cat secret).evil.com`):
    no resolver is reachable, even for an allowed domain (the proxy
    resolves, the command never does)."""
    code = (f"import socket\ntry:\n    print(socket.getaddrinfo({name!r}, 80))\n"
            "except OSError as exc:\n    print('failed', exc)")
    proc = sh(workspace, f"{PY} -c {shlex.quote(code)} > control.txt",
              options=("--profile", profile))
    assert consume_control(workspace, proc).startswith("failed"), output(proc)


@pytest.mark.parametrize("profile", ["workspace-write", "networked"])
def test_a_udp_datagram_never_reaches_the_host(workspace: Path, profile: str) -> None:
    """Attack: exfiltrate over UDP (a DNS-like datagram to a host listener),
    which the HTTP proxy would not see."""
    host = need_host_address()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("0.0.0.0", 0))
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = (f"import socket\nfor dst in [({host!r}, {port}), ('127.0.0.1', {port})]:\n"
                "    try:\n"
                "        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', dst)\n"
                "    except OSError:\n        pass")
        proc = sh(workspace, f"{PY} -c {shlex.quote(code)}; echo ran > control.txt",
                  options=("--profile", profile))
        consume_control(workspace, proc)
        time.sleep(0.1)
        with pytest.raises(BlockingIOError):
            listener.recvfrom(64)


# -- 21. nothing of ours in the sandbox to hijack -------------------------------------

#: Lists every process in the sandbox's PID namespace that is not the
#: script's own ancestry, with the targets of its descriptors.
_PROCESSES = r"""
import json, os
mine, pid = set(), os.getpid()
while pid > 1:
    mine.add(pid)
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
found = {}
for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) in mine:
        continue
    try:
        cmd = open(f"/proc/{name}/cmdline", "rb").read().split(b"\0")[0].decode()
        fds = [os.readlink(f"/proc/{name}/fd/{fd}") for fd in os.listdir(f"/proc/{name}/fd")]
    except OSError as exc:
        cmd, fds = "?", [f"unreadable: {exc}"]
    found[name] = {"cmd": cmd, "fds": fds}
print(json.dumps(found))
"""


def test_the_networked_sandbox_holds_no_process_with_a_way_out(workspace: Path) -> None:
    """Attack (from a review): the command opened the in-sandbox bridge's
    /proc/<pid>/mem, rewrote its copy of the proxy socket path and made it
    connect to any host unix socket (git's credential cache, a Docker
    socket under $HOME). Now the host proxy serves the sandbox's listener
    itself: besides the command, the sandbox holds only bubblewrap's PID 1,
    and PID 1 holds no socket at all."""
    proc = sh(workspace, f"{PY} -c {shlex.quote(_PROCESSES)} > procs.json; echo ran > control.txt",
              options=("--profile", "networked"))
    consume_control(workspace, proc)
    others = json.loads((workspace / "procs.json").read_text())
    require("1" in others, "the script saw the sandbox's PID 1", proc)
    assert set(others) == {"1"}, others
    assert others["1"]["cmd"].endswith("bwrap"), others
    assert [fd for fd in others["1"]["fds"] if fd.startswith("socket:")] == [], others


def test_the_proxy_port_is_served_from_the_host(workspace: Path) -> None:
    """The listener on 127.0.0.1:3128 inside is the host proxy's: a request
    is answered (403 for a name not allowed) while no process in the
    sandbox listens (the command cannot take the port over either)."""
    script = f"""
        curl -sS -m 10 --noproxy '' -x {PROXY} -o /dev/null -w 'proxy %{{http_code}}\\n' \\
            http://example.invalid/
        {PY} -c 'import socket
s = socket.socket()
try:
    s.bind(("127.0.0.1", 3128)); print("took the port")
except OSError as exc:
    print("port busy", exc.errno)'
        echo ran > control.txt
    """
    proc = sh(workspace, script, options=("--profile", "networked"))
    consume_control(workspace, proc)
    lines = proc.stdout.decode().splitlines()
    require("proxy 403" in lines, "the proxy answered", proc)
    assert any(line.startswith("port busy") for line in lines), output(proc)


def test_every_process_in_a_networked_sandbox_runs_under_the_filter(workspace: Path) -> None:
    """Seen from the host: the command and bubblewrap's PID 1 both run
    under seccomp (one filter, no AF_UNIX: see test_seccomp.py), so taking
    over PID 1 gains nothing the command lacks."""
    seconds = unique_seconds(20)
    result: dict[str, subprocess.CompletedProcess[bytes]] = {}
    thread = threading.Thread(target=lambda: result.setdefault(
        "proc", sh(workspace, f"sleep {seconds}; true", options=("--profile", "networked"))))
    thread.start()
    statuses: dict[str, dict[str, str]] = {}
    try:
        deadline = time.monotonic() + 60  # the start, on a loaded machine
        while not statuses and time.monotonic() < deadline:
            for p in psutil.process_iter(["pid", "cmdline"]):
                if p.info["cmdline"] == ["sleep", seconds]:
                    statuses = _sandbox_chain(p.info["pid"])
            time.sleep(0.05)
    finally:
        for p in psutil.process_iter(["pid", "cmdline"]):
            if p.info["cmdline"] == ["sleep", seconds]:
                with contextlib.suppress(psutil.Error):
                    p.kill()
        thread.join(RUN_TIMEOUT)
    require(any(s["NSpid"].split()[-1] == "1" for s in statuses.values()),
            f"the sandbox's PID 1 was found from the host: {statuses}")
    assert {pid: s["Seccomp"] for pid, s in statuses.items()} == dict.fromkeys(statuses, "2")


def _sandbox_chain(pid: int) -> dict[str, dict[str, str]]:
    """``pid`` and its ancestors up to the sandbox's PID 1: their status."""
    chain: dict[str, dict[str, str]] = {}
    while pid > 1:
        try:
            text = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return chain
        parts = (line.partition(":") for line in text.splitlines())
        fields = {key.strip(): value.strip() for key, _, value in parts}
        chain[str(pid)] = fields
        if fields.get("NSpid", "").split()[-1:] == ["1"]:
            return chain
        pid = int(fields["PPid"])
    return chain


def test_a_unix_datagram_pair_cannot_reach_a_host_socket(
    workspace: Path, outside: Path
) -> None:
    """Attack (from a review): socket(AF_UNIX) is refused, but
    socketpair(AF_UNIX, SOCK_DGRAM) hands out an unbound datagram socket
    whose sendto() reaches any datagram socket path the sandbox can see."""
    path = outside / "service.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        server.setblocking(False)
        code = (
            "import socket, sys\n"
            "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "a.sendall(b'x'); assert b.recv(1) == b'x'\n"
            "print('stream pairs work')\n"
            "for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):\n"
            "    try:\n"
            "        s, _ = socket.socketpair(socket.AF_UNIX, kind)\n"
            "        s.sendto(b'escaped', sys.argv[1])\n"
            "    except OSError as exc:\n"
            "        print('refused', exc.errno)\n"
        )
        proc = sh(workspace, f"{PY} -c {shlex.quote(code)} {shlex.quote(str(path))} > control.txt")
        seen = consume_control(workspace, proc)
        require("stream pairs work" in seen, "socketpair streams work (asyncio needs them)", proc)
        time.sleep(0.1)
        with pytest.raises(BlockingIOError):
            server.recvfrom(64)


_RAW_SOCKET = r"""
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
nr = {"x86_64": (41, 53), "aarch64": (198, 199)}[sys.argv[2]]
fd = libc.syscall(L(nr[0]), L((1 << 32) | socket.AF_UNIX), L(socket.SOCK_STREAM), L(0))
if fd >= 0:
    try:
        socket.socket(fileno=fd).connect(sys.argv[1])
    except OSError:
        pass
pair = (ctypes.c_int * 2)()
if libc.syscall(L(nr[1]), L((1 << 32) | socket.AF_UNIX), L(socket.SOCK_DGRAM), L(0), pair) == 0:
    try:
        socket.socket(fileno=pair[0]).sendto(b"escaped", sys.argv[1] + ".dgram")
    except OSError:
        pass
print("fd", fd)
"""


def test_garbage_in_the_upper_half_of_a_socket_argument_does_not_dodge_the_filter(
    workspace: Path, outside: Path
) -> None:
    """Attack (from a review): the family is an int, of which the kernel
    reads the low 32 bits; a filter comparing all 64 let
    `socket((1 << 32) | AF_UNIX, …)` through to a host socket."""
    machine = platform.machine()
    if machine not in ("x86_64", "aarch64"):
        pytest.skip(f"no syscall numbers for {machine}")
    stream = outside / "service.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener, \
            socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as dgram:
        listener.bind(str(stream))
        listener.listen(4)
        listener.setblocking(False)
        dgram.bind(str(stream) + ".dgram")
        dgram.setblocking(False)
        args = f"{shlex.quote(str(stream))} {machine}"
        proc = sh(workspace, f"{PY} -c {shlex.quote(_RAW_SOCKET)} {args} > control.txt")
        require(consume_control(workspace, proc).startswith("fd"), "the raw syscalls ran", proc)
        time.sleep(0.1)
        assert accepted(listener) == 0
        with pytest.raises(BlockingIOError):
            dgram.recvfrom(64)


def test_a_command_allowed_unix_sockets_still_cannot_reach_shellgates_own_sockets(
        workspace: Path, outside: Path) -> None:
    """Attack: with unix sockets allowed the host's /run is visible, and with
    it ``$XDG_RUNTIME_DIR/shellgate``, where `shellgate hook`'s daemon
    listens: a command could ask it about files it cannot see, write the
    audit log through it, or put its own socket there."""
    runtime = outside / "run"
    (runtime / "shellgate").mkdir(parents=True, mode=0o700)
    runtime.chmod(0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(runtime / "shellgate" / "hook-x.sock"))
    listener.listen(4)
    listener.setblocking(False)
    (runtime / "other").write_text("seen\n")
    settings = workspace.parent / "unix.json"
    settings.write_text(json.dumps({"sandbox": {"network": {"allowUnixSockets": True}}}))
    try:
        target = runtime / "shellgate" / "hook-x.sock"
        script = (f"{PY} -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); "
                  f"s.settimeout(3); s.connect(sys.argv[1])' {shlex.quote(str(target))}\n"
                  f"ls {shlex.quote(str(runtime / 'shellgate'))} > listing.txt 2>&1\n"
                  f"cat {shlex.quote(str(runtime / 'other'))} > control.txt")
        proc = sh(workspace, script, options=("--settings", str(settings)),
                  env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
        require(consume_control(workspace, proc).strip() == "seen",
                "the runtime directory's other files are visible", proc)
        assert accepted(listener) == 0, output(proc)
        assert "hook-x.sock" not in (workspace / "listing.txt").read_text()
    finally:
        listener.close()
