"""The filesystem plan: what is writable, what is protected, what is hidden.

Built from a policy and the real filesystem (paths resolved, symlinks
followed, worktree gitdirs read), then rendered by a backend: bwrap mounts on
Linux, SBPL rules on macOS. The mandatory write-denies below apply inside
every writable root, whatever the policy says, because each one is a way to
run code *outside* the sandbox later:

* ``.git/hooks``, ``.git/config`` (and a worktree's real gitdir): the next
  ``git commit`` in the user's terminal runs a planted hook, or
  ``core.fsmonitor``/``core.pager`` from the config.
* shell rc files (``.bashrc``, ``.zshrc``, ``.profile`` …) and
  ``~/.ssh/authorized_keys``: the next shell or login — protected where they
  are read, in a writable root that holds the home directory.
* ``.claude/`` settings, commands, agents and hooks; ``.shellgate/``;
  ``.mcp.json``: the agent would rewrite its own permissions or add an MCP
  server that runs with none.
* ``.vscode/``, ``.idea/`` (tasks and run configurations run on open),
  ``.gitmodules`` (submodule URLs and update commands).

A protected path that does not exist yet is blocked at its first missing
component (an empty read-only stub), so ``mkdir .shellgate`` fails too. The
existing directories between a writable root and a protected path are pinned
(bound onto themselves) so that ``mv .git .git2 && mkdir -p .git/hooks`` —
renaming the protected tree away and planting a new one — fails with EBUSY.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import pwd
from dataclasses import dataclass
from pathlib import Path

import profiles as profile_data

from . import dotenv_scan
from .errors import PolicyError
from .listings import Candidates, existing, group
from .policy import SandboxPolicy

#: (path relative to a writable root, "dir" or "file")
MANDATORY_WRITE_DENY: tuple[tuple[str, str], ...] = (
    (".git/hooks", "dir"),
    (".git/config", "file"),
    (".claude/settings.json", "file"),
    (".claude/settings.local.json", "file"),
    (".claude/commands", "dir"),
    (".claude/agents", "dir"),
    (".claude/hooks", "dir"),
    (".shellgate", "dir"),
    (".mcp.json", "file"),
    (".vscode", "dir"),
    (".idea", "dir"),
    (".gitmodules", "file"),
)

#: Shell startup files: they run only from the home directory, so they are
#: protected in a writable root that is the home directory (or contains it).
#: Elsewhere a `.bashrc` is an ordinary file and a stub for each would only
#: clutter every workspace listing.
HOME_WRITE_DENY: tuple[tuple[str, str], ...] = (
    (".bashrc", "file"),
    (".bash_profile", "file"),
    (".bash_login", "file"),
    (".bash_logout", "file"),
    (".profile", "file"),
    (".zshrc", "file"),
    (".zshenv", "file"),
    (".zprofile", "file"),
    (".zlogin", "file"),
    (".zlogout", "file"),
    (".kshrc", "file"),
    (".cshrc", "file"),
    (".tcshrc", "file"),
    (".config/fish", "dir"),
    (".config/shellgate", "dir"),
    (".ssh/authorized_keys", "file"),
    (".ssh/config", "file"),
)


#: Directories that are never a writable root, and trees nothing below which is
#: (the system trees are shared data with the analyzer's hard limits).
_SYSTEM_TREES = tuple(profile_data.read_toml("system-dirs.toml")["trees"])
_NEVER_WRITABLE = frozenset({"/", "/home", "/root", "/var", "/opt", "/srv", *_SYSTEM_TREES})


@dataclass(frozen=True, slots=True)
class FsPlan:
    """Resolved, absolute, deduplicated paths for a backend to render."""

    cwd: str
    writable: tuple[str, ...]
    #: existing directories bound onto themselves: cannot be renamed away
    pinned: tuple[str, ...]
    #: existing paths inside writable roots made read-only
    protected: tuple[str, ...]
    #: (path, "dir"|"file"): first missing component of a protected path
    stubs: tuple[tuple[str, str], ...]
    hidden_dirs: tuple[str, ...]
    hidden_files: tuple[str, ...]
    private_tmp: str | None = None
    #: paths that must not appear during the run but cannot be blocked by a
    #: mount without breaking git (checked and removed afterwards)
    tripwires: tuple[str, ...] = ()


def expand(path: str, home: str, cwd: str) -> str:
    """Absolute real path of a policy path (``~`` is ``home``; relative paths
    are relative to ``cwd``)."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.realpath(os.path.join(cwd, path))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _below(path: str, ancestors: set[str]) -> bool:
    """Is ``path`` strictly below one of ``ancestors``? (O(depth), not O(n))"""
    parent = os.path.dirname(path)
    while parent not in ("", "/"):
        if parent in ancestors:
            return True
        parent = os.path.dirname(parent)
    return False


