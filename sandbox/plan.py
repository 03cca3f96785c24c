"""The filesystem plan: what is writable, what is protected, what is hidden.

Built from a policy and the real filesystem (paths resolved, symlinks
followed, repositories found, their configuration read), then rendered by a
backend: bwrap mounts on Linux, SBPL rules on macOS.

What is protected inside the writable roots, whatever the policy says, is
the table in ``profiles/host-run-files.toml`` (:mod:`sandbox.hostrun`):
files the host runs or obeys by itself — git internals in every repository
found below every writable root, agents' and editors' configuration, tool
configs, the home directory's startup files when it is writable. ``block``
entries are read-only mounts. A missing one must stay missing: its first
missing component is a *sentinel* (on Linux, creating it stops the run at
once; seatbelt denies the write) and a tripwire (whatever was made there is
moved aside after the run). No empty stub is ever made on the host as a
mount point: stubs stayed in the user's project while any other run was
active, `git status` showed them, and Claude Code read an empty
`.claude/settings.json` as the project's settings. The existing
directories between a writable root and a blocked path are pinned (bound
onto themselves) so that ``mv .git .git2 && mkdir -p .git/hooks`` —
renaming the protected tree away and planting a new one — fails with
EBUSY. ``tripwire`` and ``report`` entries are checked after the run
(:mod:`sandbox.guards`).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import pwd
import stat
from pathlib import Path

import profiles as profile_data
from values import field, valueclass

from . import dotenv_scan
from .errors import PolicyError
from .hashing import hex_digest
from .hostrun import host_run_targets
from .listings import Candidates, existing, group
from .owndirs import hidden_own_dirs
from .policy import SandboxPolicy
from .repos import deep_cache, find_repos, known_agent_dirs
from .selfcode import own_code

#: Directories that are never a writable root, and trees nothing below which is
#: (the system trees are shared data with the analyzer's hard limits).
_SYSTEM_TREES = tuple(profile_data.read_toml("system-dirs.toml")["trees"])
_NEVER_WRITABLE = frozenset({"/", "/home", "/root", "/var", "/opt", "/srv", *_SYSTEM_TREES})


@valueclass
class FsPlan:
    """Resolved, absolute, deduplicated paths for a backend to render, and
    the one answer to "may this path be read / written?" that the sandbox
    and the gateway's file tools share (:meth:`may_read`, :meth:`may_write`):
    a file tool can never reach what a sandboxed command cannot.

    ``cwd`` is where the command runs; ``workspace`` the directory the
    policy's workspace rights and relative paths are about (a persistent
    `cd sub` moves the first, never shrinks the second)."""

    cwd: str
    writable: tuple[str, ...]
    #: existing directories bound onto themselves: cannot be renamed away
    pinned: tuple[str, ...]
    #: existing paths inside writable roots made read-only
    protected: tuple[str, ...]
    #: (path, "dir"|"file"): the first missing component of a blocked path,
    #: which nothing may create (a sentinel and a tripwire on Linux, a
    #: write-deny under seatbelt)
    missing: tuple[tuple[str, str], ...]
    hidden_dirs: tuple[str, ...]
    hidden_files: tuple[str, ...]
    #: the private /tmp: "/tmp" for bubblewrap (a tmpfs of its own), a host
    #: directory for seatbelt, None when /tmp is the host's
    private_tmp: str | None = None
    #: directories the sandbox mounts empty over the host's (bwrap's /run:
    #: docker.sock, the system bus, /run/secrets): their host content unseen
    empty_dirs: tuple[str, ...] = ()
    #: paths checked after the run: created, changed or removed during it,
    #: they are undone and reported (see sandbox.guards)
    tripwires: tuple[str, ...] = ()
    #: paths whose changes are reported (agent instructions, ignore rules)
    reports: tuple[str, ...] = ()
    #: protected paths that are symlinks: a swapped link is put back
    links: tuple[str, ...] = ()
    #: the work trees of the repositories found in the writable roots
    repos: tuple[str, ...] = ()
    #: their git directories (submodules' and linked worktrees' included)
    gitdirs: tuple[str, ...] = ()
    #: tripwires whose creation stops the run at once (see sandbox.hostrun)
    sentinels: tuple[str, ...] = ()
    #: directories the repository search did not reach: read-only
    unscanned: tuple[str, ...] = ()
    #: what the plan wants the user to know (one line each)
    notes: tuple[str, ...] = ()
    #: the workspace (the run's directory unless given apart)
    workspace: str = ""

    def may_read(self, path: str) -> PathRight:
        """May a file tool read ``path``, as a sandboxed ``cat`` could?
        Links and ``..`` are resolved first: a link into a hidden directory
        reads what the link points to. Hidden paths (the sensitive list,
        other projects' dotenv files, the sandbox's own state) and the
        private ``/tmp`` (the command sees an empty one of its own) are not
        readable."""
        real = os.path.realpath(path)
        hidden = next((h for h in (*self.hidden_dirs, *self.hidden_files) if _inside(real, h)),
                      None)
        if hidden is not None:
            return PathRight(False, f"{real} is hidden by the sandbox ({hidden})")
        if self.private_tmp == "/tmp" and _inside(real, "/tmp") and not any(  # noqa: S108
                _inside(real, w) for w in (*self.writable, self.workspace, self.cwd) if w):
            return PathRight(False, f"{real} is in /tmp, which sandboxed commands see empty")
        empty = next((d for d in self.empty_dirs if _inside(real, d)), None)
        if empty is not None:
            # Reproducer (from a review): Read /var/run/secrets/db_password
            # printed a container secret that a sandboxed cat cannot see.
            return PathRight(False, f"{real} is in {empty}, which sandboxed commands see empty")
        return PathRight(True, f"{real} is readable")

    def may_write(self, path: str) -> PathRight:
        """May a file tool write ``path``, as a sandboxed command could and
        keep? Only inside a writable root, never at or below a protected,
        blocked, tripwired or hidden path (a tripwired file a command writes
        is put back after its run; a file tool has no "after")."""
        real = os.path.realpath(path)
        read = self.may_read(real)
        if not read.allowed:
            return read
        if not any(_inside(real, w) for w in self.writable):
            return PathRight(False, f"{real} is outside the writable roots "
                                    f"({', '.join(self.writable) or 'none'})")
        for kind, paths in (("read-only", self.protected),
                            ("blocked", tuple(p for p, _ in self.missing)),
                            ("guarded: the host may run it", self.tripwires)):
            hit = next((p for p in paths if _inside(real, p) and not self._widened(real, p)),
                       None)
            if hit is not None:
                return PathRight(False, f"{real} is {kind} in the sandbox ({hit})")
        return PathRight(True, f"{real} is writable")

    def _widened(self, real: str, protected: str) -> bool:
        """Is ``real`` in a writable root granted below ``protected`` (see
        :func:`_covered`)?"""
        return any(w != protected and _inside(w, protected) and _inside(real, w)
                   for w in self.writable)


@valueclass
class PathRight:
    """The answer to "may this path be read / written?", with its reason."""

    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def expand(path: str, home: str, cwd: str) -> str:
    """Absolute real path of a policy path (``~`` is ``home``; relative paths
    are relative to ``cwd``)."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.realpath(os.path.join(cwd, path))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _covered(path: str, covering: set[str], roots: set[str]) -> bool:
    """Is ``path`` strictly below one of ``covering`` (read-only whole),
    with no writable root in between? A root granted below a read-only
    directory (`--allow-write ~/.config/app` in home mode) widens that path
    only, and what is protected inside it is protected all the same."""
    parent = os.path.dirname(path)
    while parent not in ("", "/"):
        if parent in covering:
            return True
        if parent in roots:
            return False
        parent = os.path.dirname(parent)
    return False


