"""``shellgate run``: run a command inside the sandbox.

Exit status: the command's own; 124 when the timeout killed it; 125 (one
line on stderr) when the sandbox could not start, so the command never ran;
126/127 when the command could not be executed in the sandbox (not
executable / not found), as a shell reports it; 128+N when a signal ended it.
"""

from __future__ import annotations

import contextlib
import os
import sys

from sandbox import (
    ExecResult,
    Limits,
    NetworkPolicy,
    PolicyError,
    SandboxError,
    SandboxPolicy,
    apply_settings,
    load_profile,
    rehearse,
    run,
)

from ..errors import UsageError
from .common import abs_dir, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import IO, TextIO

#: Exit statuses of `shellgate run` that are not the command's own.
EXIT_TIMEOUT = 124
EXIT_SANDBOX = 125
#: the memory limit killed the tree (128 + SIGKILL, as container runtimes say it)
EXIT_MEMORY = 137


def main(args: argparse.Namespace) -> int:
    argv = list(args.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        raise UsageError("run needs a command: shellgate run [options] -- ARGV...")
    cwd = abs_dir(args.cwd)
    try:
        policy = _policy(args)
    except (PolicyError, ValueError) as exc:
        print(f"shellgate: {one_line(exc)}", file=sys.stderr)
        return EXIT_SANDBOX
    # stdin: a terminal is not handed over; a pipe or file is copied into the
    # command's own pipe by the sandbox (never the descriptor itself).
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.fileno()
    out = _Output(_binary(sys.stdout), _binary(sys.stderr))
    try:
        result = run(argv, policy, cwd=cwd, timeout=args.timeout, on_output=out.stream,
                     stdin=stdin)
    except SandboxError as exc:
        print(f"shellgate: sandbox unavailable: {one_line(exc)}", file=sys.stderr)
        return EXIT_SANDBOX
    except Exception as exc:
        print(
            f"shellgate: internal error (nothing runs outside the sandbox; a started "
            f"command was stopped): {one_line(exc)}",
            file=sys.stderr,
        )
        return EXIT_SANDBOX
    if result.exec_error is None:
        out.release()
    return _report(result)


def rehearse_run(args: argparse.Namespace) -> None:
    """What :func:`main` does before the command starts, with nothing
    started: the policy from the flags, and the sandbox's own rehearsal of
    the run (:func:`sandbox.rehearse`). Errors are the caller's."""
    argv = list(args.argv)
    rehearse(argv[1:] if argv[:1] == ["--"] else argv, _policy(args), cwd=abs_dir(args.cwd))


def _binary(stream: TextIO | None) -> IO[bytes]:
    """The byte stream under a text stream; /dev/null when the descriptor
    was closed (`shellgate run … >&-` leaves sys.stdout None)."""
    if stream is None:
        return open(os.devnull, "wb")
    buffer: IO[bytes] = stream.buffer
    return buffer


#: `shellgate run` flags -> the `limits` keys they set
_LIMIT_FLAGS = {"memory": "memory", "tmp_size": "tmp_size", "shm_size": "shm_size",
                "run_size": "run_size", "max_processes": "max_processes"}


def _policy(args: argparse.Namespace) -> SandboxPolicy:
    policy = load_profile(args.profile)
    if args.settings:
        # the settings models (pydantic) only when a settings file is read
        from sandbox import parse_settings  # noqa: PLC0415

        policy = apply_settings(policy, parse_settings(_read_sandbox_key(args.settings)))
    flags = {key: getattr(args, flag) for flag, key in _LIMIT_FLAGS.items()
             if getattr(args, flag, None) is not None}
    if flags:
        # the user's own flags replace the profile's values (validated as a profile's)
        limits = Limits.model_validate({**policy.limits.model_dump(), **flags})
        policy = policy.model_copy(update={"limits": limits})
    if not (args.allow_write or args.allow_domain or args.git_read_only):
        return policy
    fs, net = policy.filesystem, policy.network
    return policy.model_copy(
        update={
            "filesystem": fs.model_copy(
                update={
                    "allow_write": fs.allow_write
                    + tuple(os.path.abspath(p) for p in args.allow_write),
                    "git": "read-only" if args.git_read_only else fs.git,
                }
            ),
            "network": NetworkPolicy(
                allowed_domains=net.allowed_domains + tuple(args.allow_domain),
                denied_domains=net.denied_domains,
                allow_unix_sockets=net.allow_unix_sockets,
                allow_private_addresses=net.allow_private_addresses,
            ),
        }
    )


#: the most stderr held back while it may be bubblewrap's failure line
_HOLD_MAX = 4096


class _Output:
    """Streams the command's output as it comes. Stderr that so far is one
    line starting with ``bwrap: `` is held back (bubblewrap writes its line
    in pieces): when the sandbox itself failed, it is replaced by
    shellgate's one-line report; when the command ran — decided from
    bubblewrap's status, never from this text — it is released as soon as
    anything else arrives, or at the end."""

    def __init__(self, out: IO[bytes], err: IO[bytes]) -> None:
        self.out, self.err = out, err
        self.holding = True
        self.held = b""
        #: a reader that went away (`shellgate run ... | head`): the rest of
        #: that stream is dropped, the command runs on to its own status
        self.gone: set[int] = set()

    def stream(self, name: str, data: bytes) -> None:
        if name == "stderr" and self.holding:
            candidate = self.held + data
            one_line = b"\n" not in candidate[:-1]
            # bubblewrap's own line is short. Attack (from a review): a
            # command writing 64 MiB after `bwrap: ` with no newline was held
            # (and re-copied per chunk) in this process, outside every limit.
            short = len(candidate) <= _HOLD_MAX
            if one_line and short and (candidate.startswith(b"bwrap: ")
                                       or b"bwrap: ".startswith(candidate)):
                self.held = candidate
                return
        self.release()
        self._write(self.out if name == "stdout" else self.err, data)

    def release(self) -> None:
        self.holding = False
        if self.held:
            self._write(self.err, self.held)
            self.held = b""

    def _write(self, target: IO[bytes], data: bytes) -> None:
        if id(target) in self.gone:
            return
        try:
            target.write(data)
            target.flush()
        except (OSError, ValueError):
            # EPIPE, ENOSPC (`> /dev/full`), a closed stream: the output is
            # lost, the command still runs to its own status
            self.gone.add(id(target))
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), target.fileno())


def _report(result: ExecResult) -> int:
    if result.exec_error is not None:
        sys.stderr.write(result.stderr_text)
        return result.exit_code if result.exit_code is not None else 127
    if result.timed_out:
        print(f"shellgate: timed out after {result.duration:.1f}s; process tree killed",
              file=sys.stderr)
        return EXIT_TIMEOUT
    if result.killed_reason:
        print(f"shellgate: killed: {result.killed_reason}", file=sys.stderr)
    for note in result.reports:
        print(f"shellgate: {note}", file=sys.stderr)
    for problem in result.problems:
        print(f"shellgate: warning: {problem}", file=sys.stderr)
    if result.memory_exceeded:
        return EXIT_MEMORY
    if result.signal is not None:
        return 128 + result.signal
    return result.exit_code if result.exit_code is not None else EXIT_SANDBOX


def _read_sandbox_key(path: str) -> object:
    import json  # noqa: PLC0415 - only with a settings file: not every cold run

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read settings {path!r}: {one_line(exc)}") from None
    return data.get("sandbox") if isinstance(data, dict) else None
