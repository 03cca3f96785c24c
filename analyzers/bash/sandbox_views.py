"""Readers whose answer is read-only *because* of the sandbox: inside it
they see its own namespaces (its processes, its sockets, its mounts) and
the environment it was given; on the host they see everyone's.

`ps aux` in a sandbox lists the command itself; on the host it lists every
process's command line, a `mysql -p…` password among them (from a review of
``shellgate hook``, where an allow runs the command on the host). The
analysis marks such a subcommand (``Subcommand.sandbox_view``) and says
why; the gateway runs it sandboxed as ever, and the hook never allows it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["SANDBOX_VIEWS", "sandbox_view"]

_PROCESSES = "lists processes and their command lines: in the sandbox only its own, " \
             "on the host every user's"
_SOCKETS = "lists sockets and connections: in the sandbox its own network namespace, " \
           "on the host every process's"
_SESSIONS = "lists who is logged in and from where: the host's sessions"
_MOUNTS = "lists mounts: in the sandbox its own view, on the host the machine's"
_ADDRESSES = "lists network addresses: in the sandbox its own network namespace's, " \
             "on the host the machine's"
#: hostname's long options that print addresses, as any abbreviation
#: getopt takes (`--ip-address`, `--all-ip-addresses`, `--all-fqdns`), and
#: its short ones
_HOSTNAME_ADDRESSES: Final = ("--i", "--all")
_HOSTNAME_SHORT: Final = frozenset("iIA")

#: command name -> what it would show on the host that the sandbox hides
SANDBOX_VIEWS: Final[dict[str, str]] = {
    "ps": _PROCESSES, "pgrep": _PROCESSES, "pidof": _PROCESSES, "pstree": _PROCESSES,
    "top": _PROCESSES, "htop": _PROCESSES, "atop": _PROCESSES, "pwdx": _PROCESSES,
    "procs": _PROCESSES, "btop": _PROCESSES, "prtstat": _PROCESSES, "fuser": _PROCESSES,
    "lsof": _PROCESSES,
    "ss": _SOCKETS, "netstat": _SOCKETS, "sockstat": _SOCKETS,
    "w": _SESSIONS, "who": _SESSIONS, "users": _SESSIONS, "last": _SESSIONS,
    "lastlog": _SESSIONS, "finger": _SESSIONS,
    "df": _MOUNTS, "findmnt": _MOUNTS, "mount": _MOUNTS, "lsblk": _MOUNTS,
}


def sandbox_view(argv: tuple[str, ...]) -> str | None:
    """Why ``argv``'s output differs on the host (None: it does not)."""
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    if name == "hostname" and any(
            a.startswith(_HOSTNAME_ADDRESSES)
            or (a[:1] == "-" and a[1:2] != "-" and set(a[1:]) & _HOSTNAME_SHORT)
            for a in argv[1:]):
        # from a review: `hostname -I` printed the host's addresses unasked
        return _ADDRESSES
    return SANDBOX_VIEWS.get(name)
