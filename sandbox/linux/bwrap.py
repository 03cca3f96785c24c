"""The bubblewrap command line, as a pure function of a filesystem plan.

Everything except the command itself goes through ``--args FD`` (a memfd of
NUL-separated arguments), so hundreds of mounts never meet the kernel's
argument-size limit. Mounts are ordered shallow to deep: a more specific path
always wins (``/home/u`` hidden, ``/home/u/project`` bound writable on top,
``/home/u/project/.git/hooks`` read-only on top of that).

bubblewrap reports on ``--json-status-fd``: the sandbox's PID once it
exists, and ``{"exit-code": N}`` only if the command was really executed.
That — never a ``bwrap:`` line on stderr, which the command can print too —
is how a run tells the sandbox's failures from the command's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from values import valueclass

from ..plan import FsPlan


@valueclass
class BwrapOptions:
    share_net: bool = False
    seccomp_fd: int | None = None
    hostname: str = "sandbox"
    #: hide the host's /run (docker.sock, the D-Bus system bus, per-user
    #: runtime dirs): where host services listen on unix sockets
    hide_run: bool = True
    #: bwrap writes the sandbox's PID there, then waits on ``block_fd``
    #: before running the command (resource limits are set in between);
    #: at the end it writes the exit code, if the command was executed
    status_fd: int | None = None
    block_fd: int | None = None
    #: /proc entries bound read-only over the sandbox's own /proc, or
    #: ``("/proc",)`` to remount all of it read-only (when the sandbox's root
    #: is the host's root; see profiles/kernel-interfaces.toml)
    proc_read_only: tuple[str, ...] = ()
    #: /sys directories hidden under an empty tmpfs
    sys_hidden: tuple[str, ...] = ()
    #: bound back read-only over a hidden /sys (root: an allowlist)
    sys_visible: tuple[str, ...] = ()
    #: size caps (bytes) of the sandbox's own tmpfs mounts: /tmp, /dev/shm,
    #: /run, and each empty directory that hides a sensitive one
    tmp_size: int = 2 << 30
    shm_size: int = 256 << 20
    run_size: int = 16 << 20
    hidden_size: int = 1 << 20
    #: an empty, read-only host directory: bound over a hidden directory
    #: (no tmpfs: nothing to fill) unless something is mounted below it
    empty_dir: str | None = None


def _mounted_below(paths: list[str]) -> set[str]:
    """Every proper ancestor of ``paths``: the directories that have a
    mount somewhere below them."""
    out: set[str] = set()
    for path in paths:
        parent = os.path.dirname(path.rstrip("/"))
        while parent not in out and parent != "/":
            out.add(parent)
            parent = os.path.dirname(parent)
    return out


def _depth(path: str) -> int:
    return 0 if path == "/" else path.rstrip("/").count("/")


def bwrap_args(plan: FsPlan, opts: BwrapOptions) -> list[str]:
    """The arguments for ``--args FD``: namespaces, mounts, working directory
    and seccomp — everything but the command."""
    args = [*_namespaces(opts), *_system_mounts(opts), *_plan_mounts(plan, opts)]
    args += ["--chdir", plan.cwd]
    if opts.seccomp_fd is not None:
        args += ["--seccomp", str(opts.seccomp_fd)]
    if opts.status_fd is not None:
        args += ["--json-status-fd", str(opts.status_fd)]
    if opts.block_fd is not None:
        args += ["--block-fd", str(opts.block_fd)]
    return args


def _namespaces(opts: BwrapOptions) -> list[str]:
    args = [
        "--new-session",  # no controlling terminal: TIOCSTI cannot reach the user's tty
        "--die-with-parent",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if not opts.share_net:
        args.append("--unshare-net")
    return [*args, "--hostname", opts.hostname, "--cap-drop", "ALL"]


def _system_mounts(opts: BwrapOptions) -> list[str]:
    """The host read-only, the sandbox's own /dev and /proc."""
    # Every tmpfs the command can write is size-capped, and /dev is read-only.
    # Attack (from a review): /dev/shm and /run were tmpfs of half of RAM
    # each, and tmpfs pages belong to no process, so the OOM killer cannot
    # free them by killing the command; bwrap's --dev is one more such tmpfs
    # (`cat /dev/zero > /dev/x`). Device nodes stay usable on a read-only
    # /dev; /dev/pts is its own mount.
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev",
            "--perms", "1777", "--size", str(opts.shm_size), "--tmpfs", "/dev/shm",  # noqa: S108
            "--proc", "/proc"]
    for entry in opts.proc_read_only:
        if entry == "/proc":
            args += ["--remount-ro", "/proc"]
        else:
            args += ["--ro-bind-try", entry, entry]
    return args


def _plan_mounts(plan: FsPlan, opts: BwrapOptions) -> list[str]:
    """The plan's mounts, shallow to deep (a deeper path wins)."""
    ops: list[tuple[int, int, list[str]]] = []  # (depth, rank, args)

    def op(rank: int, path: str, *items: str) -> None:
        ops.append((_depth(path), rank, list(items)))

    if plan.private_tmp is not None:
        # A tmpfs, not a host directory: `fallocate -l 20G /tmp/big` landed
        # on the host's disk, and a mode-000 tree there outlived the run.
        # The tmpfs is capped, counts against the run's memory cgroup, and
        # vanishes with the sandbox's mount namespace.
        op(0, "/tmp", "--perms", "1777", "--size", str(opts.tmp_size),  # noqa: S108
           "--tmpfs", "/tmp")  # noqa: S108
    for seen in dict.fromkeys(p for p in (plan.workspace, plan.cwd) if p):
        # the workspace and the working directory stay visible over a private /tmp
        if not any(seen == w or seen.startswith(w.rstrip("/") + "/") for w in plan.writable):
            op(1, seen, "--ro-bind", seen, seen)
    for path in plan.writable:
        op(1, path, "--bind", path, path)
    for path in plan.pinned:
        op(2, path, "--bind", path, path)
    for path in plan.protected:
        op(3, path, "--ro-bind", path, path)
    # Hiding a directory is an empty read-only directory bound over it.
    # Attack (from a red-team review): an empty *tmpfs* there took 400,000
    # files in its 1 MiB (bubblewrap 0.8 cannot cap a tmpfs's files), about
    # 330 MB of kernel memory no cgroup counts for an unprivileged user. A
    # tmpfs (capped) only where something is mounted below the hidden path:
    # bubblewrap must make the mount point in it.
    below = _mounted_below([*plan.writable, *plan.pinned, *plan.protected,
                            *plan.hidden_files, plan.cwd,
                            *([plan.workspace] if plan.workspace else []),
                            *opts.sys_visible])
    for path in (*plan.hidden_dirs, *opts.sys_hidden):
        if opts.empty_dir is not None and path not in below:
            op(5, path, "--ro-bind", opts.empty_dir, path)
        else:
            op(5, path, "--size", str(opts.hidden_size), "--tmpfs", path)
    for path in plan.hidden_files:
        op(5, path, "--ro-bind", "/dev/null", path)
    for path in opts.sys_visible:
        op(6, path, "--ro-bind", path, path)
    if opts.hide_run:
        op(0, "/run", "--size", str(opts.run_size), "--tmpfs", "/run")
    return [item for _, _, items in sorted(ops, key=lambda o: (o[0], o[1])) for item in items]


def encode_args(args: Sequence[str]) -> bytes:
    """NUL-separated, as ``--args`` reads them."""
    return b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args)


def bwrap_command(bwrap: str, args_fd: int, argv: Sequence[str]) -> list[str]:
    return [bwrap, "--args", str(args_fd), "--", *argv]
