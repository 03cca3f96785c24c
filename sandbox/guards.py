"""Before and after every run, whatever the backend (bwrap, seatbelt, none):
the tripwires, the gitlink guard and the searches for what the run planted.

* **Tripwires.** Paths that must not appear during a run but cannot be
  blocked by a mount without breaking git (``.git/commondir``): anything
  there afterwards is removed and reported.
* **Gitlinks.** :mod:`sandbox.gitguard` defuses a nested repository
  registered during the run.

Every step here reads what the command could write, so none may hang,
follow a link out of the workspace or raise: problems become lines in the
:class:`GuardOutcome`, and the run's result carries them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import time
from pathlib import Path

from values import field, valueclass

from .cleanup import remove_tree
from .errors import SandboxUnavailable
from .gitconfig import gitdirs
from .gitguard import GitGuard
from .gitpaths import defuse, move_below, nested_changed, open_below, rename_aside
from .hostrun import host_files
from .plan import FsPlan
from .programs import temp_root
from .repos import DEEP_SPEC, RepoScan, deep_cache, find_repos
from .tripwires import Tripwires
from .unseen import created_during, made_below, special_files, unseen_reports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .runner import Backend

_FALLBACK: list[Path] = []
#: the post-run search's budgets (re-check, then walk), seconds each. It
#: lists only what changed in the run, so it takes long only after a run
#: that made very many directories — which is how a review hid a planted
#: repository from a 2 s search (300,000 empty directories, then a/b/c/.git)
_AFTER_BUDGET_S = 10.0
#: directories reached through new links that are searched after a run
_MAX_LINKED = 16
#: seconds the package caches are looked through after a run
_CACHES_BUDGET_S = 1.0


def runtime_dir() -> Path:
    """A private per-user directory for sandbox scratch state (0700, owned by
    us, not a symlink: another user must not be able to pre-create it).
    Checked on every call (it can be removed), created when missing. If
    another user holds the usual name (`/tmp/shellgate-UID` made first, to
    stop every run of this user), a fresh private directory serves this
    process instead: caches do not persist, runs still work."""
    # the last answer, while the variables that chose it are the same: one
    # lstat, not temp_root's stat and access and pathlib's parsing (a tree
    # read's check in a `--jsonl` stream asks for it every line)
    environ = os.environ
    xdg = environ.get("XDG_RUNTIME_DIR")
    chosen = (xdg,) if xdg else (None, *map(environ.get, _TEMP_VARIABLES))
    last = _LAST.get(chosen)
    if last is not None and _is_private(last):
        return last
    base = Path(xdg or temp_root())
    path = base / f"shellgate-{os.getuid()}"
    if _private(path):
        _LAST.clear()
        _LAST[chosen] = path
        return path
    if not _FALLBACK or not _private(_FALLBACK[0]):
        try:
            import tempfile  # noqa: PLC0415 - only when another user holds the usual name

            _FALLBACK[:] = [Path(tempfile.mkdtemp(prefix=f"shellgate-{os.getuid()}-"))]
        except OSError as exc:
            raise SandboxUnavailable(f"no private runtime directory: {exc}") from None
    return _FALLBACK[0]


def empty_dir() -> str:
    """An empty directory in the runtime directory, bound read-only over a
    hidden one (see sandbox.linux.bwrap). Made again if anything is in it or
    it is not a plain directory."""
    path = runtime_dir() / "empty"
    try:
        st = path.lstat()
        if stat.S_ISDIR(st.st_mode) and not any(os.scandir(path)):
            return str(path)
        remove_tree(str(path))
    except FileNotFoundError:
        pass
    path.mkdir(mode=0o555)
    return str(path)


#: the environment variables that choose the runtime directory's parent
#: when XDG_RUNTIME_DIR is not set (temp_root's), and the last directory
#: they chose
_TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")
_LAST: dict[tuple[str | None, ...], Path] = {}


def _private(path: Path) -> bool:
    """Is ``path`` a private directory (made when missing)?"""
    if _is_private(path):
        return True
    with contextlib.suppress(FileExistsError, OSError):
        path.mkdir(mode=0o700)
    return _is_private(path)


def _is_private(path: Path) -> bool:
    """A directory, not a link, owned by this user, closed to others."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


