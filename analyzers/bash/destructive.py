"""Destructive-command warnings (informational) and hard limits (never
allowable).

Warnings change no decision; they are shown to whoever approves. Hard limits
make the verdict ``deny`` and no later rule, mode or hook answer may turn
them into an allow: removal of ``/``, the home directory, a top-level or
system directory (``rm -rf /``, ``rm -rf ~``, ``rm -rf "$HOME"``,
``cd / && rm -rf *``, ``rm -rf ..`` from a project in ``~``), ``find / -delete``,
``mkfs``, and writing to a block device (``dd of=/dev/sda``,
``cat x > /dev/nvme0n1``).
"""

from __future__ import annotations

import posixpath

from profiles import read_toml
from regexes import IGNORECASE, regex
from values import valueclass

from .commands.find import analyze_find
from .commands.writers import writer_paths
from .paths import resolve

#: Removing anything at or below these is a hard limit (shared data with
#: the sandbox, which never makes them writable).
SYSTEM_DIRS = frozenset(read_toml("system-dirs.toml")["trees"])
_BLOCK_DEVICE_RE = regex(
    r"^/dev/(?:sd[a-z]+|hd[a-z]+|vd[a-z]+|xvd[a-z]+|nvme\d+n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?|"
    r"loop\d+|md\d+|dm-\d+|sr\d+|disk/.*|mapper/.*)\d*$"
)
_MKFS_RE = regex(r"^(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs)$")


@valueclass
class HardLimit:
    """A command that no rule may allow, and why."""

    command: str
    reason: str

    def __str__(self) -> str:
        return f"{self.reason} ({self.command})"


def is_critical(path: str, home: str) -> bool:
    """Is removing ``path`` (normalized) catastrophic?"""
    if path in ("/", home, "~"):
        return True
    if path.startswith("/") and path.count("/") == 1:  # any top-level directory
        return True
    if any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS):
        return True
    if path.startswith("/var/") and path.count("/") == 2:  # /var/lib, /var/log …
        return True
    # an ancestor of the home directory (/home)
    return home.startswith(path.rstrip("/") + "/")


