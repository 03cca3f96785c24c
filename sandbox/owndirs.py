"""shellgate's own directories, and why no sandboxed command sees them.

shellgate keeps what it trusts in a few per-user directories, named as the
XDG base directory spec names them:

state    ``$XDG_STATE_HOME/shellgate`` (``~/.local/state/shellgate``): the
         audit log, the chain's recorded head, the saved permission answers
config   ``$XDG_CONFIG_HOME/shellgate`` (``~/.config/shellgate``): the user's
         settings, the list of trusted workspaces
cache    ``$XDG_CACHE_HOME/shellgate`` (``~/.cache/shellgate``)
runtime  ``$XDG_RUNTIME_DIR/shellgate`` (and ``/run/user/UID/shellgate``):
         the warm daemons' sockets

:func:`own_dirs` is the one place that says where they are: the gateway
asks it where to write (``gateway.pathnames``), and the plan builder hides
every one of them from every command of every verb (:func:`hidden_own_dirs`),
so that no verb can forget one. Why: with the home as the workspace
(``shellgate run --cwd ~``) a command could cut its own calls out of the
audit log, write an "always allow" answer the next session obeys, or trust
a workspace; with the home read-only it could still read the log.
"""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from .errors import PolicyError

__all__ = ["OwnDirs", "config_dir", "hidden_own_dirs", "own_dirs", "state_dir"]

#: the name of shellgate's directory in each XDG base directory
NAME = "shellgate"


def _base(env: Mapping[str, str], home: str, variable: str, default: str) -> str:
    """An XDG base directory: ``$variable``, or ``home/default`` when it is
    unset or relative (the spec says a relative one is ignored — taken from
    the working directory, the workspace, it would put shellgate's state
    where commands write: ``XDG_STATE_HOME=.state``)."""
    value = env.get(variable, "")
    if not os.path.isabs(value):
        value = os.path.join(home, default)
    return os.path.abspath(value)


def state_dir(env: Mapping[str, str], home: str) -> str:
    """``$XDG_STATE_HOME/shellgate``, or ``~/.local/state/shellgate``."""
    return os.path.join(_base(env, home, "XDG_STATE_HOME", ".local/state"), NAME)


def config_dir(env: Mapping[str, str], home: str) -> str:
    """``$XDG_CONFIG_HOME/shellgate``, or ``~/.config/shellgate``."""
    return os.path.join(_base(env, home, "XDG_CONFIG_HOME", ".config"), NAME)


def cache_dir(env: Mapping[str, str], home: str) -> str:
    """``$XDG_CACHE_HOME/shellgate``, or ``~/.cache/shellgate``."""
    return os.path.join(_base(env, home, "XDG_CACHE_HOME", ".cache"), NAME)


def runtime_dirs(env: Mapping[str, str]) -> tuple[str, ...]:
    """``$XDG_RUNTIME_DIR/shellgate`` when that is set, and the usual
    ``/run/user/UID/shellgate`` whatever this environment says (from a
    review: a run without XDG_RUNTIME_DIR — cron, ssh, `env -i` — showed a
    command the daemon the user's agent had started there)."""
    base = env.get("XDG_RUNTIME_DIR", "")
    named = (os.path.join(base, NAME),) if os.path.isabs(base) else ()
    return tuple(dict.fromkeys((*named, f"/run/user/{os.getuid()}/{NAME}")))


def own_dirs(env: Mapping[str, str], home: str) -> tuple[str, ...]:
    """shellgate's state, config, cache and runtime directories for ``env``
    and ``home`` (absolute, not resolved; they need not exist)."""
    return (state_dir(env, home), config_dir(env, home), cache_dir(env, home),
            *runtime_dirs(env))


class OwnDirs(NamedTuple):
    """What the plan does about shellgate's own directories: the real paths
    to hide, and the existing directories between a writable root and one
    of them, to pin (bind onto themselves). (A NamedTuple: the gateway asks
    this module where its state is on every cold start.)"""

    hidden: tuple[str, ...]
    pins: tuple[str, ...]


