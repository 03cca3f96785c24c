"""What every verb that runs tools shares: settings from every source and
the flags, the audit log, and the session they make."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import UsageError
from ..session import Session
from .common import abs_dir, home, one_line


def open_session(args: argparse.Namespace, **context_args: Any) -> Session:
    """A session for ``args`` (``--cwd``, ``--add-dir``, ``--settings``,
    ``--allowedTools``, ``--disallowedTools``, ``--permission-mode``,
    ``--audit-log``). Each mistake in a settings file is said once on
    stderr; the audit log records what was loaded."""
    from ..audit import AuditError, FileAudit  # noqa: PLC0415
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
    cli = CliPermissions(
        allowed_tools=tuple(v for group in args.allowed_tools for v in group),
        disallowed_tools=tuple(v for group in args.disallowed_tools for v in group),
        permission_mode=args.permission_mode, add_dirs=tuple(args.add_dir),
        settings_file=args.settings)
    permissions = load_permissions(os.path.realpath(cwd), home(), cli)
    for problem in permissions.problems:
        print(f"shellgate: settings: {one_line(Exception(str(problem)))}", file=sys.stderr)
    try:
        audit = FileAudit.from_env(args.audit_log)
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    root = os.path.realpath(audit.root)
    for folder in (cwd, *args.add_dir, *permissions.additional_dirs):
        real = os.path.realpath(folder)
        if root == real or root.startswith(real.rstrip("/") + "/"):
            raise UsageError(f"the audit log {root} is inside a working directory ({real}); "
                             "it must be out of the agent's reach (--audit-log elsewhere)")
    session = Session.open(cwd, permissions=permissions, audit=audit,
                           hidden=(str(audit.root),), **context_args)
    try:
        audit.emit("settings.loaded", session_id=session.context.session_id,
                   sources=list(permissions.files), mode=str(permissions.mode),
                   rules=len(permissions.rules),
                   problems=[str(p) for p in permissions.problems][:50])
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    return session
