"""Golden files for the two pure renderers of a filesystem plan: the bwrap
argument list and the macOS SBPL profile. They run everywhere (no sandbox
needed). Regenerate after an intended change with
``SHELLGATE_REGEN_GOLDEN=1 pytest tests/sandbox/test_golden.py`` and review
the diff like code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox import FsPlan
from sandbox.linux.bwrap import BwrapOptions, bwrap_args, bwrap_command, encode_args
from sandbox.macos.seatbelt import sbpl_profile

GOLDEN = Path(__file__).parent / "golden"

PLAN = FsPlan(
    cwd="/home/u/project",
    writable=("/home/u/project", "/home/u/.cache/pip"),
    pinned=("/home/u/project/.git", "/home/u/project/.claude"),
    protected=("/home/u/project/.git/hooks", "/home/u/project/.git/config",
               "/home/u/project/.claude/settings.json"),
    missing=(("/home/u/project/.shellgate", "dir"), ("/home/u/project/.mcp.json", "file")),
    hidden_dirs=("/home/u/.ssh", "/home/u/.aws"),
    hidden_files=("/etc/shadow", "/home/u/.netrc"),
    private_tmp="/run/user/1000/shellgate-1000/run-abc/tmp",
)
READ_ONLY_PLAN = FsPlan(
    cwd="/tmp/pytest/ws", writable=(), pinned=(), protected=(), missing=(),
    hidden_dirs=("/home/u/.ssh",), hidden_files=(), private_tmp="/scratch/tmp",
)

CASES = {
    "bwrap-workspace-write.args": lambda: "\n".join(
        bwrap_args(PLAN, BwrapOptions(seccomp_fd=7))) + "\n",
    "bwrap-as-root.args": lambda: "\n".join(
        bwrap_args(PLAN, BwrapOptions(
            seccomp_fd=7, status_fd=8, block_fd=9, proc_read_only=("/proc",),
            sys_hidden=("/sys",), sys_visible=("/sys/devices/system/cpu",)))) + "\n",
    "bwrap-read-only.args": lambda: "\n".join(
        bwrap_args(READ_ONLY_PLAN, BwrapOptions(seccomp_fd=5, hide_run=False))) + "\n",
    "seatbelt-workspace-write.sbpl": lambda: sbpl_profile(PLAN),
    "seatbelt-networked.sbpl": lambda: sbpl_profile(PLAN, proxy_port=49152),
}


@pytest.mark.parametrize("name", CASES)
def test_rendered_plan_matches_its_golden_file(name: str) -> None:
    text = CASES[name]()
    path = GOLDEN / name
    if os.environ.get("SHELLGATE_REGEN_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_mounts_are_ordered_shallow_to_deep_so_the_specific_path_wins() -> None:
    args = bwrap_args(PLAN, BwrapOptions())
    mounts = [args[i + 2] if args[i] in ("--bind", "--ro-bind") else args[i + 1]
              for i in range(len(args)) if args[i] in ("--bind", "--ro-bind", "--tmpfs")]
    index = {m: mounts.index(m) for m in mounts}
    assert index["/home/u/project"] < index["/home/u/project/.git"] \
        < index["/home/u/project/.git/hooks"]
    assert index["/home/u/.ssh"] > index["/"]


def test_every_namespace_is_unshared_and_network_only_when_asked() -> None:
    isolated = bwrap_args(PLAN, BwrapOptions())
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                 "--unshare-cgroup-try", "--unshare-net", "--new-session", "--die-with-parent"):
        assert flag in isolated
    assert isolated[isolated.index("--cap-drop") + 1] == "ALL"
    assert "--unshare-net" not in bwrap_args(PLAN, BwrapOptions(share_net=True))


def test_the_command_stays_on_the_real_command_line_and_the_rest_goes_through_a_fd() -> None:
    argv = bwrap_command("/usr/bin/bwrap", 9, ["sh", "-c", "echo hi"])
    assert argv == ["/usr/bin/bwrap", "--args", "9", "--", "sh", "-c", "echo hi"]
    assert encode_args(["--bind", "/a b", "/a b"]) == b"--bind\0/a b\0/a b\0"


def test_a_thousand_mounts_do_not_touch_the_argv_limit() -> None:
    many = FsPlan(cwd="/w", writable=("/w",), pinned=(),
                  protected=tuple(f"/w/p{i}" for i in range(1000)), missing=(),
                  hidden_dirs=(), hidden_files=())
    args = bwrap_args(many, BwrapOptions())
    assert len(args) > 3000
    assert len(bwrap_command("bwrap", 3, ["true"])) == 5


def test_sbpl_quotes_paths_that_contain_quotes_and_backslashes() -> None:
    odd = FsPlan(cwd='/w/a"b\\c', writable=('/w/a"b\\c',), pinned=(), protected=(), missing=(),
                 hidden_dirs=(), hidden_files=())
    assert '(subpath "/w/a\\"b\\\\c")' in sbpl_profile(odd)
