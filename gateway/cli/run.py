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
    TERMINAL_RESET,
    ExecResult,
    Limits,
    NetworkPolicy,
    PolicyError,
    RunFailed,
    RunInterrupted,
    SandboxError,
    SandboxPolicy,
    load_profile,
    rehearse,
    report_lines,
    run,
    shown,
)

from ..errors import UsageError
from ..pathnames import AUDIT_LOG_ENV, audit_path, settings_files
from .common import abs_dir, one_line, settings_flag

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import IO, TextIO

#: Exit statuses of `shellgate run` that are not the command's own.
EXIT_TIMEOUT = 124
EXIT_SANDBOX = 125
#: the memory limit killed the tree (128 + SIGKILL, as container runtimes say it)
EXIT_MEMORY = 137
#: Ctrl-C ended the run (128 + SIGINT)
EXIT_INTERRUPTED = 130


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
        _tell([one_line(exc)])
        return EXIT_SANDBOX
    # stdin: a terminal is not handed over; a pipe or file is copied into the
    # command's own pipe by the sandbox (never the descriptor itself).
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.fileno()
    out = _Output(_binary(sys.stdout), _binary(sys.stderr))
    try:
        result = run(argv, policy, cwd=cwd, timeout=args.timeout, on_output=out.stream,
                     stdin=stdin)
    except RunInterrupted as exc:  # Ctrl-C: the report still comes
        out.release()
        _tell(report_lines(exc.result), out)
        return EXIT_INTERRUPTED
    except RunFailed as exc:
        out.release()
        _tell([f"internal error (nothing runs outside the sandbox; the command was "
               f"stopped): {one_line(exc)}", *report_lines(exc.result)], out)
        return EXIT_SANDBOX
    except SandboxError as exc:
        _tell([f"sandbox unavailable: {one_line(exc)}"])
        return EXIT_SANDBOX
    except Exception as exc:
        _tell([f"internal error (the command did not start): {one_line(exc)}"])
        return EXIT_SANDBOX
    if result.exec_error is None:
        out.release()
    return _report(result, out)


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
    policy = _audit_hidden(_with_settings(load_profile(args.profile), args))
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


def _audit_hidden(policy: SandboxPolicy) -> SandboxPolicy:
    """The policy, with an audit log named by ``$SHELLGATE_AUDIT_LOG``
    hidden: the other verbs write there, and a command that could read it
    would see every call, one that could write it would cut calls out of
    it. (The default log is in the state directory, which every plan
    hides: sandbox/owndirs.py.)"""
    if not os.environ.get(AUDIT_LOG_ENV):
        return policy
    fs = policy.filesystem
    log = os.path.realpath(audit_path(None, os.environ))
    return policy.model_copy(update={"filesystem": fs.model_copy(
        update={"deny_read": (*fs.deny_read, log)})})


def _with_settings(policy: SandboxPolicy, args: argparse.Namespace) -> SandboxPolicy:
    """The profile with the settings of every source in it, loaded as every
    verb loads them (``load_permissions``): the managed policy, `--settings`,
    the project's and the user's files. A file where sandboxed commands may
    write (the workspace, an `--allow-write` path, a root the settings
    grant) is a repository's, whatever flag names it: it may narrow the
    sandbox, never widen it. Each mistake in a file is said once."""
    if args.settings is not None and not os.path.isfile(args.settings):
        raise UsageError(f"--settings {args.settings!r} is not a file")
    settings_flag(args.settings)
    cwd = os.path.realpath(abs_dir(args.cwd))
    home = os.path.expanduser("~")
    if args.settings is None and not any(map(os.path.lexists, settings_files(cwd, home))):
        return policy  # nothing to read: no settings machinery (pydantic) for this run
    from ..permissions import CliPermissions, load_permissions, sandbox_policy  # noqa: PLC0415

    roots = (*policy.filesystem.allow_write, *map(os.path.abspath, args.allow_write))
    loaded = load_permissions(cwd, home, CliPermissions(
        settings_file=args.settings,
        writable_roots=tuple(os.path.join(cwd, os.path.expanduser(r)) for r in roots)))
    for problem in loaded.problems:
        _tell([f"settings: {one_line(Exception(str(problem)))}"])
    return sandbox_policy(policy, loaded, workspace=cwd, home=home)


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
        #: the last output written did not end a line (the report then
        #: starts on a line of its own)
        self.mid_line = False

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
        if id(target) in self.gone or not data:
            return
        try:
            target.write(data)
            target.flush()
            self.mid_line = not data.endswith(b"\n")
        except (OSError, ValueError):
            # EPIPE, ENOSPC (`> /dev/full`), a closed stream: the output is
            # lost, the command still runs to its own status
            self.gone.add(id(target))
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), target.fileno())


def _report(result: ExecResult, out: _Output) -> int:
    if result.exec_error is not None:
        sys.stderr.write(result.stderr_text)
        return result.exit_code if result.exit_code is not None else 127
    # every way the run ended says the guards' reports: the command chooses
    # whether it times out, signals itself or fills its memory
    _tell(report_lines(result), out)
    if result.timed_out:
        return EXIT_TIMEOUT
    if result.memory_exceeded:
        return EXIT_MEMORY
    if result.signal is not None:
        return 128 + result.signal
    return result.exit_code if result.exit_code is not None else EXIT_SANDBOX


def _tell(lines: Sequence[str], out: _Output | None = None) -> None:
    """shellgate's own lines on stderr, each inert (:func:`sandbox.shown`:
    a name in them is the command's choice). On a terminal they follow a
    reset: the command's output may have ended inside an escape sequence
    (an OSC left open swallows what follows up to its end), in a colour or
    invisible, or in the middle of a line."""
    if not lines:
        return
    text = "".join(f"shellgate: {shown(line)}\n" for line in lines)
    stream = sys.stderr
    if stream is None:
        return
    try:
        if stream.isatty():
            text = TERMINAL_RESET + ("\n" if out is not None and out.mid_line else "") + text
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass  # stderr gone (closed, EPIPE): nothing more can be said
