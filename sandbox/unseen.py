"""Files a run created that `git status` will not show.

`git diff` and `git status` are how a user reviews what a command did to
the workspace; a file they do not show is a file nobody reviews. So after
every run, the files created (or renamed into place) during it that git
ignores — through ``.gitignore``, ``.git/info/exclude`` or the user's
``core.excludesFile`` — are reported, one line per repository. Attack it
answers: a `.pyc` planted in an ignored ``__pycache__`` with the header of
its source runs on the user's next `pytest`, and `git status` stays clean.

The candidates come from the post-run repository walk (:mod:`sandbox.walk`):
the directories it had to list again because their ctime moved, and the
new ones; in them, the entries whose ctime is from the run. git itself
decides what is ignored (``git check-ignore``, inside a read-only sandbox,
as :mod:`sandbox.gitlinks` reads an index), so the answer is the user's
git's. Limits, said in the README: a file rewritten in place (its directory
untouched) is not seen, nor is anything below the dependency trees the walk
only looks into (``node_modules/x/…``).
"""

from __future__ import annotations

import os
import stat
import time
from collections import Counter

from .policy import EnvPolicy, FilesystemPolicy, Limits, SandboxPolicy
from .programs import system_program

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .runner import Backend

#: at most this many candidate paths per repository, and repositories per run
_MAX_PATHS = 10_000
_MAX_REPOS = 8
#: directories named in one report line
_SHOWN = 6
_POLICY = SandboxPolicy(
    profile="unseen",
    filesystem=FilesystemPolicy(workspace="read", private_tmp=True),
    env=EnvPolicy(allow=("PATH", "HOME"), set={"LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}),
    limits=Limits(wall_timeout=20, max_output_bytes=1 << 20, max_processes=16),
)


#: what a host tool may open by itself under any name and wait on, or
#: read without end: the user's `git status` (`.gitignore`), `hg status`
#: (`.hgignore`, which Mercurial follows as a link), `brz status`
#: (`.bzrignore`), a shell prompt's version manager (`.python-version`)
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device",
          stat.S_IFBLK: "a device"}
#: what a link may lead to and stay: reading it ends at once
_HARMLESS = frozenset({"/dev/null"})


def special_files(paths: list[str]) -> list[tuple[str, str]]:
    """(path, what it is) for each of ``paths`` that a host tool opening
    it by itself could wait on or read without end: a FIFO, socket or
    device (a FIFO cannot be made in the sandbox; one that was there may be
    linked in), or a link to one or into /proc or /sys (from a review:
    `.hgignore -> /dev/stdin` hung the host's `hg status` on the terminal,
    `-> /dev/zero` grew it past 1.5 GB). Looked up without opening."""
    out: list[tuple[str, str]] = []
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        kind = _KINDS.get(stat.S_IFMT(mode))
        if kind is None and stat.S_ISLNK(mode):
            kind = _link_kind(path)
        if kind is not None:
            out.append((path, kind))
    return out


def _link_kind(link: str) -> str | None:
    """What a link leads to, when it is one of :data:`_KINDS` or the
    kernel's own files (a link to nothing, or to a plain file, is None).
    Followed a link at a time, each target judged by its spelling before
    anything is resolved in this process: `/dev/stdin`, `/dev/fd/0` and
    `/proc/self/…` name this process's own files here and the terminal in
    the user's shell (from a review: with shellgate's stdin /dev/null, the
    link looked harmless)."""
    current = link
    for _ in range(_MAX_HOPS):
        try:
            text = os.readlink(current)
        except (OSError, ValueError):
            return None
        raw = os.path.join(os.path.dirname(current), text)
        spelled = os.path.normpath(raw)
        # where the kernel would look: the parent as it resolves, the name
        candidate = os.path.join(os.path.realpath(os.path.dirname(raw)), os.path.basename(raw))
        for path in (spelled, os.path.normpath(candidate)):
            if path in _HARMLESS:
                return None
            if path.startswith(_KERNEL_TREES) or path in ("/dev", "/proc", "/sys"):
                return f"a link to {path}"
        if not os.path.islink(candidate):
            try:
                kind = _KINDS.get(stat.S_IFMT(os.stat(candidate).st_mode))
            except (OSError, ValueError):
                return None
            return f"a link to {kind} ({candidate})" if kind is not None else None
        current = candidate
    return "a link that leads through too many links"


#: where every name is the kernel's (a device, a process's file)
_KERNEL_TREES = ("/dev/", "/proc/", "/sys/")
#: links followed, as the kernel follows them
_MAX_HOPS = 40


def made_below(top: str, since_ns: int, budget: float) -> tuple[list[str], bool]:
    """Files and links anywhere below ``top`` whose ctime is at or after
    ``since_ns``, as many as ``budget`` seconds find, and whether that was
    all (for the trees the search after a run passes over)."""
    out: list[str] = []
    deadline = time.monotonic() + budget
    pending = [top]
    while pending:
        if time.monotonic() > deadline or len(out) >= _MAX_PATHS:
            return out, False
        directory = pending.pop()
        try:
            # a directory no entry was made in since: its subdirectories
            # only (a name made, renamed or linked in moves its ctime)
            changed = os.lstat(directory).st_ctime_ns >= since_ns
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif changed and entry.stat(follow_symlinks=False).st_ctime_ns >= since_ns:
                    out.append(entry.path)
            except OSError:
                continue
    return out, True


def created_during(dirs: tuple[str, ...], since_ns: int,
                   budget: float = 1.0) -> tuple[list[str], bool]:
    """Files and links in ``dirs`` whose ctime is at or after ``since_ns``
    (created, renamed into place, or changed in their mode or links), as
    many as ``budget`` seconds find (a run that touched 300,000
    directories must not hold the result for minutes), and whether that
    was all of them (from a review: 10,050 files made first hid a link
    made after them)."""
    out: list[str] = []
    deadline = time.monotonic() + budget
    for directory in dict.fromkeys(dirs):
        if time.monotonic() > deadline or len(out) >= _MAX_PATHS:
            return out, False
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode) and st.st_ctime_ns >= since_ns:
                out.append(entry.path)
    return out, True