def _gitdir_targets(root: str) -> list[tuple[str, str]]:
    """For a worktree or submodule (``.git`` is a file), protect the real
    gitdir's hooks/config/commondir, its common dir's hooks/config, and the
    ``.git`` file itself (rewriting it would point git at a planted
    directory)."""
    dotgit = os.path.join(root, ".git")
    if not os.path.isfile(dotgit):
        return []
    out = [(dotgit, "file")]
    try:
        line = Path(dotgit).read_text("utf-8", "replace").splitlines()[0]
    except (OSError, IndexError):
        return out
    if not line.startswith("gitdir:"):
        return out
    gitdir = os.path.realpath(os.path.join(root, line[len("gitdir:") :].strip()))
    dirs = [gitdir]
    try:
        common = Path(gitdir, "commondir").read_text("utf-8", "replace").strip()
        dirs.append(os.path.realpath(os.path.join(gitdir, common)))
    except OSError:
        pass
    for d in dirs:
        out += [(os.path.join(d, "hooks"), "dir"), (os.path.join(d, "config"), "file")]
    out.append((os.path.join(gitdir, "commondir"), "file"))
    return out


@functools.cache
def _sensitive_patterns() -> tuple[str, ...]:
    return tuple(str(e["path"]) for e in profile_data.read_toml("sensitive-paths.toml")["paths"])


def _homes(home: str) -> list[str]:
    """Every home directory whose secrets are hidden: the one the command is
    given, the user's real one (a caller cannot unmask ``~/.ssh`` by passing
    another ``HOME``), root's, and everyone's under /home."""
    homes = [home, "/root", *glob.glob("/home/*")]
    with contextlib.suppress(KeyError, OSError):
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    return list(dict.fromkeys(os.path.realpath(h) for h in homes if h))


def _account_homes(home: str) -> list[str]:
    """:func:`_homes` and every account's home in the password database
    (service accounts keep keys too: ``/var/lib/jenkins/.ssh``), but not
    ``/`` or a system tree some accounts name as their home."""
    out = _homes(home)
    with contextlib.suppress(OSError):
        for entry in _passwd_homes(os.stat("/etc/passwd").st_mtime_ns):
            if entry not in _NEVER_WRITABLE and not any(
                entry == t or entry.startswith(t + "/") for t in _SYSTEM_TREES
            ):
                out.append(entry)
    return list(dict.fromkeys(out))


@functools.lru_cache(maxsize=4)
def _passwd_homes(mtime_ns: int) -> tuple[str, ...]:
    """Home directories named in the password database (cached while
    /etc/passwd is unchanged)."""
    del mtime_ns
    homes = (os.path.realpath(p.pw_dir) for p in pwd.getpwall() if p.pw_dir.startswith("/"))
    return tuple(h for h in dict.fromkeys(homes) if os.path.isdir(h))


def _sensitive_paths(home: str) -> list[str]:
    """The shared sensitive list, as concrete existing paths. ``/proc`` and
    ``/dev`` entries are left out (the sandbox mounts its own, which only
    show its own processes and devices) and so are ``**`` patterns (they
    cannot be enumerated; the dotenv ones are found by :func:`_dotenv_paths`)."""
    candidates, patterns = _sensitive_candidates(tuple(_account_homes(home)))
    return existing(candidates) + [p for pattern in patterns for p in glob.glob(pattern)]


@functools.lru_cache(maxsize=16)
def _sensitive_candidates(homes: tuple[str, ...]) -> tuple[Candidates, tuple[str, ...]]:
    """The sensitive list expanded for ``homes``: plain paths grouped by
    parent directory, and glob patterns."""
    globbed: list[str] = []
    plain: list[str] = []
    for entry in _sensitive_patterns():
        if "**" in entry or entry.startswith(("/proc/", "/dev/")):
            continue
        if entry == "~" or entry.startswith("~/"):
            patterns = [h.rstrip("/") + entry[1:] for h in homes]  # entries are normalized
        else:
            patterns = [entry]
        for pattern in patterns:
            (globbed if any(c in pattern for c in "*?[") else plain).append(pattern)
    return group(plain), tuple(globbed)


def _mountable(paths: list[str], homes: list[str], keep: list[str]) -> list[str]:
    """Where to mount over each sensitive path: the path itself, or, when
    a symlink leads elsewhere, its target — only if hiding that target
    cannot be turned against the user. Attack (from a review): in a writable
    `~/.gradle`, `ln -s /usr gradle.properties` made every later run hide
    /usr (exit 127 for everything). A link under a home directory (where a
    command may have planted it in some run) has its target hidden only
    when that is strictly below a home too (a dotfile manager's
    `~/.aws -> ~/dotfiles/aws`); a link elsewhere (a system entry, which no
    run can write) is followed unless it leads to `/` or a system tree. A
    target never holds the workspace or a writable root."""
    out = []
    for path in paths:
        real = os.path.realpath(path)
        if real == path:
            out.append(path)
            continue
        if any(_inside(k, real) for k in keep):
            continue
        in_home = any(_inside(path, h) for h in homes)
        if in_home:
            if any(real != h and _inside(real, h) for h in homes):
                out.append(real)
        elif real not in _NEVER_WRITABLE:
            out.append(real)
    return out


