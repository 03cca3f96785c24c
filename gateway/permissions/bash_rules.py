"""Bash rules against one subcommand's text.

Three forms (Claude Code's):

    Bash(npm test)       exact: the command and nothing else
    Bash(npm run:*)      legacy prefix, only at the end: ``npm run`` alone
                         or followed by a space (``npm run-x`` is not it)
    Bash(git * main)     ``*`` anywhere matches any text; a single
                         trailing `` *`` keeps the word boundary and may
                         match nothing (``Bash(ls *)``: ``ls``, ``ls -la``,
                         never ``lsof``); ``Bash(ls*)`` has no boundary

Which text a rule sees differs by kind, and that asymmetry is the point:

* an **allow** rule sees the command as written, or — when the analyzer
  found only timing wrappers and safe variables in front (``timeout 5``,
  ``NODE_ENV=prod``) — the command without them. ``sudo npm run x`` or
  ``LD_PRELOAD=x.so npm run x`` is never ``Bash(npm run:*)``.
* a **deny** or **ask** rule sees every view: as written, without any
  leading assignment, without any wrapper, and with the program's
  directory dropped (``/bin/rm`` is ``rm``). ``FOO=1 sudo /bin/rm -rf x``
  is ``Bash(rm:*)`` for a deny.
"""

from __future__ import annotations

import os
import shlex

from analyzers import Subcommand

from ..tools.command_patterns import command_matches

__all__ = ["allow_views", "command_matches", "strict_views"]


def _join(argv: tuple[str, ...]) -> str:
    return shlex.join(argv)


def allow_views(sub: Subcommand) -> tuple[str, ...]:
    """What an allow rule may match: the text as written and its words
    re-joined; without the wrappers and variables only when all of them
    are harmless (the analyzer's ``transparent``)."""
    views = [sub.text.strip()]
    env = [f"{k}={shlex.quote(v)}" for k, v in sub.env]
    if sub.raw_argv:
        views.append(" ".join([*env, _join(sub.raw_argv)]))
    if sub.transparent and sub.argv:
        views.append(_join(sub.argv))
    return tuple(dict.fromkeys(v for v in views if v))


def strict_views(sub: Subcommand) -> tuple[str, ...]:
    """What a deny or ask rule matches against: every view of the command."""
    views = list(allow_views(sub))
    for argv in (sub.raw_argv, sub.argv):
        if argv:
            views.append(_join(argv))
            if "/" in argv[0]:
                views.append(_join((os.path.basename(argv[0]), *argv[1:])))
    return tuple(dict.fromkeys(v for v in views if v))