def _below(path: str, ancestors: set[str]) -> bool:
    """Is ``path`` strictly below one of ``ancestors``? (O(depth), not O(n))"""
    parent = os.path.dirname(path)
    while parent not in ("", "/"):
        if parent in ancestors:
            return True
        parent = os.path.dirname(parent)
    return False


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
    workspace: str,
    *,
    home: str,
    private_tmp: str | None,
    cwd: str | None = None,
    hide: tuple[str, ...] = (),
    dotenv_cache: Path | None = None,
    state_dir: Path | None = None,
    empty_dirs: tuple[str, ...] = (),
) -> FsPlan:
    """Resolve ``policy`` against the filesystem for a run in ``cwd`` (the
    ``workspace`` unless given); ``hide`` adds directories the command must
    not see (the sandbox's own state); ``dotenv_cache`` and ``state_dir``
    are where the walks for ``.env`` files and for repositories keep their
    state between runs."""
    run_cwd = os.path.realpath(cwd if cwd is not None else workspace)
    ws = os.path.realpath(workspace)
    fs = policy.filesystem
    roots = _writable_roots(policy, ws, home)
    # shellgate's own directories (its audit log, saved answers, settings,
    # daemons' sockets): hidden from every command of every verb, whatever
    # the caller passes (see sandbox/owndirs.py)
    own_dirs = hidden_own_dirs(home, roots, ws, run_cwd,
                               private_tmp=private_tmp if fs.private_tmp else None)
    hidden = _hidden_paths(fs.deny_read, home, [*roots, ws, run_cwd], ws,
                           [*(os.path.realpath(p) for p in hide), *own_dirs.hidden], dotenv_cache)
    # A read-deny wins over a write-allow: a root inside a hidden path is dropped.
    roots = [r for r in roots if not any(_inside(r, h) for h in hidden)]
    roots, own, notes = _without_own_code(roots)

    scan = find_repos(roots, _repo_cache(state_dir, roots))
    repos = list(scan.repos)
    agents = (known_agent_dirs(roots, deep_cache(state_dir, roots)) if state_dir is not None
              else frozenset())
    targets = host_run_targets(roots, repos, home, git_read_only=fs.git == "read-only",
                               agent_dirs=agents)
    block = [*targets.block, *((expand(p, home, ws), "file", True) for p in fs.deny_write)]
    # (one outside every writable root is left alone by _layout: read-only already)
    block += [(c, "dir" if os.path.isdir(c) else "file", False) for c in own]
    # A work tree whose `.git` is a file (a linked worktree, a submodule):
    # rewriting it would point git at a planted directory.
    block += [(os.path.join(r.worktree, ".git"), "file", False)
              for r in repos if not os.path.isdir(os.path.join(r.worktree, ".git"))
              or os.path.islink(os.path.join(r.worktree, ".git"))]
    layout = _layout(block, roots, hidden)
    layout.pinned += [p for p in own_dirs.pins
                      if p not in layout.pinned and any(_inside(p, r) for r in roots)]
    read_only = [d for d in targets.read_only if os.path.isdir(d)]
    # A bare repository in a writable root (`upstream.git`, a local remote)
    # has hooks and a config like any git directory, and no `.git` to find
    # it by: read-only for the run, whole (from a review: a command wrote
    # upstream.git/hooks/post-receive; the host's next push ran it).
    read_only += [b for b in scan.bare if any(_inside(b, r) for r in roots)]
    unscanned = [d for d in scan.unscanned if any(_inside(d, r) for r in roots)]
    if unscanned:
        # Fail closed: where repositories could not be looked for in time,
        # nothing may be changed in this run (the next run carries on).
        read_only += unscanned if len(unscanned) <= _MAX_UNSCANNED else roots
        notes.append(f"{len(unscanned)} directories were not searched for git repositories "
                     "in time; they are read-only for this run")
    # Known directories not re-checked in time stay writable: a repository
    # made in one since the last run is looked at after the run, and
    # quarantined if the run touched it (see sandbox.guards).
    blocked = {p for p, _, _ in block}
    in_roots, under_roots = _prefixes(roots)
    protected = [*layout.protected, *read_only]
    covering = set(protected)
    root_set = set(roots)
    missing = [s for s in layout.missing if not _covered(s[0], covering, root_set)]
    absent = [s for s, _ in missing]
    tripwires = _tripwire_paths(targets.tripwire, layout.tripwires, blocked, under_roots,
                                hidden, absent)
    reports = [p for p in targets.report if p in in_roots or p.startswith(under_roots)]
    tripwire_set = set(tripwires)
    if any(_inside(run_cwd, h) for h in hidden):
        raise PolicyError(f"the working directory {run_cwd} is hidden by the sandbox")
    return FsPlan(
        cwd=run_cwd,
        workspace=ws,
        writable=tuple(roots),
        pinned=tuple(p for p in layout.pinned
                     if p not in covering and not _covered(p, covering, root_set)
                     and p not in roots),
        protected=tuple(p for p in dict.fromkeys(protected)
                        if not _covered(p, covering, root_set)),
        missing=tuple(missing),
        hidden_dirs=tuple(h for h in hidden if os.path.isdir(h)),
        hidden_files=tuple(h for h in hidden if not os.path.isdir(h)),
        private_tmp=private_tmp if fs.private_tmp else None,
        empty_dirs=tuple(os.path.realpath(d) for d in empty_dirs),
        tripwires=tuple(dict.fromkeys(tripwires)),
        reports=tuple(dict.fromkeys(reports)),
        links=tuple(layout.links),
        repos=tuple(r.worktree for r in repos),
        gitdirs=tuple(dict.fromkeys(targets.gitdirs)),
        sentinels=tuple(dict.fromkeys([*(p for p in targets.sentinels if p in tripwire_set),
                                       *absent])),
        unscanned=tuple(unscanned),
        notes=tuple(notes),
    )


