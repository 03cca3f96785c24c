"""Shared kit of the escape suite (``test_escapes_*.py``).

Every escape test runs a hostile command through the real ``shellgate run``
executable and then looks at the host: its filesystem, its processes, a
listener the test owns. What the sandboxed command prints is never the only
evidence. Each attack also leaves a *control* trace (a file in the workspace,
a line on stdout) proving that the command really ran, so a sandbox that
fails to start cannot make an escape test pass; controls fail with
``pytest.fail`` (not ``AssertionError``), so that a strict xfail can only be
satisfied by the escape itself.

Escapes the sandbox does not hold yet are strict xfails whose reason carries
the reproducer: they fail loudly the day they are fixed, and the marker goes
with the fix.

The suite runs as root and, from ``test_unprivileged_leg.py``, again as an
unprivileged user: nothing here may assume either.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import pwd
import shlex
import socket
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import psutil
import pytest

#: A stdlib-only Python that is visible (read-only) inside the sandbox.
PY = os.path.realpath(sys.executable)
RUN_TIMEOUT = 30.0
PROXY = "http://127.0.0.1:3128"  # the host proxy, as the command reaches it
FLOOD = 200_000_000

SHELLGATE = str(Path(sys.executable).with_name("shellgate"))


def shellgate_run(
    workspace: Path,
    *argv: str,
    options: Sequence[str] = (),
    env: dict[str, str] | None = None,
    timeout: float = 60,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`shellgate run [options] -- argv` in ``workspace``, as a real process."""
    return subprocess.run(
        [SHELLGATE, "run", "--cwd", str(workspace), *options, "--", *argv],
        capture_output=True,
        env=env if env is not None else dict(os.environ),
        timeout=timeout,
        input=input,
        check=False,
    )


def user_home() -> Path:
    """The home directory of the user running the tests: the password
    database's, or ``$HOME`` when that one does not exist (``nobody``'s is
    /nonexistent; the unprivileged leg gives it a real one in ``$HOME``)."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if home.is_dir() and os.access(home, os.W_OK):
        return home
    return Path(os.environ["HOME"])




def sg(
    ws: Path,
    *argv: str,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    timeout: float = RUN_TIMEOUT,
) -> subprocess.CompletedProcess[bytes]:
    """``shellgate run`` with an empty stdin: shellgate reads a piped stdin
    to EOF, and the test runner's own stdin may never reach it."""
    return shellgate_run(ws, *argv, options=options, env=env, timeout=timeout, input=b"")


def sh(
    ws: Path,
    script: str,
    *,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    timeout: float = RUN_TIMEOUT,
) -> subprocess.CompletedProcess[bytes]:
    return sg(ws, "sh", "-c", script, options=options, env=env, timeout=timeout)


