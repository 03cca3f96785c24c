"""What the analyzer needs to know about the files around a command, found
here because the analyzer does no I/O: the workspace's dotenv files (a
command that reads a whole tree and reaches one needs a person) and the
repository's configuration entries that make git run programs."""

from __future__ import annotations

import os
import stat

from analyzers import BashAnalysis, WorkspaceFacts, analyze_bash
from values import replace


def analyze_in_workspace(
    command: str, cwd: str, *, extra_dirs: tuple[str, ...] = (), home: str | None = None
) -> BashAnalysis:
    """``analyze_bash`` with the facts it needs, gathered only when needed:
    the repository's program-running configuration always (cheap, only
    inside a repository), the dotenv walk only for a command that reads a
    whole tree (``grep -r``, ``find -exec cat``) — a second analysis, which
    costs far less than the walk every `ls` would otherwise pay. Gathered
    afresh for every command: facts kept across a `--jsonl` stream let a
    `.env` or a `diff.external` added meanwhile pass (from a review); the
    walk's own cache re-lists only what changed."""
    programs = repo_programs(cwd)
    light = analyze_bash(command, cwd, extra_read_dirs=extra_dirs, home=home,
                         workspace=WorkspaceFacts(repo_programs=programs))
    links = real_paths(light)
    if not links and not any(s.trees for s in light.subcommands):
        return light
    return _with_facts(light, links, programs, extra_dirs, home)


def analyze_light(
    command: str, cwd: str, *, extra_dirs: tuple[str, ...] = (), home: str | None = None
) -> BashAnalysis:
    """The first, cheap pass (no walk): enough when :func:`needs_facts`
    says so; the gateway runs it inline and only the walk on a thread."""
    light = WorkspaceFacts(repo_programs=repo_programs(cwd))
    return analyze_bash(command, cwd, extra_read_dirs=extra_dirs, home=home, workspace=light)


def needs_facts(light: BashAnalysis) -> bool:
    """Does the command go through a link, or read a whole tree?"""
    return bool(real_paths(light)) or any(s.trees for s in light.subcommands)


def analyze_with_facts(
    light: BashAnalysis, *, extra_dirs: tuple[str, ...] = (), home: str | None = None
) -> BashAnalysis:
    """The second pass, with the links resolved and — for a tree read —
    the workspace's dotenv walk."""
    return _with_facts(light, real_paths(light), repo_programs(light.cwd), extra_dirs, home)


def _with_facts(
    light: BashAnalysis, links: tuple[tuple[str, str], ...], programs: tuple[str, ...],
    extra_dirs: tuple[str, ...], home: str | None,
) -> BashAnalysis:
    cwd = light.cwd
    roots = tuple(t.root for s in light.subcommands for t in s.trees
                  if t.content and t.follows_file_links)
    facts = (workspace_facts(cwd, extra_dirs, programs=programs, file_links_below=roots)
             if any(s.trees for s in light.subcommands)
             else WorkspaceFacts(repo_programs=programs))
    return analyze_bash(light.command, cwd, extra_read_dirs=extra_dirs, home=home,
                        workspace=replace(facts, real_paths=links))


#: a glob's files looked at for links; past this many, the glob is judged
#: as leading outside (asked), never as staying in
MAX_GLOB_LINKS = 500


def real_paths(analysis: BashAnalysis) -> tuple[tuple[str, str], ...]:
    """The command's paths (and walk roots) that go through a symbolic link,
    with where they lead: a few realpath calls, judged by the analyzer
    beside the text (`cat up/.ssh/id_rsa` with up -> ..). A glob is
    expanded as bash would and each file's link followed (from a review:
    `cat gl/*`, with gl/o -> a file outside the project, was judged by the
    text `gl/*` alone and read it unasked)."""
    # what a walk reached is left out: the analyzer asks where the walk's
    # root leads, never where a file it found does (`find / -name x`
    # reaches some 260 sensitive entries, each a glob to expand)
    plain = {p.path for s in analysis.subcommands for p in s.paths
             if p.path.startswith("/") and not p.glob and not p.below}
    plain |= {t.root for s in analysis.subcommands for t in s.trees}
    out = []
    resolve = Resolver()
    for path in sorted(plain):
        real = resolve(path)
        if real != os.path.normpath(path):
            out.append((path, real))
    globs = {p.path for s in analysis.subcommands for p in s.paths
             if p.path.startswith("/") and p.glob and not p.below}
    for pattern in sorted(globs):
        out.extend((pattern, real) for real in _glob_links(pattern))
    return tuple(out)