def _hidden_paths(deny_read: tuple[str, ...], home: str, seen: list[str], ws: str,
                  extra: list[str], dotenv_cache: Path | None) -> list[str]:
    """What the command may not read: the sensitive list, other accounts'
    homes, other projects' dotenv files, the policy's read-denies and
    ``extra`` (the sandbox's own state) — existing, and outermost only."""
    hidden = _mountable(_sensitive_paths(home), _account_homes(home), seen)
    hidden += _dotenv_paths(home, seen, dotenv_cache)
    hidden += [expand(p, home, ws) for p in deny_read]
    hidden += extra
    hidden = [h for h in dict.fromkeys(hidden) if os.path.lexists(h)]
    # One inside another is hidden by it already; mounted too, bubblewrap
    # would make its mount point inside the outer one's read-only tmpfs and
    # fail (a review: the audit log in the hidden state directory stopped
    # every `shellgate tool Bash` call).
    outer = set(hidden)
    return [h for h in hidden if not _below(h, outer)]


def _without_own_code(roots: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The gateway's own code (selfcode.py): a root at or below it is
    dropped (said in a note), any inside a root is blocked by the caller.
    (roots kept, the code's paths, notes)"""
    own = own_code(roots)
    notes: list[str] = []
    kept = [r for r in roots if not any(_inside(r, c) for c in own)]
    if len(kept) < len(roots):
        notes.append("the gateway's own code or import path holds "
                     + ", ".join(r for r in roots if r not in kept)
                     + ": not writable in this run (start shellgate from an install "
                     "outside it to write there)")
    return kept, own, notes


def _tripwire_paths(wires: list[str], layout_wires: list[str], blocked: set[str],
                    under_roots: tuple[str, ...], hidden: list[str],
                    absent: list[str]) -> list[str]:
    """The tripwires in the writable roots: a path blocked in one scope and
    tripwired in another is blocked; one at or below a hidden path is the
    hiding's; one at or below a missing blocked path is that path's, whose
    first missing component is itself a tripwire."""
    _, under_hidden = _prefixes([*hidden, *absent])
    from_layout = set(layout_wires)
    kept = [p for p in (*wires, *layout_wires)
            if (p not in blocked or p in from_layout)
            and p.startswith(under_roots)
            and not p.startswith(under_hidden)
            and p not in hidden]
    return [p for p in kept if p not in absent] + absent


def _prefixes(paths: list[str]) -> tuple[set[str], tuple[str, ...]]:
    """The paths themselves, and the prefixes of everything strictly below
    them (for str.startswith: one call instead of a loop of _inside)."""
    return set(paths), tuple(p.rstrip("/") + "/" for p in paths)


#: more unscanned directories than this: the writable roots are read-only
_MAX_UNSCANNED = 32


def _writable_roots(policy: SandboxPolicy, cwd: str, home: str) -> list[str]:
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
        if _shared(root):
            # From a review: `shellgate run` in /tmp made every user's files
            # there writable to the command (and another user's planted
            # `.git` there looked like the command's). A directory every
            # user may create in belongs to none of them.
            raise PolicyError(
                f"refusing to make {root} writable: it is a directory every user shares "
                "(world-writable, sticky); work in a directory of your own, such as "
                f"`mktemp -d` below it"
            )
        if "/.git/" in root + "/":
            # Attack (from a review): `--allow-write other/.git` left its
            # config writable (core.fsmonitor ran on the host's next git
            # status); the git-directory protections apply only to git
            # directories found below a writable root.
            raise PolicyError(
                f"refusing to make {root} writable: it is inside a git directory, whose "
                "config and hooks git runs; make the repository's work tree the workspace"
            )
    return roots


def _shared(path: str) -> bool:
    """A world-writable sticky directory (/tmp, /var/tmp, /dev/shm): every
    user creates in it, root's too."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return bool(st.st_mode & stat.S_ISVTX and st.st_mode & 0o002)


def _repo_cache(state_dir: Path | None, roots: list[str]) -> Path | None:
    if state_dir is None:
        return None
    key = hex_digest("\0".join(roots).encode())[:16]
    return state_dir / f"repos-{key}.json"


class _Exists:
    """``os.path.lexists`` for many paths in few directories: each directory
    is listed once per plan (some sixty table paths sit at a root)."""

    def __init__(self) -> None:
        self.listings: dict[str, frozenset[str] | None] = {}

    def __call__(self, path: str) -> bool:
        parent, name = os.path.split(path)
        if parent not in self.listings:
            try:
                self.listings[parent] = frozenset(os.listdir(parent))
            except OSError:
                self.listings[parent] = None
        names = self.listings[parent]
        return name in names if names is not None else os.path.lexists(path)


@valueclass(frozen=False, slots=False)
class _Layout:
    pinned: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)
    tripwires: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def _layout(
    block: list[tuple[str, str, bool]], roots: list[str], hidden: list[str]
) -> _Layout:
    """Mounts for the ``block`` paths: an existing one read-only (its
    existing parent directories pinned); a missing one kept missing at its
    first missing component (its parents pinned, so the watched directory
    cannot be swapped for another) — or, when its entry says only that it
    may not be changed, a tripwire. A
    path inside a hidden one is left to the hiding (a protected
    `~/.ssh/config` bound back inside a hidden `~/.ssh` would show it)."""
    out = _Layout()
    exists = _Exists()
    merged: dict[str, tuple[str, bool]] = {}
    for path, kind, stub in block:  # one path in two scopes: kept missing if either says so
        old = merged.get(path)
        merged[path] = (kind, stub or (old is not None and old[1]))
    _, under_roots = _prefixes(roots)
    hidden_set, under_hidden = _prefixes(hidden)
    queue = list(merged.items())
    for path, (kind, stub) in queue:  # grows: see the link below
        if not path.startswith(under_roots) or path in hidden_set \
                or path.startswith(under_hidden):
            continue  # outside every writable root (read-only already), or hidden
        owner = max((r for r in roots if path.startswith(r.rstrip("/") + "/")), key=len)
        rel = path[len(owner.rstrip("/")) + 1 :].split("/")
        current = owner.rstrip("/")
        pins: list[str] = []  # kept only if a mount ends up below them
        for i, part in enumerate(rel):
            current = current + "/" + part
            last = i == len(rel) - 1
            if not exists(current):
                if stub:
                    out.missing.append((current, kind if last else "dir"))
                    out.pinned += pins
                else:
                    out.tripwires.append(path)
                break
            if os.path.islink(current):
                # A link on the way (`~/.config -> dotfiles/config`): the
                # mount lands where it leads, whose own parents must be
                # pinned too, or `mv dotfiles x && mkdir -p dotfiles/config`
                # gives the link a fresh, writable target (from a review:
                # shellgate's own pin of the target made all of it
                # writable). The resolved path is protected as well.
                real = os.path.realpath(path)
                if real != path and real not in merged:
                    merged[real] = (kind, stub)
                    queue.append((real, (kind, stub)))
            if last:
                out.protected.append(current)
                out.pinned += pins
                if os.path.islink(current):
                    out.links.append(current)
            elif os.path.isdir(current) and not os.path.islink(current):
                pins.append(current)
    covering = {s for s, _ in out.missing} | set(out.protected)
    root_set = set(roots)
    out.protected = [p for p in dict.fromkeys(out.protected)
                     if not _covered(p, covering, root_set)]
    out.missing = [s for s in dict.fromkeys(out.missing) if not _covered(s[0], covering, root_set)]
    out.pinned = list(dict.fromkeys(out.pinned))
    return out


def empty_views(policy: SandboxPolicy, backend: str | None) -> tuple[str, ...]:
    """The host directories a run under ``policy`` sees empty: bubblewrap
    mounts a tmpfs over /run unless unix sockets are allowed."""
    if backend in (None, "bwrap") and not policy.network.allow_unix_sockets:
        return ("/run",)
    return ()
