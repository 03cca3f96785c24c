"""The file tools' one answer to "may this path be read / written?" — the
sandbox's filesystem plan (what a sandboxed ``cat`` could read, what a
sandboxed command could write and keep) plus the analyzer's sensitive
list, so a file tool can never reach what a sandboxed command cannot.

Read, Glob and Grep run in this process, not in the sandbox: whatever the
gateway's own view holds that a sandboxed command's does not is refused
here by name (``/proc/self/environ`` is the *gateway's* environment, with
its API keys; a sandboxed ``cat`` reads its own)."""

from __future__ import annotations

import os
import re
import time

from analyzers import match_sensitive
from values import valueclass

from ..context import ToolContext
from ..decisions import Decision, PermissionResult
from ..pathnames import inside
from ..resolver import UNRESOLVED, kernel_path

#: Pseudo-filesystems whose content depends on who reads: this process's
#: view is not the sandbox's. Reproducer: Read /proc/self/environ printed
#: the gateway's ANTHROPIC_API_KEY; /proc/self/root/… walks past the plan.
PROCESS_VIEWS = ("/proc", "/sys", "/dev")
#: filesystem types that are such views wherever they are mounted (a
#: container's /host/proc: from a review, Read printed the gateway's
#: /var/tmp/hostproc/self/status)
VIEW_TYPES = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs", "cgroup",
    "cgroup2", "bpf", "configfs", "fusectl", "pstore", "efivarfs", "mqueue", "binfmt_misc",
    "autofs", "rpc_pipefs", "nsfs",
})
#: how long the mount table read for them serves
_MOUNTS_TTL_S = 5.0
_mounts: tuple[float, tuple[str, ...]] = (0.0, ())


@valueclass
class Resolved:
    """A path as the model gave it, made absolute (``display``), and where
    it really leads (``real``: links and ``..`` resolved)."""

    display: str
    real: str


def resolve(path: str, ctx: ToolContext) -> Resolved:
    """Absolute (relative to the session's working directory, ``~`` the
    home), then resolved as the kernel does: ``..`` after a link climbs
    out of its target (from a review: with `up -> ..` planted beside a
    decoy, Read of `up/../.ssh/id_rsa`, shown as a project path, read the
    home's key). ``real`` is :data:`UNRESOLVED` when that cannot be known."""
    if path == "~" or path.startswith("~/"):
        path = ctx.session.home + path[1:]
    joined = os.path.join(ctx.session.cwd, path)
    return Resolved(os.path.normpath(joined), kernel_path(joined))


def _unresolved(path: Resolved) -> PermissionResult | None:
    if path.real != UNRESOLVED:
        return None
    return PermissionResult(Decision.ASK, "paths", f"where {path.display} leads cannot be "
                            "looked up (a directory on its way is not searchable, links "
                            "loop, or a name is too long)", needs_person=True)


def process_views() -> tuple[str, ...]:
    """PROCESS_VIEWS and every mount point of a VIEW_TYPES filesystem, from
    this process's mount table (read at most every few seconds)."""
    global _mounts  # noqa: PLW0603 - a small cache of the mount table
    now = time.monotonic()
    if now - _mounts[0] < _MOUNTS_TTL_S:
        return _mounts[1]
    found: list[str] = list(PROCESS_VIEWS)
    try:
        with open("/proc/self/mountinfo", "rb") as table:
            for line in table:
                fields = line.split()
                if b" - " not in line or len(fields) < 5:
                    continue
                kind = line.split(b" - ", 1)[1].split(b" ", 1)[0]
                if kind.decode("ascii", "replace") in VIEW_TYPES:
                    found.append(_mount_point(fields[4]))
    except OSError:
        pass  # no mount table: the fixed names still hold
    views = tuple(dict.fromkeys(found))
    _mounts = (now, views)
    return views


def _mount_point(raw: bytes) -> str:
    """A mountinfo path: the kernel escapes space, tab, newline and
    backslash as three octal digits; everything else is the path's own
    bytes (from a review: decoding them as escapes turned `prøc` into
    `prÃ¸c`, and a procfs there was read as plain files)."""
    return os.fsdecode(re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), raw))