def _short_flags(args: tuple[str, ...]) -> str:
    """All letters of short-option clusters (``-rf -v`` -> ``rfv``)."""
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _glob_parent(path: str) -> str | None:
    """Directory holding the first glob component of ``path``, if any."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if any(c in part for c in "*?["):
            return "/".join(parts[:i]) or "/"
    return None


def removal_is_critical(raw: str, cwds: tuple[str | None, ...], home: str) -> str | None:
    """The critical path ``raw`` removes when run from any of ``cwds``."""
    for cwd in cwds:
        path = resolve(raw, cwd, home)
        if path is None:
            continue
        if is_critical(path, home):
            return path
        parent = _glob_parent(path)
        if parent is not None and (is_critical(parent, home) or parent == home):
            return path
    return None


def hard_limits(
    argv: tuple[str, ...],
    cwds: tuple[str | None, ...],
    home: str,
    redirect_targets: tuple[str, ...] = (),
) -> list[HardLimit]:
    """Hard limits of one unwrapped command (``argv[0]`` already a basename)."""
    out: list[HardLimit] = []
    text = " ".join(argv)
    for target in redirect_targets:
        if _BLOCK_DEVICE_RE.match(target):
            out.append(HardLimit(text or ">", f"writes to block device {target}"))
    if not argv:
        return out
    name = posixpath.basename(argv[0])
    if _MKFS_RE.match(name):
        out.append(HardLimit(text, f"{name} destroys a filesystem"))
        return out
    if name == "dd":
        for a in argv[1:]:
            if a.startswith("of=") and _BLOCK_DEVICE_RE.match(a[3:]):
                out.append(HardLimit(text, f"dd writes to block device {a[3:]}"))
        return out
    if name in ("rm", "unlink", "rmdir", "shred", "mv", "chmod", "chown", "chgrp"):
        rw = writer_paths(name, argv)
        if rw is None:
            targets = [a for a in argv[1:] if not a.startswith("-")]
        else:
            targets = rw[1] if name != "mv" else rw[1][:-1] or rw[1]
        if name in ("chmod", "chown", "chgrp") and not (
            "R" in _short_flags(argv[1:]) or "--recursive" in argv
        ):
            return out
        for t in targets:
            critical = removal_is_critical(t, cwds, home)
            if critical is not None:
                verb = {
                    "mv": "moves away",
                    "chmod": "changes permissions of",
                    "chown": "changes ownership of",
                    "chgrp": "changes ownership of",
                }
                out.append(HardLimit(text, f"{verb.get(name, 'removes')} {critical}"))
                break
        for t in targets:
            if _BLOCK_DEVICE_RE.match(t):
                out.append(HardLimit(text, f"{name} on block device {t}"))
        return out
    if name == "find":
        f = analyze_find(argv)
        exec_name = posixpath.basename(f.exec_argv[0]) if f.exec_argv else ""
        if f.deletes or exec_name in ("rm", "shred", "unlink"):
            for root in f.roots:
                critical = removal_is_critical(root, cwds, home)
                if critical is not None:
                    out.append(HardLimit(text, f"find deletes under {critical}"))
                    break
        return out
    if name in ("cp", "tee", "install", "truncate", "cat"):
        rw = writer_paths(name, argv)
        for t in rw[1] if rw else []:
            if _BLOCK_DEVICE_RE.match(t):
                out.append(HardLimit(text, f"{name} writes to block device {t}"))
    return out


# -- warnings -------------------------------------------------------------------

#: Database clients whose arguments may carry SQL (`psql -c "DROP TABLE x"`).
SQL_CLIENTS = frozenset(
    {
        "psql",
        "mysql",
        "mariadb",
        "sqlite3",
        "duckdb",
        "sqlcmd",
        "clickhouse-client",
        "cockroach",
        "pgcli",
        "mycli",
        "litecli",
        "usql",
        "bq",
        "snowsql",
        "trino",
        "presto",
        "cqlsh",
    }
)
_SQL_DROP_RE = regex(
    r"\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA|INDEX|VIEW)|TRUNCATE)\b", IGNORECASE
)
_SQL_DELETE_RE = regex(r"\bDELETE\s+FROM\s+[\w.\"`]+\s*(?:;|$)", IGNORECASE)


def destructive_warnings(argv: tuple[str, ...]) -> list[str]:
    """Informational warnings for one unwrapped command."""
    if not argv:
        return []
    name = posixpath.basename(argv[0])
    args = argv[1:]
    out: list[str] = []
    if name == "git" and args:
        sub = next((a for a in args if not a.startswith("-")), "")
        short = _short_flags(args)
        if sub == "reset" and "--hard" in args:
            out.append("git reset --hard may discard uncommitted changes")
        if sub == "push" and (
            "f" in short
            or any(
                a in ("--force", "--mirror")
                or a.startswith("--force-with-lease")
                or (a.startswith("+") and len(a) > 1)
                for a in args
            )
        ):
            out.append("git push --force may overwrite remote history")
        if "--no-verify" in args or (sub == "commit" and "n" in short):
            out.append("--no-verify may skip safety hooks")
        if sub == "commit" and "--amend" in args:
            out.append("git commit --amend may rewrite the last commit")
        if sub == "clean" and ("f" in short or "--force" in args):
            out.append("git clean -f may delete untracked files")
        if (
            sub in ("checkout", "restore")
            and ("." in args or "--" in args)
            and "--staged" not in args
        ):
            out.append(f"git {sub} may discard uncommitted changes")
        if sub == "branch" and ("D" in short or ("d" in short and "--force" in args)):
            out.append("git branch -D may delete an unmerged branch")
        if sub == "stash" and any(a in ("drop", "clear") for a in args):
            out.append("git stash drop/clear may lose stashed changes")
    if name == "rm":
        flags = _short_flags(args)
        recursive = "r" in flags or "R" in flags or "--recursive" in args
        force = "f" in flags or "--force" in args
        if recursive and force:
            out.append("rm -rf may recursively force-remove files")
        elif recursive:
            out.append("rm -r may recursively remove files")
    if name in SQL_CLIENTS:
        if any(_SQL_DROP_RE.search(a) for a in args):
            out.append("may drop or truncate database objects")
        if any(_SQL_DELETE_RE.search(a) for a in args):
            out.append("DELETE without WHERE may delete all rows")
    if name == "kubectl" and "delete" in args:
        out.append("kubectl delete may delete Kubernetes resources")
    if name == "terraform" and ("destroy" in args or "-destroy" in args):
        out.append("terraform destroy may destroy Terraform infrastructure")
    if name == "docker" and ("prune" in args or ("rm" in args and "-f" in args)):
        out.append("docker may delete containers, images or volumes")
    if name == "chmod" and any(a in ("777", "a+rwx", "o+w") for a in args):
        out.append("chmod may make files world-writable")
    if name == "dd" and any(a.startswith("of=") for a in args):
        out.append("dd may overwrite data")
    return out