def hidden_own_dirs(home: str, roots: Iterable[str], workspace: str, cwd: str,
                    extra: Iterable[str] = (), *, private_tmp: str | None = None) -> OwnDirs:
    """shellgate's own directories as a run's plan hides them: those of
    this process's environment, for the run's ``home``, the environment's
    ``HOME`` and the user's real home (a caller cannot unmask them by
    passing another ``HOME``), and ``extra`` (an audit log given elsewhere).

    Inside a writable root, a missing one is made first (0700): a path that
    does not exist cannot be hidden, and a command could make it and plant
    an answer or a forged log with its head there. Its existing parents
    below the root are pinned: `mv ~/.local ~/.local2` would otherwise take
    the hidden directory away with it and leave the command free to make a
    new one in its place.

    Raises :class:`PolicyError` when one holds the workspace, the working
    directory or a writable root: the command would run inside what it must
    not see (`shellgate run --cwd ~/.local/state/shellgate`)."""
    roots = [os.path.realpath(r) for r in roots]
    env = os.environ
    homes = [home, env.get("HOME", "")]
    with contextlib.suppress(KeyError, OSError):
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    # the XDG locations this environment names and the defaults both: a
    # run with XDG_STATE_HOME elsewhere left ~/.local/state/shellgate (the
    # log the user's usual sessions write) readable and, in home mode,
    # cut and re-headed (a review)
    named = [d for h in dict.fromkeys(h for h in homes if os.path.isabs(h))
             for d in (*own_dirs(env, h), *own_dirs({}, h))]
    hidden: list[str] = []
    pins: list[str] = []
    states = dict.fromkeys(state for h in dict.fromkeys(h for h in homes if os.path.isabs(h))
                           for state in (state_dir(env, h), state_dir({}, h)))
    logs = dict.fromkeys(log for state in states for log in recorded_logs(state))
    # an audit log named by --audit-log lies anywhere, and its head is
    # recorded in the state directory: hidden too (a review: a log another
    # verb wrote to /var/tmp/logs was read by a later run), unless it holds
    # the run itself
    checks = [(what, inner, os.path.realpath(inner))
              for what, inner in (("the workspace", workspace), ("the working directory", cwd),
                                  *(("the writable root", r) for r in roots))]
    # a recorded log under the host's /tmp is unseen already when the run
    # has a /tmp of its own, unless a root brings it back (test runs leave
    # many there, and each would cost a mount)
    unseen = set() if private_tmp != "/tmp" else {  # noqa: S108
        log for log in logs if _inside(log, "/tmp")  # noqa: S108
        and not any(_inside(log, r) or _inside(r, log) for _, _, r in checks)}
    extra = [*extra, *(log for log in logs if log not in unseen and is_recorded_log(log)
                       and not any(_inside(r, log) for _, _, r in checks))]
    for path in dict.fromkeys([*named, *(os.path.abspath(e) for e in extra)]):
        real = os.path.realpath(path)
        for what, inner, real_inner in checks:
            if _inside(real_inner, real):
                raise PolicyError(f"refusing to run with {what} {inner} inside shellgate's own "
                                  f"directory {real} (its audit log, settings and answers): "
                                  "choose a workspace outside it")
        owner = max((r for r in roots if _inside(real, r)), key=len, default=None)
        if owner is None:
            if os.path.lexists(real):
                hidden.append(real)
            continue
        if not os.path.lexists(real):
            try:
                os.makedirs(real, mode=0o700, exist_ok=True)
            except OSError as exc:
                raise PolicyError(f"cannot make shellgate's own directory {real} to hide it "
                                  f"from the command: {exc.strerror or exc}") from None
            real = os.path.realpath(real)
        hidden.append(real)
        pins += _between(owner, real)
    return OwnDirs(tuple(dict.fromkeys(hidden)), tuple(dict.fromkeys(pins)))


#: head records read for the logs they name, at most (records of logs that
#: are gone are pruned as heads are written)
_MAX_RECORDS = 4096


#: the log each head record names, by the record's path and identity (a
#: run re-reads only the records written since the last; every append
#: rewrites one)
_NAMED: dict[str, tuple[tuple[int, int, int], str | None]] = {}


def recorded_logs(state: str) -> list[str]:
    """The audit logs whose chain heads are recorded in ``state``
    (``audit-heads/*.json``, each naming its log's location), normalized
    as recorded; whether each is there is the caller's to check
    (:func:`is_recorded_log`)."""
    folder = os.path.join(state, "audit-heads")
    out: list[str] = []
    try:
        with os.scandir(folder) as listing:
            entries = sorted((e for e in listing if e.name.endswith(".json")),
                             key=lambda e: e.name)[:_MAX_RECORDS]
            for entry in entries:
                st = entry.stat(follow_symlinks=False)
                identity = (st.st_ino, st.st_size, st.st_mtime_ns)
                kept = _NAMED.get(entry.path)
                if kept is None or kept[0] != identity:
                    kept = (identity, _read_record(entry.path))
                    _NAMED[entry.path] = kept
                if kept[1] is not None:
                    out.append(kept[1])
    except OSError:
        return out
    if len(_NAMED) > 4 * _MAX_RECORDS:
        _NAMED.clear()
    return out


def _read_record(path: str) -> str | None:
    import json  # noqa: PLC0415 - only a run's plan reads them

    try:
        with open(path, "rb") as handle:
            log = json.loads(handle.read(1 << 16)).get("log")
    except (OSError, ValueError, AttributeError):
        return None
    return os.path.normpath(log) if isinstance(log, str) and os.path.isabs(log) else None


def is_recorded_log(log: str) -> bool:
    """Is ``log`` there, as recorded, never through a link? A command that
    planted a link where a recorded log is missing (`ln -s /usr audit`)
    would have the run hide what the link leads to (a review: every later
    run failed); a link there is no log shellgate wrote."""
    return os.path.lexists(log) and os.path.realpath(log) == log


def _between(root: str, path: str) -> list[str]:
    """The existing real directories strictly between ``root`` and ``path``."""
    out = []
    current = root.rstrip("/")
    for part in path[len(current) + 1:].split("/")[:-1]:
        current = f"{current}/{part}"
        if not os.path.isdir(current) or os.path.islink(current):
            break
        out.append(current)
    return out


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