def read_right(path: Resolved, ctx: ToolContext) -> PermissionResult | None:
    """None when a file tool may read ``path``; otherwise the denial (or
    the ask, for a dotenv file) with its reason. Held in every permission
    mode: no rule or mode can allow what this refuses."""
    session = ctx.session
    unknown = _unresolved(path)
    if unknown is not None:
        return unknown
    if any(inside(path.real, v) for v in process_views()):
        return PermissionResult(
            Decision.DENY, "sandbox", f"{path.real} is a process or device view; this "
            "process's differs from a sandboxed command's", hint="read it with Bash, whose "
            "command sees its own sandbox")
    # (an empty results_dir would be realpath("") — the process's own
    # directory — and let everything under it skip the plan)
    if session.results_dir and inside(path.real, os.path.realpath(session.results_dir)):
        return None  # this session's persisted results: a read root of Read's own
    ruled = _by_rule(path, ctx, "read")  # first: the rule is what the person wrote
    if ruled is not None:
        return ruled
    right = session.fs_plan().may_read(path.real)
    if not right.allowed:
        return PermissionResult(Decision.DENY, "sandbox", right.reason,
                                hint="the sandbox's filesystem policy hides it from commands "
                                "too; no rule changes that")
    return _sensitive(path, ctx, "read")


def write_right(path: Resolved, ctx: ToolContext) -> PermissionResult | None:
    """None when a file tool may write ``path`` (and the result stays, as a
    sandboxed command's write would); otherwise why not. The plan is built
    afresh: a repository made a moment ago has hooks the host would run."""
    session = ctx.session
    unknown = _unresolved(path)
    if unknown is not None:
        return unknown
    if any(inside(path.real, v) for v in process_views()):
        return PermissionResult(Decision.DENY, "sandbox",
                                f"{path.real} is a process or device view")
    inside_git = _git_component(path)
    if inside_git is not None:
        return PermissionResult(
            Decision.DENY, "sandbox", f"{path.display} is inside a git directory "
            f"({inside_git}): git runs what its config and hooks say",
            hint="change a repository with git commands (in Bash), not with file tools")
    config = agent_config_component(path.display) or agent_config_component(path.real)
    if config is not None:
        return PermissionResult(
            Decision.DENY, "sandbox", f"{path.display} is inside {config}: agent settings, "
            "which a session started in that directory (this gateway's, Claude Code's) would "
            "obey", hint="a person edits agent settings; no rule or mode changes that")
    ruled = _by_rule(path, ctx, "write")
    if ruled is not None:
        return ruled
    plan = session.fs_plan(fresh=True)
    right = plan.may_write(path.real)
    if right.allowed:
        bare = _git_layout(path.real, plan.writable)
        if bare is not None:
            return PermissionResult(
                Decision.DENY, "sandbox", f"{path.display} would be inside a git directory "
                f"({bare} holds HEAD with objects or refs): git runs what its config and hooks "
                "say", hint="change a repository with git commands (in Bash), not with file "
                "tools")
    if not right.allowed:
        return PermissionResult(Decision.DENY, "sandbox", right.reason,
                                hint="writes stay inside the writable roots (the workspace "
                                "and --add-dir); protected paths stay read-only")
    return _sensitive(path, ctx, "write")


#: directories of agent settings, at any depth (from a review: a model
#: wrote `sub/.claude/settings.local.json` with allow rules, and a session
#: the user later started in `sub` obeyed them; the sandbox keeps only each
#: root's own read-only)
AGENT_CONFIG_DIRS = frozenset({".claude", ".shellgate"})


def agent_config_component(path: str) -> str | None:
    """The ``.claude`` or ``.shellgate`` directory ``path`` lies in (any
    case: a case-insensitive filesystem reads `.CLAUDE` as `.claude`)."""
    parts = path.split("/")
    for n, part in enumerate(parts[:-1]):
        if part.lower() in AGENT_CONFIG_DIRS:
            return "/".join(parts[:n + 1])
    if parts and parts[-1].lower() in AGENT_CONFIG_DIRS:
        return path  # the directory itself (created, or replaced by a link)
    return None


def _by_rule(path: Resolved, ctx: ToolContext, access: str) -> PermissionResult | None:
    """A Read or Edit deny rule from the settings, for the path as named or
    where it leads: every file tool asks here, so a file Glob finds below
    its root or Grep's root is held to the rule as Read's own path is."""
    check = ctx.session.rule_denied
    if check is None:
        return None
    for candidate in dict.fromkeys((path.display, path.real)):
        hit = check(candidate, access)
        if hit is not None:
            rule, source = hit
            return PermissionResult(Decision.DENY, source, f"a deny rule matches {candidate}",
                                    rule=rule, hint="removing the rule would change this")
    return None