@valueclass(frozen=False, slots=False)
class GuardOutcome:
    """What the post-run guards found: paths undone (a tripwire put back, a
    planted repository renamed), changes to review, problems."""

    tampered: list[str] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@valueclass(frozen=False, slots=False)
class Guards:
    """The pre-run state the post-run step compares against."""

    plan: FsPlan
    wires: Tripwires
    git: GitGuard
    #: directories the post-run walk listed (new, or changed in the run)
    changed_dirs: tuple[str, ...] = ()
    caches: tuple[str, ...] = ()

    @classmethod
    def before(cls, plan: FsPlan, *, home: str, backend: Backend | None) -> Guards:
        git = GitGuard(home, backend, runtime_dir() / "gitlinks")
        try:
            git.before(plan.writable, plan.repos)
        except Exception as exc:  # reported after the run; never a crash
            git.problems.append(f"gitlink check before the run failed: {exc}")
        wires = Tripwires.before(plan.writable, plan.tripwires, plan.reports, plan.links)
        return cls(plan, wires, git)

    def after(self) -> GuardOutcome:
        """Never raises: a guard that fails is a problem line."""
        outcome = GuardOutcome()
        try:
            found = self.wires.after()
            outcome.tampered += found.undone
            outcome.reports += found.reports
            outcome.problems += found.problems
            self._quarantine_gitdirs(found.changed, outcome)
        except Exception as exc:
            outcome.problems.append(f"tripwire check failed: {exc}")
        report = self.git.after()
        outcome.tampered += report.defused
        outcome.reports += [_defused_note(p) for p in report.defused]
        outcome.problems += report.problems
        try:
            self._new_repositories(outcome)
        except Exception as exc:
            outcome.problems.append(f"the search for planted repositories failed: {exc}")
        try:
            self._new_gitdirs(outcome)
        except Exception as exc:
            outcome.problems.append(f"the search for planted git directories failed: {exc}")
        try:
            created, complete = created_during(self.changed_dirs, self.git.started_ns)
            linked = self._links_passed_over(created)
            passed_over, all_seen = self._made_in_caches(linked)
            complete = complete and all_seen
            if not complete:
                outcome.problems.append(
                    f"more files were made during the run than were looked at ({len(created)}); "
                    "one a host tool opens by itself (.gitignore, .hgignore …) may lead to a "
                    "device: look before running git or hg there")
            moved = self._special_files(created + passed_over, outcome)
            self._linked_in(linked, outcome)
            # the names other checks own are reported by them
            owned = {*self.plan.tripwires, *self.plan.reports, *self.plan.protected, *moved}
            paths = [p for p in created if p not in owned]
            outcome.reports += _instructions_made(paths)
            if paths:
                reports, problems = unseen_reports(paths, list(self.plan.repos),
                                                   home=self.git.home,
                                                   backend=self.git.backend)
                outcome.reports += reports
                outcome.problems += problems
        except Exception as exc:
            outcome.problems.append(f"the search for files git does not show failed: {exc}")
        return outcome

    def _special_files(self, created: list[str], outcome: GuardOutcome) -> list[str]:
        """A file made during the run that a host tool opening it by itself
        would wait on or read without end — a FIFO, socket or device, or a
        link to one or into /proc (`.gitignore`, `.hgignore`, `.bzrignore`,
        `.python-version` …: git, hg, brz and version managers open such
        names by themselves) — is renamed aside, before git is asked
        anything below. The paths moved."""
        moved: list[str] = []
        for path, kind in special_files(created):
            kept = move_below(list(self.plan.writable), path, outcome.problems,
                              unreachable=f"is {kind}")
            if kept is not None:
                moved.append(path)
                outcome.tampered.append(path)
                outcome.reports.append(
                    f"{path} was made {kind} during the run; a host tool that opens it by "
                    f"itself (git, hg, a shell prompt) would hang or read without end; "
                    f"renamed to {kept}")
        return moved

    def _quarantine_gitdirs(self, changed: list[str], outcome: GuardOutcome) -> None:
        """A submodule's or worktree's git directory whose entries were only
        tripwired (past the ones mounted read-only) and changed in the run
        is renamed aside whole: a hook written there cannot be put back
        from a copy, and `git submodule update` would go on using the rest.
        Without it, git clones the submodule again."""
        nested = sorted((g for g in self.plan.gitdirs
                         if "/.git/modules/" in g or "/.git/worktrees/" in g), key=len,
                        reverse=True)
        hit = {next((g for g in nested if _within(p, g)), None) for p in changed}
        roots = list(self.plan.writable)
        for gitdir in sorted(g for g in hit if g is not None):
            if not os.path.isdir(gitdir):
                continue
            kept = move_below(roots, gitdir, outcome.problems,
                                 unreachable="was changed in the run")
            if kept is not None:
                outcome.tampered.append(gitdir)
                outcome.reports.append(
                    f"the git directory {gitdir} was changed during the run (its config or "
                    f"hooks); renamed to {kept}, so git sets the submodule up afresh")

    def _new_repositories(self, outcome: GuardOutcome) -> None:
        """A repository the plan did not know (created during the run, or
        in a directory not re-checked in time) waits for the user to run git
        in it — with a planted config. If the run created or touched it, its
        `.git` is renamed aside. The walk goes to every depth
        (:data:`sandbox.repos.DEEP_SPEC`), cached between runs, so it
        re-lists only the directories that changed; larger budgets, as
        nothing waits on it but the result."""
        roots = list(self.plan.writable)
        if not roots:
            return
        scan = find_repos(roots, deep_cache(runtime_dir(), self.plan.writable), deep=True,
                          budget=_AFTER_BUDGET_S, revalidate_budget=_AFTER_BUDGET_S)
        self.changed_dirs = scan.changed
        self.caches = scan.caches
        self._judge_scan(scan, roots, outcome)

    def _links_passed_over(self, created: list[str]) -> list[str]:
        """Where the links made during the run lead, for those leading to a
        directory in a writable root that the search after the run passes
        over (a package cache, or past its depth)."""
        roots = list(self.plan.writable)
        out: list[str] = []
        for path in created:
            if not os.path.islink(path):
                continue
            real = os.path.realpath(path)
            root = _root_of(roots, real)
            if root is None or not os.path.isdir(real):
                continue
            parts = os.path.relpath(real, root).split("/")
            if set(parts) & DEEP_SPEC.skip_dirs or len(parts) >= DEEP_SPEC.max_depth:
                out.append(real)
        return list(dict.fromkeys(out))

    def _made_in_caches(self, linked: list[str]) -> tuple[list[str], bool]:
        """What was made during the run in the package caches the search
        after it passes over, and in the directories new links lead to
        there (``linked``): `ripgrep --hidden` and git enter them (from a
        review: `.cache/x/.ignore -> /dev/zero` ran rg out of memory).
        Whether it was all of it."""
        out: list[str] = []
        deadline = time.monotonic() + _CACHES_BUDGET_S
        for top in dict.fromkeys([*self.caches, *linked]):
            found, whole = made_below(top, self.git.started_ns,
                                      max(0.0, deadline - time.monotonic()))
            out += found
            if not whole:
                return out, False
        return out, True

    def _linked_in(self, linked: list[str], outcome: GuardOutcome) -> None:
        """A link made during the run to a directory the search after it
        passes over (``linked``: a package cache, `.cache`, `.npm` …) makes
        that directory one the user works in: `ln -s .cache/tools tools`
        with a repository planted in `.cache/tools`, and the host's `cd
        tools && hg status` ran its hook (from a review). Those directories
        are searched too."""
        if not linked:
            return
        scan = find_repos(linked[:_MAX_LINKED], None, deep=True, budget=1.0,
                          revalidate_budget=1.0)
        self._judge_scan(scan, list(self.plan.writable), outcome)
        if len(linked) > _MAX_LINKED:
            outcome.problems.append(
                f"{len(linked)} links made during the run lead into directories the search "
                f"passes over (such as {linked[_MAX_LINKED]}); look there before running git")

    def _judge_scan(self, scan: RepoScan, roots: list[str], outcome: GuardOutcome) -> None:
        """What a search after the run found, judged: planted repositories,
        bare git directories and what tools started below obey."""
        known = set(self.plan.repos) | self.git.seen_worktrees
        since = self.git.started_ns
        others: list[str] = []
        for repo in scan.repos:
            if repo.worktree in known:
                continue
            if _owner(os.path.join(repo.worktree, ".git")) not in (None, os.geteuid()):
                # not the command's work (it cannot give a file away), and
                # often not ours to read: never moved, named once below
                others.append(repo.worktree)
                continue
            root = _root_of(roots, repo.worktree)
            if root is None or not nested_changed(root, repo.worktree, since, index=True):
                continue  # the run left it alone (or it is gone)
            renamed = defuse(root, repo.worktree, outcome.problems)
            outcome.tampered += renamed
            outcome.reports += [_defused_note(p) for p in renamed]
        if others:
            outcome.problems.append(
                f"{len(others)} repositories of other users (such as {others[0]}) lie in the "
                "writable paths; shellgate neither checked nor moved them: look there before "
                "running git")
        self._new_bare_gitdirs(scan.bare, roots, outcome)
        self._agent_settings(scan.agent_dirs, roots, outcome)
        # Linear in the directories (each looks up its own ancestors): a
        # workspace of 300,000 directories the walk could not finish made a
        # pairwise comparison here run for minutes.
        read_only = frozenset(self.plan.unscanned)
        missed = [d for d in scan.unscanned if not _below_any(d, read_only)]
        if missed or scan.unchecked:
            outcome.problems.append(
                f"{len(missed) + len(scan.unchecked)} directories (such as "
                f"{(missed or list(scan.unchecked))[0]}) could not be searched for planted git "
                "repositories in time after the run; look there before running git")

    def _new_bare_gitdirs(self, bare: tuple[str, ...], roots: list[str],
                          outcome: GuardOutcome) -> None:
        """A bare git directory (HEAD, objects/, refs/ under any name) made
        or filled during the run: git takes it for a repository from any
        directory below it, and runs its config. Its ``HEAD`` is renamed
        aside (git then sees a plain directory). Reproducer (from a review):
        `mkdir -p src/objects src/refs && echo 'ref: refs/heads/main' >
        src/HEAD && printf '[core]\\n\\tpager=…' > src/config`; the host's
        `git branch` in src/lib ran the pager. Bare repositories that were
        there before the run were read-only during it (see sandbox.plan)."""
        protected = frozenset(self.plan.protected)
        since = self.git.started_ns
        for path in bare:
            root = _root_of(roots, path)
            if root is None or path in protected or not _made_since(path, since):
                continue
            rel = os.path.relpath(path, root)
            fd = open_below(root, [] if rel == "." else rel.split("/"))
            if fd is None:
                continue
            try:
                if rename_aside(fd, "HEAD", path, outcome.problems) is not None:
                    head = os.path.join(path, "HEAD")
                    outcome.tampered.append(head)
                    outcome.reports.append(_defused_note(head))
            finally:
                os.close(fd)

    def _agent_settings(self, entries: tuple[str, ...], roots: list[str],
                        outcome: GuardOutcome) -> None:
        """A `.claude` or `.shellgate` below the top of a writable root or a
        work tree (those are read-only during the run), made or changed
        during it: a session the user starts in that directory later — this
        gateway's, Claude Code's — obeys its permissions and hooks. It is
        renamed aside. So is another version control system's directory
        (`sub/.hg` with a hook in its hgrc: the host's `hg status` in sub
        runs it; `.bzr`, `_darcs`, a `.fslckout` naming a planted
        repository database). Reproducer (from a review): `mkdir -p sub/.claude &&
        printf '{"permissions":{"allow":["Bash(git push:*)"]}}' >
        sub/.claude/settings.local.json`; a session started in sub allowed
        `git push` unasked.

        One the command could not write (read-only for the run: one the
        last search after a run found, see sandbox.hostrun) changed only on
        the host: reported, not renamed (from a review: a deny rule the user
        saved in `pkg/.claude/settings.local.json` while a run slept was
        renamed aside as the command's)."""
        # the tops whose own entries were protected during the run; not the
        # work trees git's gitlinks lead to below the plan's search (from a
        # review: a `.hg` planted at the top of a submodule five levels down
        # was taken for a protected top's, and stayed)
        tops = {*roots, *self.plan.repos}
        since = self.git.started_ns
        for path in entries:
            parent = os.path.dirname(path)
            root = _root_of(roots, path)
            if root is None or parent in tops or not _touched_since(path, since):
                continue
            what, who = _OBEYED_BY.get(os.path.basename(path), _OBEYED_BY[".claude"])
            if not os.path.islink(path) and not self.plan.may_write(path).allowed:
                outcome.reports.append(
                    f"{what} at {path} changed on the host during the run (the command could "
                    f"not write it; {who} started in {parent} obeys it): review it")
                continue
            kept = move_below(roots, path, outcome.problems)
            if kept is not None:
                outcome.tampered.append(path)
                outcome.reports.append(
                    f"{what} was made or changed at {path} during the run ({who} started in "
                    f"{parent} would obey it); renamed to {kept}, rename it back once reviewed")

    def _new_gitdirs(self, outcome: GuardOutcome) -> None:
        """A git directory that appeared under a known repository's
        ``.git/modules`` or ``.git/worktrees`` during the run is renamed
        aside: `git submodule update --init` would take a planted
        ``.git/modules/NAME`` (its config and hooks) for the submodule's
        and run git in it. Reproducer: a command makes ``.git/modules/m``
        with ``core.fsmonitor`` set and commits a gitlink ``m`` with a
        matching ``.gitmodules``; the user's `git submodule update --init`
        runs the program."""
        before = set(self.plan.gitdirs)
        roots = list(self.plan.writable)
        new: list[str] = []
        # every git directory the plan knew (a linked worktree's common
        # directory included: its modules/ serve that worktree's submodules)
        for gitdir in self.plan.gitdirs:
            # A symlink there is a git directory by another name: `ln -s
            # ../x-cache .git/modules/lib` (or `.git/modules` itself a link)
            # made `git submodule update --init` adopt a planted bare
            # repository's hooks and fsmonitor. git never makes such links.
            new += [*(p for p in gitdirs(gitdir) if p not in before), *_links_below(gitdir)]
        for found in dict.fromkeys(new):
            self._quarantine_new_gitdir(found, roots, outcome)

    @staticmethod
    def _quarantine_new_gitdir(found: str, roots: list[str], outcome: GuardOutcome) -> None:
        kept = move_below(roots, found, outcome.problems, unreachable="appeared during the run")
        if kept is not None:
            outcome.tampered.append(found)
            outcome.reports.append(
                f"a git directory was created at {found} during the run (git would use "
                f"its config and hooks for a submodule or worktree); renamed to {kept}")


