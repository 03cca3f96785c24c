"""Escape tests: writes outside the workspace, the host's /tmp, symlinks and
hard links, the read-only profile.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from escape_kit import (
    PY,
    consume_control,
    require,
    sh,
    snapshot,
    user_home,
)

pytestmark = [pytest.mark.sandbox]



# -- 1. writes outside the workspace ----------------------------------------

OUTSIDE_DIRS: dict[str, Callable[[Path, Path], Path]] = {
    "the workspace's parent": lambda ws, outside: ws.parent,
    "the home directory": lambda ws, outside: user_home(),
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


def test_a_command_cannot_rewrite_the_seccomp_filter_the_next_run_loads(
        workspace: Path, outside: Path) -> None:
    """Attack: the compiled seccomp filter is kept between runs in the
    sandbox's state directory; a command that replaced it with a program
    allowing everything would run the next command unfiltered."""
    runtime = outside / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    unix = f"{PY} -c 'import socket; socket.socket(socket.AF_UNIX)'"
    first = sh(workspace, f"{unix} 2>/dev/null || echo refused > control.txt", env=env)
    require(consume_control(workspace, first).strip() == "refused", "the filter works", first)
    state = runtime / f"shellgate-{os.getuid()}"
    saved = sorted(state.glob("seccomp-*.bpf"))
    require(len(saved) == 1, "the filter was kept between runs")
    before = saved[0].read_bytes()
    attack = (f"for f in {shlex.quote(str(state))}/seccomp-*.bpf; do "
              f"printf '\\006\\000\\000\\000\\000\\000\\377\\177' > \"$f\"; done; "
              f"ls {shlex.quote(str(state))} > listing.txt 2>&1; echo ran > control.txt")
    proc = sh(workspace, attack, env=env)
    consume_control(workspace, proc)
    assert saved[0].read_bytes() == before
    assert "seccomp-" not in (workspace / "listing.txt").read_text()
    again = sh(workspace, f"{unix} 2>/dev/null || echo refused > control.txt", env=env)
    assert consume_control(workspace, again).strip() == "refused"