class Resolver:
    """``os.path.realpath`` for the many paths of one command, each
    directory on their way looked at once (a command's paths share their
    leading directories: realpath alone lstats every component of every
    path, a tenth of a `check --jsonl` line). Made afresh for each command,
    as the facts are; a path that is not absolute and normalized goes to
    realpath itself."""

    def __init__(self) -> None:
        self._real: dict[str, str] = {}
        #: prefixes that do not exist, or whose parent is no directory:
        #: nothing below them can be looked at either (the kernel stops at
        #: them with the same error), so realpath keeps the rest as written
        self._absent: set[str] = set()

    def __call__(self, path: str) -> str:
        if not path.startswith("/") or path.startswith("//") or path != os.path.normpath(path):
            return real_path(path)
        real = "/"
        prefix = ""
        absent = False
        for name in path.split("/")[1:]:
            parent = prefix
            prefix = f"{prefix}/{name}"
            known = self._real.get(prefix)
            if known is None:
                # the real path of a prefix is its parent's real path and
                # its name, unless that is a link (then realpath follows it
                # from there, as it would have in the whole path); a name
                # that cannot be looked at (missing, not a directory, no
                # permission, a loop) stays as it is, as in realpath
                known = f"{real.rstrip('/')}/{name}"
                absent = absent or parent in self._absent
                try:
                    is_link = not absent and stat.S_ISLNK(os.lstat(known).st_mode)
                except (FileNotFoundError, NotADirectoryError):
                    is_link = False
                    absent = True
                except OSError:
                    is_link = False
                if absent:
                    self._absent.add(prefix)
                if is_link:
                    # the whole path to realpath itself: from a review, a
                    # link back into itself (`l2 -> l2/..`) stops realpath
                    # at the loop, and following the names after it gave
                    # another place (`cat x/l/README` through such a link
                    # was allowed, not asked)
                    return real_path(path)
                self._real[prefix] = known
            real = known
        return real


#: bracket forms bash reads and Python's glob does not: `[^a]` (a literal
#: `^` to Python) and the classes `[[:alpha:]]`, `[[=a=]]`, `[[.a.]]`. From
#: a review: `cat sub/[[:alpha:]].txt` and `cat sub/[^a]*` matched nothing
#: here, the link sub/k.txt -> ~/.ssh/id_rsa among their files was never
#: followed, and both were allowed. Such a glob is judged as leading out.
_GLOB_FORMS_PYTHON_MISREADS = ("[^", "[:", "[=", "[.")