def unseen_reports(
    paths: list[str], worktrees: list[str], *, home: str, backend: Backend | None
) -> tuple[list[str], list[str]]:
    """(reports, problems): one report line per repository holding paths
    that git ignores."""
    by_repo: dict[str, list[str]] = {}
    for path in paths:
        owner = max((w for w in worktrees if path.startswith(w.rstrip("/") + "/")),
                    key=len, default=None)
        if owner is not None and "/.git/" not in path[len(owner):] + "/":
            by_repo.setdefault(owner, []).append(os.path.relpath(path, owner))
    reports: list[str] = []
    problems: list[str] = []
    for n, (worktree, rels) in enumerate(sorted(by_repo.items())):
        if n >= _MAX_REPOS:
            problems.append(f"{len(by_repo) - n} more repositories had files created in the "
                            "run; they were not checked for files git ignores")
            break
        ignored, problem = _ignored(worktree, rels[:_MAX_PATHS], home=home, backend=backend)
        if problem:
            problems.append(f"{worktree}: cannot tell which new files git ignores: {problem}")
        if ignored:
            reports.append(_line(worktree, ignored))
    return reports, problems


def _line(worktree: str, ignored: list[str]) -> str:
    groups = Counter(os.path.dirname(p) or "." for p in ignored)
    shown = ", ".join(f"{d}/ ({c})" if d != "." else f"./ ({c})"
                      for d, c in groups.most_common(_SHOWN))
    more = f" and {len(groups) - _SHOWN} more directories" if len(groups) > _SHOWN else ""
    return (f"{len(ignored)} files created during the run in {worktree} are ignored by git, so "
            f"`git status` does not show them: {shown}{more}; review them before running them")


def _ignored(worktree: str, rels: list[str], *, home: str,
             backend: Backend | None) -> tuple[list[str], str]:
    """The paths of ``rels`` git ignores (untracked and matching an ignore
    rule), by `git check-ignore` in a read-only sandbox."""
    git = system_program("git")  # its answer decides what is reported
    if git is None:
        return [], ""
    from .errors import SandboxError  # noqa: PLC0415
    from .runner import run  # noqa: PLC0415 - run imports guards, which import this

    chunks: list[bytes] = []

    def feed(stream: str, data: bytes) -> None:
        if stream == "stdout":
            chunks.append(data)

    argv = [git, "-c", "core.fsmonitor=false", "-c", "safe.directory=*",
            "--git-dir", os.path.join(worktree, ".git"), "--work-tree", worktree,
            "check-ignore", "-z", "--stdin"]
    stdin = b"".join(os.fsencode(r) + b"\0" for r in rels)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
    try:
        result = run(argv, _POLICY, cwd=worktree, env=env, stdin=stdin, timeout=20,
                     on_output=feed, backend=backend)
    except SandboxError as exc:
        return [], f"git could not be run in a sandbox: {exc}"
    if result.timed_out or result.killed_reason:
        return [], ("git did not answer in 20 s (a file it reads by itself, such as a "
                    "`.gitignore`, may not be a regular file: look before running git there)")
    if result.exit_code not in (0, 1):  # 1: nothing is ignored
        return [], " ".join(result.stderr_text.split())[:200] or f"exit status {result.exit_code}"
    out = b"".join(chunks).split(b"\0")
    return sorted(os.fsdecode(p) for p in out if p), ""