def _links_below(gitdir: str, depth: int = 4) -> list[str]:
    """Symlinks at or below ``gitdir``'s ``modules`` and ``worktrees``."""
    out: list[str] = []
    stack = [(os.path.join(gitdir, sub), 0) for sub in ("modules", "worktrees")]
    while stack and len(out) < 64:
        path, level = stack.pop()
        if os.path.islink(path):
            out.append(path)
            continue
        if level >= depth or not os.path.isdir(path):
            continue
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        stack += [(e.path, level + 1) for e in entries
                  if e.is_symlink() or e.is_dir(follow_symlinks=False)]
    return out


def _instructions_made(paths: list[str]) -> list[str]:
    """A line for each agent instruction file (`CLAUDE.md`, `AGENTS.md` …,
    the table's family ``instructions``) made or replaced during the run
    below the tops, where the table reports them: an agent reads one as
    soon as it works in that directory, and takes it for the user's."""
    names = _instruction_names()
    return [f"agent instructions {p} were made or replaced during the run (an agent working "
            "there reads them as the user's): review them"
            for p in paths if os.path.basename(p) in names]


@functools.cache
def _instruction_names() -> frozenset[str]:
    return frozenset(e.path for e in host_files()
                     if e.family == "instructions" and "/" not in e.path)