def output(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")


def require(
    condition: bool, what: str, proc: subprocess.CompletedProcess[bytes] | None = None
) -> None:
    """A control check: proves the attack ran. Not an AssertionError."""
    if not condition:
        detail = f"\n--- output ---\n{output(proc)[-2000:]}" if proc is not None else ""
        pytest.fail(f"control failed (the attack did not run as intended): {what}{detail}")


def consume_control(ws: Path, proc: subprocess.CompletedProcess[bytes],
                    name: str = "control.txt") -> str:
    """Read and remove the control file the attack script wrote."""
    path = ws / name
    require(path.is_file(), f"{name} was not written in the workspace", proc)
    text = path.read_text()
    path.unlink()
    return text


Entry = tuple[object, ...]

#: the suffix of what the product moves aside (sandbox.gitpaths.SUFFIX)
QUARANTINED = ".quarantined-by-shellgate"


def snapshot(root: Path) -> dict[str, Entry]:
    """Everything below ``root`` as seen on the host: type, mode, content,
    link targets (directory mtimes are left out: a tripwire's check may
    rename inside a directory and back)."""
    entries: dict[str, Entry] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                entries[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                entries[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                entries[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes(),
                                st.st_mtime_ns)
            else:
                entries[rel] = ("other", stat.S_IFMT(st.st_mode))
    return entries


def hook_script(path: str, marker: Path) -> str:
    """Shell that plants an executable hook at ``path`` touching ``marker``."""
    body = shlex.quote(f"#!/bin/sh\ntouch {marker}\n")
    return f"printf %s {body} > {path} && chmod +x {path}"


def rewrite_in_place(path: str, content: str) -> str:
    """Shell that rewrites ``path`` (same inode) with ``content`` and puts
    its mtime back (a reference copy in the current directory, removed)."""
    return (f"cp -p {path} .ref && printf %s {shlex.quote(content)} > {path} && "
            f"touch -r .ref {path} && rm .ref")


def padded(content: str, size: int) -> str:
    """``content`` padded with ``#`` and a newline to ``size`` characters."""
    require(len(content) + 2 <= size, f"{content!r} fits in {size} characters")
    return content + "#" * (size - len(content) - 1) + "\n"


def require_same_stat(path: Path, before: os.stat_result, content: str,
                      proc: subprocess.CompletedProcess[bytes]) -> None:
    """The control of a same-size rewrite: ``path`` holds ``content`` with
    the inode, size and mtime it had before."""
    now = path.stat()
    require((now.st_ino, now.st_size, now.st_mtime_ns)
            == (before.st_ino, before.st_size, before.st_mtime_ns)
            and path.read_text() == content,
            f"{path.name} was rewritten in place at the same size and mtime", proc)


def host_git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run git on the host the way the user would, later."""
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=Host User",
         "-c", "user.email=host@example.invalid", *args],
        capture_output=True, timeout=20, check=False,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )


def run_planted_git(repo: Path) -> None:
    """What the user does after the agent's turn: status, then a commit."""
    host_git(repo, "status")
    (repo / "README.md").write_text("edited on the host\n")
    host_git(repo, "commit", "-q", "-a", "-m", "host commit")


def processes_mentioning(arg: str) -> list[str]:
    """Live (non-zombie) host processes whose command line mentions ``arg``."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            cmdline = proc.info["cmdline"] or []
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:
            continue
        if any(arg in part for part in cmdline):
            found.append(f"{proc.info['pid']}: {' '.join(cmdline)}")
    return found


def unique_seconds(base: int) -> str:
    """A sleep duration nobody else on the machine uses (``300.4821937``)."""
    return f"{base}.{uuid.uuid4().int % 10**7:07d}"


@functools.cache
def host_address() -> str | None:
    """A non-loopback IPv4 address of this host (``hostname -I``)."""
    try:
        words = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5,
                               check=False).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return None
    for word in words:
        with contextlib.suppress(ValueError):
            ip = ipaddress.ip_address(word)
            if ip.version == 4 and not (ip.is_loopback or ip.is_link_local):
                return word
    return None


def need_host_address() -> str:
    address = host_address()
    if address is None:
        pytest.skip("this host has no non-loopback IPv4 address to bind a listener to")
    return address


@contextlib.contextmanager
def tcp_listener(host: str) -> Iterator[tuple[socket.socket, int]]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((host, 0))
    listener.listen(64)
    listener.setblocking(False)
    try:
        yield listener, listener.getsockname()[1]
    finally:
        listener.close()


def accepted(listener: socket.socket) -> int:
    """How many connections reached the listener (completed handshakes wait
    in the accept queue even if the client gave up)."""
    count = 0
    while True:
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return count
        conn.close()
        count += 1


def pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


def assert_secret_absent(ws: Path, proc: subprocess.CompletedProcess[bytes], secret: str) -> None:
    """Neither the output nor any file the command left in the workspace
    holds ``secret``."""
    assert secret not in output(proc)
    for path in ws.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert secret.encode() not in path.read_bytes(), f"secret copied into {path}"


# -- planting and judging (test_escapes_planted*.py, test_escapes_home.py) -----------

#: what an existing host file holds before a run
HOST_VERSION = "the host's own version\n"


def fsmonitor_script(path: str, marker: Path) -> str:
    """Shell that appends a `core.fsmonitor` touching ``marker`` to the git
    config file ``path``."""
    return f"printf '[core]\\n\\tfsmonitor = touch %s\\n' {marker} >> {path}"


def expand(template: str, marker: Path) -> str:
    """A table's attack as shell: ``{marker}``, ``{hook:PATH}`` (an executable
    hook touching the marker) and ``{fsm:PATH}`` (a core.fsmonitor appended)."""
    script = template.replace("{marker}", str(marker))
    for tag, make in (("{hook:", hook_script), ("{fsm:", fsmonitor_script)):
        while tag in script:
            start = script.index(tag)
            end = script.index("}", start)
            script = script[:start] + make(script[start + len(tag) : end], marker) \
                + script[end + 1 :]
    return script


def recorded(write: str) -> str:
    """Shell that runs ``write`` and records its exit status in control.txt
    (the control: it proves the command ran, and says whether the write
    failed during the run)."""
    return f"( {write} ) >/dev/null 2>&1; echo $? > control.txt"


def control_status(ws: Path, proc: subprocess.CompletedProcess[bytes]) -> int:
    if stopped(proc) and b"was created during the run" in proc.stderr:
        # a sentinel name in a git directory appeared: the sandbox stopped
        # the command at once (the kill names it: the write did happen)
        return 137
    text = consume_control(ws, proc).strip()
    require(text.isdigit(), f"control.txt holds the write's exit status, not {text!r}", proc)
    return int(text)


def reported(proc: subprocess.CompletedProcess[bytes], name: str) -> bool:
    """Does a `shellgate:` line on stderr name ``name``?"""
    lines = proc.stderr.decode("utf-8", "replace").splitlines()
    return any(line.startswith("shellgate:") and name in line for line in lines)


def stopped(proc: subprocess.CompletedProcess[bytes]) -> bool:
    """Did shellgate stop the command (a protected path was replaced)?"""
    return b"shellgate: killed:" in proc.stderr


def unsandboxed(cwd: Path, script: str, env: dict[str, str] | None = None) -> None:
    """The same attack, run as a plain process (for the controls)."""
    subprocess.run(["sh", "-c", script], cwd=cwd, capture_output=True, timeout=20, check=False,
                   env=env if env is not None else dict(os.environ))


def git_setup(repo: Path, *args: str) -> None:
    proc = host_git(repo, *args)
    assert proc.returncode == 0, proc.stderr.decode()


def init_repo(path: Path) -> Path:
    """A repository with one commit, made on the host."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "README.md").write_text("hello\n")
    for args in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "init"]):
        git_setup(path, *args)
    return path


def text_of(path: Path) -> str | None:
    return path.read_text() if path.is_file() and not path.is_symlink() else None


def undone(after: str | None, before: str | None) -> bool:
    """Is the host's file as it was before the run?"""
    return after == before