def _dotenv_paths(home: str, keep: list[str], cache: Path | None) -> list[str]:
    """Other directories' ``.env`` files under the home directories, and
    what the bounded walk did not reach (hidden too: fail closed). The
    workspace's own (and a writable root's) stay visible."""
    homes = _homes(home)
    found = dotenv_scan.scan(homes, cache, keep=tuple(keep))
    try:
        files, dirs = dotenv_scan.hide_list(found, homes, keep)
    except dotenv_scan.TooMuchToHide as exc:
        raise PolicyError(f"cannot hide other projects' .env files: {exc}") from None
    return files + dirs


def build_plan(
    policy: SandboxPolicy,
    cwd: str,
    *,
    home: str,
    private_tmp: str | None,
    hide: tuple[str, ...] = (),
    dotenv_cache: Path | None = None,
) -> FsPlan:
    """Resolve ``policy`` against the filesystem for a run in ``cwd``;
    ``hide`` adds directories the command must not see (the sandbox's own
    state); ``dotenv_cache`` is where the walk for ``.env`` files keeps its
    state between runs."""
    cwd = os.path.realpath(cwd)
    fs = policy.filesystem
    roots: list[str] = []
    if fs.workspace == "write":
        roots.append(cwd)
    roots += [expand(p, home, cwd) for p in fs.allow_write]
    roots = [r for r in dict.fromkeys(roots) if os.path.isdir(r)]
    for root in roots:
        if root in _NEVER_WRITABLE or any(root.startswith(d + "/") for d in _SYSTEM_TREES):
            # `shellgate run --cwd /` would make the whole machine writable.
            raise PolicyError(
                f"refusing to make {root} writable: it is the root or a system "
                "directory; choose a project directory as the workspace"
            )

    hidden = _mountable(_sensitive_paths(home), _account_homes(home), [*roots, cwd])
    hidden += _dotenv_paths(home, [*roots, cwd], dotenv_cache)
    hidden += [expand(p, home, cwd) for p in fs.deny_read]
    hidden += [os.path.realpath(p) for p in hide]
    hidden = [h for h in dict.fromkeys(hidden) if os.path.lexists(h)]
    # A read-deny wins over a write-allow: a root inside a hidden path is dropped.
    roots = [r for r in roots if not any(_inside(r, h) for h in hidden)]

    targets: list[tuple[str, str]] = []
    tripwires: list[str] = []
    real_home = os.path.realpath(home)
    for root in roots:
        # `.git/commondir` redirects git to another directory's config and
        # hooks; any file there (a stub included) breaks git, so instead its
        # appearance during a run is detected and undone.
        commondir = os.path.join(root, ".git", "commondir")
        if os.path.isdir(os.path.join(root, ".git")) and not os.path.lexists(commondir):
            tripwires.append(commondir)
        targets += [(os.path.join(root, rel), kind) for rel, kind in MANDATORY_WRITE_DENY]
        targets += _gitdir_targets(root)
        if _inside(real_home, root):
            targets += [(os.path.join(real_home, rel), kind) for rel, kind in HOME_WRITE_DENY]
    targets += [(expand(p, home, cwd), "file") for p in fs.deny_write]

    pinned: list[str] = []
    protected: list[str] = []
    stubs: list[tuple[str, str]] = []
    for path, kind in targets:
        owner = next((r for r in roots if _inside(path, r) and path != r), None)
        if owner is None:
            continue  # outside every writable root: read-only already
        rel = os.path.relpath(path, owner).split(os.sep)
        current = owner
        for i, part in enumerate(rel):
            current = os.path.join(current, part)
            last = i == len(rel) - 1
            if not os.path.lexists(current):
                stubs.append((current, kind if last else "dir"))
                break
            if last:
                protected.append(current)
            elif os.path.isdir(current) and not os.path.islink(current):
                pinned.append(current)
    # A stub or protected directory covers everything below it.
    covering = {s for s, _ in stubs} | set(protected)
    protected = [p for p in dict.fromkeys(protected) if not _below(p, covering)]
    stubs = [s for s in dict.fromkeys(stubs) if not _below(s[0], covering)]
    pinned = [
        p
        for p in dict.fromkeys(pinned)
        if p not in covering and not _below(p, covering) and p not in roots
    ]
    return FsPlan(
        cwd=cwd,
        writable=tuple(roots),
        pinned=tuple(pinned),
        protected=tuple(protected),
        stubs=tuple(stubs),
        hidden_dirs=tuple(h for h in hidden if os.path.isdir(h)),
        hidden_files=tuple(h for h in hidden if not os.path.isdir(h)),
        private_tmp=private_tmp if fs.private_tmp else None,
        tripwires=tuple(tripwires),
    )