def _git_component(path: Resolved) -> str | None:
    """The ``.git`` a path goes through (as given or resolved, any case),
    if any. Why not only the known repositories' protected parts (from a
    review): Write made ``sub/.git/config`` with `core.fsmonitor`, then
    ``sub/.git/HEAD`` last — no repository existed when each write was
    checked, and the host's next `git status` in `sub` ran the monitor. A
    file tool has no "after the run" to catch it; a ``.git`` file
    (`gitdir: …`) is the same attack."""
    for text in (path.display, path.real):
        parts = text.split("/")
        for i, part in enumerate(parts):
            if part.lower() == ".git":
                return "/".join(parts[: i + 1])
    return None


#: the entries that make a directory a git directory to git (is_git_directory)
_GIT_LAYOUT = ("objects", "refs")


def _git_layout(real: str, roots: tuple[str, ...]) -> str | None:
    """The directory, from the target's up to its writable root, that holds
    — or would hold once this write is made — ``HEAD`` beside ``objects``
    or ``refs``: git takes such a directory for a repository whatever its
    name (a bare one), from any directory below it. From a review: Write
    made `src/HEAD`, `src/objects/…`, `src/refs/…` and `src/config` with
    `core.pager`; the host's `git branch` anywhere under src/ ran it. An
    existing bare repository (`upstream.git/hooks/pre-receive`) is the
    same case."""
    root = max((r for r in roots if inside(real, r)), key=len, default=None)
    if root is None:
        return None
    directory, child = os.path.dirname(real), os.path.basename(real)
    while True:
        try:
            names = set(os.listdir(directory))
        except OSError:  # not made yet: only what this write would put there
            names = set()
        names.add(child)
        if "HEAD" in names and any(n in names for n in _GIT_LAYOUT):
            return directory
        if directory == root or not inside(directory, root):
            return None
        directory, child = os.path.dirname(directory), os.path.basename(directory)


def _sensitive(path: Resolved, ctx: ToolContext, access: str) -> PermissionResult | None:
    """The analyzer's sensitive list, on the path as given and as resolved
    (a link named ``notes`` to ``~/.ssh/id_rsa``; a ``.env`` that is a link
    to a harmless file still reads as a secret's name): strictest wins."""
    home = ctx.session.home
    # Lowercased too: on a case-insensitive filesystem (macOS) `.ENV` opens
    # `.env` and `~/.SSH` is `~/.ssh`; on Linux the extra match only asks
    # about a name that looks like a secret's (from a review: Read of
    # `.ENV` printed its keys unasked).
    spellings = dict.fromkeys((path.real, path.display, path.real.lower(), path.display.lower()))
    hits = [e for e in (match_sensitive(p, home) for p in spellings) if e is not None]
    if not hits:
        return _git_credentials(path, access)
    if any(e.level != "ask" for e in hits):
        entry = next(e for e in hits if e.level != "ask")
        return PermissionResult(Decision.DENY, "sensitive-paths",
                                f"{path.display} is sensitive ({entry.why})",
                                rule=entry.pattern,
                                hint="profiles/sensitive-paths.toml lists it; no rule allows it")
    entry = hits[0]
    return PermissionResult(Decision.ASK, "sensitive-paths",
                            f"{access} of {path.display} needs a person ({entry.why})",
                            rule=entry.pattern, needs_person=True)


def _git_credentials(path: Resolved, access: str) -> PermissionResult | None:
    """Attack (from a review): a CI checkout leaves a token in
    `.git/config` (`http.<url>.extraheader`), a proxy password sits in
    ~/.gitconfig, an include puts either in a file under a name of its own
    anywhere (included by a repository elsewhere, reached by a hard link);
    reading the file prints it. The file is judged by its content as git
    reads a configuration file; reading one holding a credential needs a
    person."""
    from sandbox import file_secrets  # noqa: PLC0415

    held = file_secrets(path.real)
    if not held:
        return None
    where, key, _ = held[0]
    if key == "<unknown>":
        return PermissionResult(Decision.ASK, "git-credentials",
                                f"{access} of {path.display} needs a person: git could not say "
                                "whether it holds a credential", rule=where, needs_person=True)
    return PermissionResult(Decision.ASK, "git-credentials",
                            f"{access} of {path.display} needs a person: it holds a credential "
                            f"({key})", rule=where, needs_person=True)


def in_working_dirs(path: Resolved, ctx: ToolContext) -> bool:
    """Inside the workspace or an added directory (both spellings: the
    real path must be inside too, or a link leads out)."""
    roots = [os.path.realpath(d) for d in ctx.session.allowed_dirs]
    return any(inside(path.real, r) for r in roots)
