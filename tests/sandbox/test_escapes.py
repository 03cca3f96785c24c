"""Escape attempts against the real sandbox, judged from outside.

Every test runs a hostile command through the real ``shellgate run``
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
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import platform
import pwd
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from conftest import SHELLGATE, shellgate_run

import sandbox

pytestmark = [pytest.mark.sandbox]

#: A stdlib-only Python that is visible (read-only) inside the sandbox.
PY = os.path.realpath(sys.executable)
RUN_TIMEOUT = 30.0
PROXY = "http://127.0.0.1:3128"  # the bridge to the host proxy, inside the sandbox
FLOOD = 200_000_000


# -- helpers ---------------------------------------------------------------


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


def snapshot(root: Path) -> dict[str, Entry]:
    """Everything below ``root`` as seen on the host: type, mode, content,
    link targets (directory mtimes are left out: stub mount points come and
    go inside existing directories)."""
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


# -- fixtures --------------------------------------------------------------


@pytest.fixture
def token() -> str:
    return f"sgescape-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A host directory outside the workspace that is NOT under /tmp (the
    sandbox's private /tmp would hide a /tmp directory anyway)."""
    path = Path(tempfile.mkdtemp(prefix="shellgate-escape-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def leaks() -> Iterator[list[Path]]:
    """Paths an escape would have created: removed whatever happens."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()


@pytest.fixture
def git_ws(workspace: Path) -> Path:
    """The workspace as a git repository with one commit (made on the host)."""
    for args in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "init"]):
        proc = host_git(workspace, *args)
        assert proc.returncode == 0, proc.stderr
    return workspace


def _plant_home_secret(directory: Path, name: str, secret: str) -> Callable[[], None]:
    """Create ``directory/name`` holding ``secret``; return the undo."""
    created_dir = not directory.exists()
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret)

    def undo() -> None:
        path.unlink(missing_ok=True)
        if created_dir:
            with contextlib.suppress(OSError):
                directory.rmdir()

    return undo


@pytest.fixture
def home_secrets(token: str) -> Iterator[dict[str, tuple[Path, str]]]:
    """A fake SSH key and fake AWS credentials under the real home directory
    (unique names; only what the fixture created is removed)."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    aws_name = "credentials" if not (home / ".aws" / "credentials").exists() else \
        f"credentials-{token}"
    plan = {
        "ssh": (home / ".ssh", f"id_{token}", f"-----FAKE KEY {uuid.uuid4().hex}-----"),
        "aws": (home / ".aws", aws_name, f"aws_secret_access_key = {uuid.uuid4().hex}"),
    }
    undo: list[Callable[[], None]] = []
    try:
        secrets = {}
        for kind, (directory, name, secret) in plan.items():
            undo.append(_plant_home_secret(directory, name, secret))
            secrets[kind] = (directory / name, secret)
        yield secrets
    finally:
        for step in reversed(undo):
            step()


def assert_secret_absent(ws: Path, proc: subprocess.CompletedProcess[bytes], secret: str) -> None:
    """Neither the output nor any file the command left in the workspace
    holds ``secret``."""
    assert secret not in output(proc)
    for path in ws.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert secret.encode() not in path.read_bytes(), f"secret copied into {path}"


# -- 1. writes outside the workspace ----------------------------------------

OUTSIDE_DIRS: dict[str, Callable[[Path, Path], Path]] = {
    "the workspace's parent": lambda ws, outside: ws.parent,
    "the home directory": lambda ws, outside: Path(pwd.getpwuid(os.getuid()).pw_dir),
    "/etc": lambda ws, outside: Path("/etc"),
    "/usr/local/bin": lambda ws, outside: Path("/usr/local/bin"),
    "a host directory under /var/tmp": lambda ws, outside: outside,
}


@pytest.mark.parametrize("where", list(OUTSIDE_DIRS))
def test_a_command_cannot_write_outside_the_workspace(
    workspace: Path, outside: Path, token: str, leaks: list[Path], where: str
) -> None:
    """Attack: create files in a directory outside the workspace with every
    kind of writer (redirect, touch, mkdir, cp, dd, python, symlink, ../)."""
    target = OUTSIDE_DIRS[where](workspace, outside)
    d, t = shlex.quote(str(target)), token
    rel = os.path.relpath(target, workspace)
    script = f"""
        echo pwned > {d}/{t}-redirect
        touch {d}/{t}-touch
        mkdir {d}/{t}-mkdir
        cp README.md {d}/{t}-cp
        dd if=README.md of={d}/{t}-dd 2>/dev/null
        {PY} -c 'import sys; open(sys.argv[1], "w").write("pwned")' {d}/{t}-python
        ln -s /etc/hostname {d}/{t}-symlink
        echo pwned > {shlex.quote(rel)}/{t}-relative
        echo ran > control.txt
    """
    leaks.extend(target / f"{t}-{kind}" for kind in
                 ("redirect", "touch", "mkdir", "cp", "dd", "python", "symlink", "relative"))
    proc = sh(workspace, script)
    consume_control(workspace, proc)
    assert sorted(p.name for p in target.glob(f"{t}*")) == []


# -- 2. the host's /tmp ------------------------------------------------------


@pytest.mark.parametrize(
    ("directory", "writable_inside"),
    [("/tmp", True), ("/dev/shm", True), ("/var/tmp", False)],
)
def test_temporary_directories_inside_are_not_the_hosts(
    workspace: Path, token: str, leaks: list[Path], directory: str, writable_inside: bool
) -> None:
    """Attack: drop a file in a shared temporary directory for a host process
    (or a later run) to pick up. /tmp and /dev/shm are private inside; the
    persistent /var/tmp is read-only."""
    t = token
    leaks.extend(Path(directory, f"{t}{suffix}") for suffix in ("", "-dir", "-py"))
    script = f"""
        echo pwned > {directory}/{t}
        mkdir {directory}/{t}-dir
        {PY} -c 'open("{directory}/{t}-py", "w").write("pwned")'
        if test -f {directory}/{t}; then echo visible-inside; else echo not-written; fi \
            > control.txt
    """
    proc = sh(workspace, script)
    seen = consume_control(workspace, proc).strip()
    require(seen == ("visible-inside" if writable_inside else "not-written"),
            f"inside, {directory} behaved unexpectedly: {seen}", proc)
    assert sorted(p.name for p in Path(directory).glob(f"{t}*")) == []


# -- 3. symlinks (and hard links) leading out of the workspace ---------------

SYMLINK_ATTACKS = {
    "write a new file through a symlinked host directory": "echo pwned > link-dir/new.txt",
    "overwrite a host file through a symlink": "echo pwned > link-file",
    "append to a host file through a symlink": "echo pwned >> link-file",
    "python open() follows the symlink":
        f"{PY} -c 'open(\"link-file\", \"w\").write(\"pwned\")'",
    "cp onto the symlink": "cp README.md link-file",
    "symlink created inside the sandbox": "ln -s {outside} mine && echo pwned > mine/new.txt",
    "hard link to the host file": "ln {outside}/target.txt hard && echo pwned >> hard",
    "symlink to a host directory under /tmp": "echo pwned > link-tmp/new.txt",
}


@pytest.mark.parametrize("attack", list(SYMLINK_ATTACKS))
def test_a_symlink_in_the_workspace_does_not_lead_out_of_it(
    workspace: Path, outside: Path, tmp_path: Path, attack: str
) -> None:
    """Attack: the workspace holds (or the command creates) a link to a host
    directory or file; writing through it must not touch the host."""
    (outside / "target.txt").write_text("original\n")
    host_tmp = tmp_path / "host-tmp-dir"
    host_tmp.mkdir()
    (workspace / "link-dir").symlink_to(outside)
    (workspace / "link-file").symlink_to(outside / "target.txt")
    (workspace / "link-tmp").symlink_to(host_tmp)
    before = snapshot(outside)
    script = SYMLINK_ATTACKS[attack].format(outside=shlex.quote(str(outside)))
    proc = sh(workspace, f"{script}; echo ran > control.txt")
    consume_control(workspace, proc)
    assert snapshot(outside) == before
    assert (outside / "target.txt").read_text() == "original\n"
    assert list(host_tmp.iterdir()) == []


# -- 4. git hooks and git config ----------------------------------------------

GIT_ATTACKS = {
    "write .git/hooks/pre-commit": "{hook:.git/hooks/pre-commit}",
    "empty and refill .git/hooks":
        "rm -rf .git/hooks/*; rm -rf .git/hooks; mkdir -p .git/hooks; "
        "{hook:.git/hooks/pre-commit}",
    "rename .git away and plant a new one":
        "mv .git .git2 && mkdir -p .git/hooks && {hook:.git/hooks/pre-commit} && "
        "cp -r .git2/HEAD .git2/config .git2/objects .git2/refs .git/",
    "git config core.hooksPath":
        "mkdir -p evil-hooks && {hook:evil-hooks/pre-commit}; "
        "git config core.hooksPath \"$PWD/evil-hooks\"",
    "git config core.fsmonitor": "git config core.fsmonitor 'touch {marker}'",
    "append to .git/config": "printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> .git/config",
    "replace .git/config by rename":
        "cp .git/config cfg && printf '[core]\\n\\thooksPath = /nonexistent\\n"
        "\\tfsmonitor = touch {marker}\\n' >> cfg && mv -f cfg .git/config",
}


def _git_script(template: str, marker: Path) -> str:
    script = template.replace("{marker}", str(marker))
    while "{hook:" in script:
        start = script.index("{hook:")
        end = script.index("}", start)
        script = script[:start] + hook_script(script[start + 6 : end], marker) + script[end + 1 :]
    return script


@pytest.mark.parametrize("attack", list(GIT_ATTACKS))
def test_a_command_cannot_plant_code_in_the_repositorys_git_hooks_or_config(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Attack: plant a hook or a config entry (core.hooksPath,
    core.fsmonitor) that the user's next `git status`/`git commit` would run
    on the host, outside any sandbox."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    hooks_before = snapshot(git_ws / ".git" / "hooks")
    config_before = (git_ws / ".git" / "config").read_bytes()
    proc = sh(git_ws, f"{_git_script(GIT_ATTACKS[attack], marker)}; echo ran > control.txt")
    consume_control(git_ws, proc)
    assert snapshot(git_ws / ".git" / "hooks") == hooks_before
    assert (git_ws / ".git" / "config").read_bytes() == config_before
    assert not (git_ws / ".git2").exists()
    run_planted_git(git_ws)
    assert not marker.exists(), "the planted code ran on the host"


@pytest.mark.parametrize("attack", list(GIT_ATTACKS))
def test_each_git_attack_would_run_code_without_the_sandbox(
    git_ws: Path, tmp_path: Path, attack: str
) -> None:
    """Control for the table above: run unsandboxed, on a throwaway repo,
    each attack really does make the host's git run the planted code, so
    the sandboxed test is not vacuous."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    subprocess.run(["sh", "-c", _git_script(GIT_ATTACKS[attack], marker)], cwd=git_ws,
                   capture_output=True, timeout=20, check=False)
    run_planted_git(git_ws)
    assert marker.exists()


def test_a_command_cannot_redirect_git_to_a_planted_common_dir(
    git_ws: Path, tmp_path: Path
) -> None:
    """Attack: `.git/commondir` points git at a planted directory whose
    config and hooks then run on the host (hooks/ and config stay intact)."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    script = f"""
        mkdir evil && cp -r .git/objects .git/refs evil/ && cp .git/config evil/config
        git config -f evil/config core.fsmonitor 'touch {marker}'
        mkdir evil/hooks && {hook_script("evil/hooks/pre-commit", marker)}
        echo ../evil > .git/commondir
        echo ran > control.txt
    """
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    run_planted_git(git_ws)
    assert not marker.exists(), "the host's git ran code planted through .git/commondir"


def test_a_command_cannot_plant_a_nested_repository_that_runs_code_on_git_status(
    git_ws: Path, tmp_path: Path
) -> None:
    """Attack: a nested repository (submodule-like gitlink) with its own
    core.fsmonitor, which the superproject's `git status` runs."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    script = f"""
        mkdir sub && cd sub && git init -q &&
        git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x &&
        git config core.fsmonitor 'touch {marker}' && cd .. &&
        git update-index --add --cacheinfo "160000,$(git -C sub rev-parse HEAD),sub" &&
        echo ran > control.txt
    """
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    host_git(git_ws, "status")
    assert not marker.exists(), "the host's `git status` ran a nested repository's fsmonitor"


@pytest.mark.xfail(
    strict=True, raises=AssertionError,
    reason="KNOWN LIMIT: a nested repository that is not registered as a gitlink is left "
    "alone (finding it would mean walking the whole workspace after every run); a user who "
    "later runs git inside that directory runs its config. Reproducer: `shellgate run -- sh -c "
    "'mkdir sub && cd sub && git init -q && git config core.fsmonitor \"touch /tmp/PWNED\"'`,"
    " then `git -C sub status` on the host.",
)
def test_a_nested_repository_without_a_gitlink_is_defused_too(
    git_ws: Path, tmp_path: Path
) -> None:
    """Attack: the same planted repository, waiting for the user to run git
    inside its directory."""
    marker = tmp_path / "PLANTED-CODE-RAN"
    script = f"""
        mkdir sub && cd sub && git init -q && git config core.fsmonitor 'touch {marker}' &&
        cd .. && echo ran > control.txt
    """
    proc = sh(git_ws, script)
    consume_control(git_ws, proc)
    host_git(git_ws / "sub", "status")
    assert not marker.exists(), "the host's git ran a nested repository's fsmonitor"


# -- 5. agent and editor configuration ----------------------------------------

CONFIG_ATTACKS = {
    "rewrite .claude/settings.json":
        "echo '{\"permissions\": {\"allow\": [\"Bash\"]}}' > .claude/settings.json",
    "rename .claude away and recreate it":
        "mv .claude .claude-old && mkdir .claude && echo '{}' > .claude/settings.json",
    "create .claude/settings.local.json": "echo '{}' > .claude/settings.local.json",
    "add a hook script under .claude/hooks":
        "mkdir -p .claude/hooks; echo 'rm -rf ~' > .claude/hooks/evil.sh",
    "add a slash command": "mkdir -p .claude/commands; echo evil > .claude/commands/x.md",
    "create .shellgate/settings.json":
        "mkdir -p .shellgate && echo '{}' > .shellgate/settings.json",
    "create .mcp.json": "echo '{\"mcpServers\": {}}' > .mcp.json",
    "create .mcp.json by rename": "echo '{}' > m.json && mv m.json .mcp.json; rm -f m.json",
    "create .vscode/tasks.json": "mkdir -p .vscode && echo '{}' > .vscode/tasks.json",
    "create .gitmodules": "printf '[submodule \"x\"]\\n' > .gitmodules",
}


@pytest.mark.parametrize("attack", list(CONFIG_ATTACKS))
def test_a_command_cannot_rewrite_agent_or_editor_configuration(
    workspace: Path, attack: str
) -> None:
    """Attack: grant itself permissions, add a hook or an MCP server, or a
    task that runs when the editor opens the folder. Afterwards the host
    workspace is exactly as before: no change, and no stub left behind."""
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}\n')
    before = snapshot(workspace)
    proc = sh(workspace, f"{CONFIG_ATTACKS[attack]}; echo ran > control.txt")
    consume_control(workspace, proc)
    assert snapshot(workspace) == before


@pytest.mark.parametrize("kind", ["plain directory", "git repository"])
def test_a_run_leaves_no_stub_behind(workspace: Path, kind: str) -> None:
    """Attack surface check: the read-only stubs that block `.mcp.json`,
    `.shellgate/`, `.claude/`, `.vscode/` … are removed after the run."""
    if kind == "git repository":
        assert host_git(workspace, "init", "-q").returncode == 0
    before = snapshot(workspace)
    proc = sh(workspace, "ls -A > control.txt")
    seen = consume_control(workspace, proc)
    require(".mcp.json" in seen.split(), "the stubs were in place during the run", proc)
    assert snapshot(workspace) == before


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


# -- 10. seccomp and no_new_privs -------------------------------------------------


def _status_fields(text: str) -> dict[str, str]:
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


@pytest.mark.parametrize("profile", ["workspace-write", "read-only", "networked"])
def test_the_command_runs_under_seccomp_with_no_new_privs(workspace: Path, profile: str) -> None:
    """Attack surface check: without a seccomp filter every blocked syscall
    (mount, unshare, ptrace …) is open, and without no_new_privs a setuid
    binary regains privileges. Checked inside AND from the host on the
    running process, which must also live in its own namespaces."""
    seconds = unique_seconds(20)
    result: dict[str, subprocess.CompletedProcess[bytes]] = {}
    script = f"grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; exec sleep {seconds}"
    thread = threading.Thread(target=lambda: result.setdefault(
        "proc", sh(workspace, script, options=("--profile", profile))))
    thread.start()
    try:
        pid = None
        deadline = time.monotonic() + 15
        while pid is None and time.monotonic() < deadline and thread.is_alive():
            for proc in psutil.process_iter(["pid", "cmdline"]):
                if proc.info["cmdline"] == ["sleep", seconds]:
                    pid = proc.info["pid"]
            time.sleep(0.02)
        require(pid is not None, "the sandboxed sleep was found on the host")
        assert pid is not None
        host_view = _status_fields(Path(f"/proc/{pid}/status").read_text())
        namespaces = {ns: (os.readlink(f"/proc/{pid}/ns/{ns}"), os.readlink(f"/proc/self/ns/{ns}"))
                      for ns in ("user", "mnt", "pid", "net", "ipc", "uts")}
    finally:
        for proc in psutil.process_iter(["pid", "cmdline"]):
            if proc.info["cmdline"] == ["sleep", seconds]:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
        thread.join(RUN_TIMEOUT)
    assert host_view["Seccomp"] == "2"
    assert host_view["NoNewPrivs"] == "1"
    assert host_view["CapEff"] == "0000000000000000"
    assert {ns for ns, (theirs, ours) in namespaces.items() if theirs == ours} == set()
    inside = _status_fields(result["proc"].stdout.decode())
    assert inside["Seccomp"] == "2"
    assert inside["NoNewPrivs"] == "1"


# -- 11. mount and namespaces ------------------------------------------------------

_CLONE_NR = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
_UNSHARE_PY = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def unshare(flags):\n"
    "    fn = getattr(os, 'unshare', None)\n"
    "    if fn is None:\n"
    "        return libc.unshare(flags) == 0\n"
    "    try:\n"
    "        fn(flags)\n"
    "    except OSError:\n"
    "        return False\n"
    "    return True\n"
)
PRIVILEGE_ATTACKS = {
    "mount a tmpfs": "mkdir -p mnt && mount -t tmpfs none mnt && touch escaped",
    "mount a tmpfs on /mnt": "mount -t tmpfs none /mnt && touch escaped",
    "bind-mount /etc": "mkdir -p mnt && mount --bind /etc mnt && touch escaped",
    "remount / read-write": "mount -o remount,rw / && touch escaped",
    "unmount /proc": "umount -l /proc && touch escaped",
    "unshare -r (nested user namespace)": "unshare -r true && touch escaped",
    "unshare -Urm then mount": "unshare -Urm sh -c 'mount -t tmpfs none /mnt' && touch escaped",
    "python unshare(CLONE_NEWUSER)":
        f"{PY} -c \"{_UNSHARE_PY}\nif unshare(0x10000000): open('escaped', 'w')\"",
    "python unshare(CLONE_NEWNS)":
        f"{PY} -c \"{_UNSHARE_PY}\nif unshare(0x00020000): open('escaped', 'w')\"",
    "raw clone(CLONE_NEWUSER)": (
        f"{PY} -c \"import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"pid = libc.syscall({_CLONE_NR}, 0x10000000 | 17, 0, 0, 0, 0)\n"
        "if pid == 0:\n    open('escaped', 'w').close()\n    os._exit(0)\n"
        "if pid > 0:\n    os.waitpid(pid, 0)\""
    ),
    "chroot": "chroot / true && touch escaped",
}


@pytest.mark.parametrize("attack", list(PRIVILEGE_ATTACKS))
def test_a_command_cannot_mount_or_create_namespaces(workspace: Path, attack: str) -> None:
    """Attack: regain capabilities in a nested user namespace, or remount
    and unmount the masks. Each attack touches `escaped` in the workspace
    only if its privileged step succeeded."""
    if attack.startswith("raw clone") and _CLONE_NR is None:
        pytest.skip(f"no clone syscall number for {platform.machine()}")
    proc = sh(workspace, f"{PRIVILEGE_ATTACKS[attack]}; echo ran > control.txt")
    consume_control(workspace, proc)
    assert not (workspace / "escaped").exists(), output(proc)


# -- 12, 13. processes that outlive the call, timeouts ---------------------------------

BACKGROUND_ATTACKS = {
    "nohup and setsid": "nohup sleep {a} >/dev/null 2>&1 & setsid sleep {b} & echo started",
    "double-forked daemon": (
        PY + " -c 'import os\nif os.fork(): os._exit(0)\nos.setsid()\nif os.fork(): os._exit(0)\n"
        "os.execvp(\"sleep\", [\"sleep\", \"{a}\"])' & sleep 0.2; echo started"
    ),
    "ignores SIGHUP and SIGTERM": "(trap '' HUP TERM INT; exec sleep {a}) & echo started",
}


@pytest.mark.parametrize("attack", list(BACKGROUND_ATTACKS))
def test_no_process_outlives_the_call(workspace: Path, attack: str) -> None:
    """Attack: leave a process running after the call returns (a miner, a
    keylogger, something that writes later)."""
    a, b = unique_seconds(300), unique_seconds(301)
    started = time.monotonic()
    proc = sh(workspace, BACKGROUND_ATTACKS[attack].format(a=a, b=b), timeout=20)
    elapsed = time.monotonic() - started
    require(b"started" in proc.stdout, "the background processes were started", proc)
    assert proc.returncode == 0, output(proc)
    assert processes_mentioning(a) + processes_mentioning(b) == []
    assert elapsed < 10


@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    ["exec sleep {s}", "trap '' TERM INT HUP; sleep {s}", "sleep {s} & sleep {s} & wait"],
    ids=["plain sleep", "ignores SIGTERM", "background children"],
)
def test_a_timeout_ends_the_whole_tree_with_124(workspace: Path, script: str) -> None:
    """Attack: run past the wall timeout (or ignore the polite signal)."""
    seconds = unique_seconds(30)
    started = time.monotonic()
    proc = sg(workspace, "sh", "-c", script.format(s=seconds), options=("--timeout", "1"),
              timeout=20)
    elapsed = time.monotonic() - started
    assert proc.returncode == 124, output(proc)
    assert elapsed < 6
    assert "timed out" in proc.stderr.decode()
    assert processes_mentioning(seconds) == []


# -- 14. output floods ---------------------------------------------------------------


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def test_200_mb_of_output_streams_through_shellgate_in_bounded_memory(workspace: Path) -> None:
    """Attack: blow up the gateway's memory with output. The CLI streams it
    on, and its own peak RSS (VmHWM, sampled from the host) stays far below
    the size of the flood."""
    result: dict[str, subprocess.CompletedProcess[bytes]] = {}
    thread = threading.Thread(target=lambda: result.setdefault(
        "proc", sg(workspace, "head", "-c", str(FLOOD), "/dev/zero", timeout=60)))
    me = psutil.Process()
    thread.start()
    peak, samples = 0, 0
    while thread.is_alive():
        for child in me.children():
            try:
                if SHELLGATE in child.cmdline() and str(workspace) in child.cmdline():
                    peak = max(peak, _peak_rss_kib(child.pid))
                    samples += 1
            except (psutil.Error, OSError):
                continue
        time.sleep(0.01)
    thread.join()
    proc = result["proc"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(proc.stdout) == FLOOD
    require(samples > 0, "the shellgate process was sampled while it ran")
    assert peak < 128 * 1024, f"shellgate peaked at {peak} KiB for a {FLOOD}-byte flood"


@pytest.mark.parametrize("limit", [None, 4096])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_the_in_process_api_caps_captured_output(
    workspace: Path, limit: int | None, stream: str
) -> None:
    """Attack: the same flood through `sandbox.run`: the result keeps at
    most `limits.max_output_bytes` per stream and says it truncated."""
    policy = sandbox.load_profile("workspace-write")
    if limit is not None:
        policy = policy.model_copy(update={
            "limits": policy.limits.model_copy(update={"max_output_bytes": limit})})
    cap = policy.limits.max_output_bytes
    redirect = "" if stream == "stdout" else " >&2"
    result = sandbox.run(["sh", "-c", f"head -c {FLOOD} /dev/zero{redirect}"], policy,
                         cwd=str(workspace), timeout=60)
    assert result.exit_code == 0
    assert result.truncated
    kept = getattr(result, stream)
    marker_room = 100  # "[... N bytes of output truncated ...]"
    assert cap <= len(kept.encode()) <= cap + marker_room
    assert "truncated" in kept


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


# -- 16. the read-only profile -----------------------------------------------------------

READ_ONLY_ATTACKS = {
    "create a file": "echo pwned > new.txt",
    "append to a file": "echo pwned >> README.md",
    "truncate a file": "truncate -s 0 README.md",
    "delete a file": "rm -f README.md",
    "rename a file": "mv README.md moved.md",
    "make a directory": "mkdir sub",
    "touch (mtime)": "touch README.md",
    "chmod": "chmod 777 README.md",
    "python open()": PY + " -c 'open(\"README.md\", \"w\")'",
}


@pytest.mark.parametrize("attack", list(READ_ONLY_ATTACKS))
def test_the_read_only_profile_cannot_change_the_workspace(workspace: Path, attack: str) -> None:
    """Attack: any change at all to the workspace under --profile read-only
    (the private /tmp stays writable)."""
    before = snapshot(workspace)
    script = f"{READ_ONLY_ATTACKS[attack]}; echo ok > /tmp/scratch && cat /tmp/scratch"
    proc = sh(workspace, script, options=("--profile", "read-only"))
    require(proc.stdout.decode().strip() == "ok", "the command ran (private /tmp works)", proc)
    assert snapshot(workspace) == before


# -- 17. never unsandboxed ------------------------------------------------------------------

FAKE_BWRAP = """#!/bin/sh
echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2
exit 1
"""


def _tools_without_bwrap(tmp_path: Path, fake_bwrap: bool) -> dict[str, str]:
    """An environment whose PATH holds every tool of the machine except the
    real bwrap (so the command itself, sh, would be found if anything fell
    back to running it), optionally with a bwrap that cannot work here."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for directory in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin",
                      "/bin"):
        with contextlib.suppress(OSError):
            for entry in os.scandir(directory):
                link = tools / entry.name
                if entry.name != "bwrap" and not link.exists() and not link.is_symlink():
                    link.symlink_to(entry.path)
    if fake_bwrap:
        fake = tools / "bwrap"
        fake.write_text(FAKE_BWRAP)
        fake.chmod(0o755)
    require(shutil.which("sh", path=str(tools)) is not None, "sh is on the reduced PATH")
    return {**os.environ, "PATH": str(tools)}


@pytest.mark.parametrize("bwrap", ["missing", "cannot create namespaces"])
def test_shellgate_never_falls_back_to_running_unsandboxed(
    workspace: Path, tmp_path: Path, bwrap: str
) -> None:
    """Attack: make the sandbox unavailable (no bwrap on PATH, or a bwrap
    that cannot work here) and hope the command runs anyway. It must not
    run: exit 125, and the last line on stderr says why."""
    env = _tools_without_bwrap(tmp_path, fake_bwrap=bwrap != "missing")
    proc = sg(workspace, "sh", "-c", "echo ran > ran.txt; echo ran", env=env)
    err = proc.stderr.decode()
    assert proc.returncode == 125, output(proc)
    assert not (workspace / "ran.txt").exists()
    assert proc.stdout == b""
    last = err.strip().splitlines()[-1]
    assert last.startswith("shellgate: sandbox unavailable:"), err
    assert "bwrap" in last.lower() or "bubblewrap" in last.lower(), err
    if bwrap == "missing":
        assert err.count("\n") == 1, err


def test_a_bwrap_that_cannot_start_is_reported_in_one_line(
    workspace: Path, tmp_path: Path
) -> None:
    """A sandbox that cannot start says so in exactly one line (exit 125)."""
    env = _tools_without_bwrap(tmp_path, fake_bwrap=True)
    proc = sg(workspace, "true", env=env)
    require(proc.returncode == 125, "the sandbox did not start", proc)
    assert proc.stderr.decode().count("\n") == 1, proc.stderr