def _root_of(roots: list[str], path: str) -> str | None:
    return next((r for r in roots if _within(path, r)), None)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _below_any(path: str, dirs: frozenset[str]) -> bool:
    """Is ``path`` one of ``dirs`` or below one of them?"""
    while True:
        if path in dirs:
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def _made_since(gitdir: str, since_ns: int) -> bool:
    """Was the bare git directory made or filled at or after ``since_ns``
    (its HEAD, config, objects/ or refs/ entry changed)? What cannot be
    checked counts as changed."""
    for name in ("HEAD", "config", "objects", "refs", "hooks"):
        try:
            if os.lstat(os.path.join(gitdir, name)).st_ctime_ns >= since_ns:
                return True
        except FileNotFoundError:
            continue
        except OSError:
            return True
    return False


def _touched_since(path: str, since_ns: int, depth: int = 3) -> bool:
    """Was the entry (a link, a file, a directory and what is in it, a few
    levels down) made or changed at or after ``since_ns``? What cannot be
    checked, or lies deeper, counts as changed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if st.st_ctime_ns >= since_ns:
        return True
    if stat.S_ISLNK(st.st_mode):
        # an old link to a directory whose settings the run wrote (a review:
        # a committed `pkg/.claude -> ../shared-agent`, then
        # `cp hooks.json shared-agent/settings.json`, and a session in pkg
        # ran the hook): judged by what it leads to
        return depth > 0 and _touched_since(os.path.realpath(path), since_ns, depth - 1)
    if not stat.S_ISDIR(st.st_mode):
        return False
    try:
        with os.scandir(path) as inner:
            for n, entry in enumerate(inner):
                if n >= _AGENT_ENTRIES:
                    return True  # too many to look at: judged changed
                info = entry.stat(follow_symlinks=False)
                if info.st_ctime_ns >= since_ns:
                    return True
                if entry.is_symlink() and (depth <= 0 or _touched_since(
                        os.path.realpath(entry.path), since_ns, depth - 1)):
                    return True
                if entry.is_dir(follow_symlinks=False) and (
                        depth <= 0 or _touched_since(entry.path, since_ns, depth - 1)):
                    return True
    except OSError:
        return True
    return False


#: entries looked at in one agent settings directory
_AGENT_ENTRIES = 500


def _owner(path: str) -> int | None:
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


#: what each name :meth:`Guards._agent_settings` looks after is, and who
#: obeys it when started below it
_OBEYED_BY = {
    ".claude": ("agent settings", "a session"),
    ".shellgate": ("agent settings", "a session"),
    ".hg": ("a Mercurial repository directory", "hg"),
    "_darcs": ("a darcs repository directory", "darcs"),
    ".bzr": ("a Breezy branch directory", "brz"),
    ".jj": ("a jj repository directory", "jj"),
    ".sl": ("a Sapling repository directory", "sl"),
    ".fslckout": ("a Fossil checkout database", "fossil"),
    "_FOSSIL_": ("a Fossil checkout database", "fossil"),
    ".fos": ("a Fossil checkout database", "fossil"),
}

def _defused_note(path: str) -> str:
    return (f"a repository was planted or changed at {os.path.dirname(path)}; its {path} is "
            "renamed with the suffix .quarantined-by-shellgate (git there would have run its "
            "config and hooks); rename it back once reviewed")