#: where a link's target means something else in the process that reads
#: it: /proc/self is the reader, /proc/self/cwd its directory, /dev/fd/N
#: its descriptors (and /dev/stdin … are links into them)
_PER_PROCESS = ("/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def real_path(path: str) -> str:
    """``os.path.realpath``, but for a path whose resolution enters
    :data:`_PER_PROCESS` the place it enters (``/proc/self/cwd/y``: outside
    every project, asked) — there the gateway's own process would answer
    for the command's. From a review: with t/x -> /proc/self/cwd/y, `cd sub
    && find $PWD/t -exec cat {} +` read sub/y (a link to ~/.ssh/id_rsa),
    while the gateway, in the project, resolved t/x to the harmless y and
    allowed it."""
    return _through_per_process(os.path.abspath(path)) or os.path.realpath(path)


def _through_per_process(path: str) -> str | None:
    """Where resolving ``path`` (absolute) enters a per-process place, if
    it does. Follows the links on its way by hand, 40 at most (more: a
    loop, which realpath answers for itself)."""
    todo = [p for p in reversed(path.split("/")) if p not in ("", ".")]
    real = ""
    for _hop in range(40):
        while todo:
            name = todo.pop()
            if name == "..":
                real = real.rsplit("/", 1)[0]
                continue
            candidate = f"{real}/{name}"
            if any(candidate == p or candidate.startswith(p + "/") for p in _PER_PROCESS):
                return "/".join((candidate, *reversed(todo)))
            try:
                target = os.readlink(candidate)
            except OSError:  # not a link, or not there: as it is written
                real = candidate
                continue
            if target.startswith("/"):
                real = ""
            todo.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
            break
        else:
            return None
    return None


def _glob_links(pattern: str) -> list[str]:
    """Where a glob's files lead, for those reached through a link."""
    import glob  # noqa: PLC0415 - only a command with a glob needs it

    if any(form in pattern for form in _GLOB_FORMS_PYTHON_MISREADS):
        return ["/"]
    found: list[str] = []
    for n, path in enumerate(glob.iglob(pattern)):
        if n >= MAX_GLOB_LINKS:
            return [*found, "/"]  # too many to look at: judged as leaving
        real = real_path(path)
        if real != os.path.normpath(path):
            found.append(real)
    return found


def workspace_facts(
    cwd: str, extra_dirs: tuple[str, ...] = (), *, programs: tuple[str, ...] | None = None,
    file_links_below: tuple[str, ...] = (),
) -> WorkspaceFacts:
    """Facts for commands that run in ``cwd`` and may read ``extra_dirs``;
    where the links to a file below ``file_links_below`` (the roots of the
    command's tree reads) lead, looked up now. The sandbox package (and its
    import time) is loaded only when needed."""
    from sandbox import dotenv_below, runtime_dir  # noqa: PLC0415

    found = dotenv_below([cwd, *extra_dirs], runtime_dir())
    return WorkspaceFacts(
        searched=found.searched,
        dotenv_files=found.files,
        unsearched=found.unknown,
        dir_links=found.links,
        dotenv_dirs=found.dirs,
        repo_programs=repo_programs(cwd) if programs is None else programs,
        file_links=_file_link_targets(found.file_links, file_links_below),
    )


def _file_link_targets(links: tuple[str, ...], roots: tuple[str, ...]) -> tuple[
        tuple[str, str], ...]:
    """Where each link below one of ``roots`` leads, by realpath now (the
    search's record says only that it is a link; its target may have
    changed since). Past :data:`MAX_GLOB_LINKS` of them, the rest are
    judged as leading to ``/``: outside, asked."""
    below = sorted(link for link in links
                   if any(link.startswith(root.rstrip("/") + "/") for root in roots))
    resolve = Resolver()
    out = [(link, resolve(link)) for link in below[:MAX_GLOB_LINKS]]
    out += [(link, "/") for link in below[MAX_GLOB_LINKS:]]
    return tuple(out)


def repo_programs(cwd: str) -> tuple[str, ...]:
    """The configuration entries of the repository at ``cwd`` that make
    git's reads run programs (a fact the analyzer cannot gather: it does no
    I/O). Read from the config files, never by running git; the sandbox
    package is loaded only inside a repository. ``cwd`` is normalized
    first, as the analyzer takes it (from a review: with `--cwd
    ws/a/../hostile`, a a link, the walk up from the raw path never saw
    ws/hostile/.git and its core.fsmonitor)."""
    cwd = os.path.normpath(cwd)
    path = cwd
    lstat = os.lstat
    while True:
        # os.path.lexists(os.path.join(path, ".git")), without the two calls
        # a level (this runs for every command a stream judges)
        try:
            lstat(f"{path}.git" if path.endswith("/") else f"{path}/.git")
        except (OSError, ValueError):
            pass
        else:
            from sandbox import repository_programs  # noqa: PLC0415

            return repository_programs(cwd)
        parent = path[:path.rfind("/") + 1]  # os.path.dirname, inline
        if parent.strip("/"):
            parent = parent.rstrip("/")
        if parent == path:
            return ()
        path = parent
