"""What the analyzer needs to know about the files around a command, found
here because the analyzer does no I/O: the workspace's dotenv files (a
command that reads a whole tree and reaches one needs a person), the
repository's configuration entries that make git run programs and the
configuration entries that hold credentials."""

from __future__ import annotations

import os
import posixpath

from analyzers import (
    GIT_CONFIG_NAMES,
    UNRESOLVED,
    BashAnalysis,
    WorkspaceFacts,
    analyze_bash,
    reads_with_git,
)
from values import replace, valueclass

from .resolver import Resolver, real_path


def analyze_in_workspace(
    command: str, cwd: str, *, extra_dirs: tuple[str, ...] = (), home: str | None = None
) -> BashAnalysis:
    """``analyze_bash`` with the facts it needs, gathered only when needed:
    the repository's program-running configuration only for a command that
    reads with git (git is asked, a few ms), the dotenv walk only for a
    command that reads a whole tree (``grep -r``, ``find -exec cat``) — a
    second analysis, which costs far less than the walk every `ls` would
    otherwise pay. Gathered afresh for every command: facts kept across a
    `--jsonl` stream let a `.env` or a `diff.external` added meanwhile pass
    (from a review); git's answer is kept only while nothing it read
    changed, and the walk's own cache re-lists only what changed."""
    light, git = _light(command, cwd, extra_dirs, home)
    questions = _questions(light)
    links = _resolved(questions)
    if not links and not questions.trees and not _option_globs(questions):
        return light
    return _with_facts(light, questions, links, git, extra_dirs, home)


def analyze_light(
    command: str, cwd: str, *, extra_dirs: tuple[str, ...] = (), home: str | None = None
) -> BashAnalysis:
    """The first, cheap pass (no walk): enough when :func:`needs_facts`
    says so; the gateway runs it inline and only the walk on a thread."""
    return _light(command, cwd, extra_dirs, home)[0]


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: what git says about the configuration, as WorkspaceFacts fields
    GitFacts = dict[str, tuple[Any, ...]]


def _light(command: str, cwd: str, extra_dirs: tuple[str, ...],
           home: str | None) -> tuple[BashAnalysis, GitFacts]:
    """The analysis with git's facts, when the bare one has a read they
    could change (git is not asked about an `ls`), and those facts."""
    bare = analyze_bash(command, cwd, extra_read_dirs=extra_dirs, home=home,
                        workspace=WorkspaceFacts())
    git = _git_facts(bare, home)
    if not any(git.values()):
        return bare, git
    return analyze_bash(command, cwd, extra_read_dirs=extra_dirs, home=home,
                        workspace=WorkspaceFacts(**git)), git


def _git_facts(bare: BashAnalysis, home: str | None) -> GitFacts:
    """The repository's program-running entries and the credential-holding
    entries of the configuration, when a read in the (fact-free) analysis
    could run or print them: git's configuration where a git command runs
    and where a tree read starts, and every file the command names judged
    by its content."""
    git_read = reads_with_git(bare) or _leads_to_git_config(bare)
    places = [*([bare.cwd] if git_read else []), *_tree_places(bare, home)]
    named = _named_file_secrets(bare)
    if not places and not named:
        return {}
    from sandbox import config_secrets  # noqa: PLC0415

    secrets = tuple(dict.fromkeys([*(e for d in dict.fromkeys(places) for e in config_secrets(d)),
                                   *named]))
    return {"repo_programs": repo_programs(bare.cwd) if git_read else (),
            "config_secrets": secrets}


def _tree_places(bare: BashAnalysis, home: str | None) -> list[str]:
    """The roots of the command's tree reads whose git configuration may
    include a file (below the root, a file included under a name of its
    own is read with the rest)."""
    from sandbox import may_include  # noqa: PLC0415

    roots = [t.root for s in bare.subcommands if s.read_only for t in s.trees]
    home = home or os.path.expanduser("~")
    return [d for d in dict.fromkeys(roots) if may_include(d, home)]


def _named_file_secrets(bare: BashAnalysis) -> list[tuple[str, str, str]]:
    """The files a read-only subcommand names, or a glob of it matches,
    judged by their content as git would read them: a file holding a
    credential in git's syntax prints it, whichever configuration includes
    it. From a review: an include in a repository elsewhere (`cat
    ../secrets/creds.inc`, a directory added with --add-dir), a user's
    `includeIf "gitdir:~/work/"` read from `~`, an include active on
    another branch, a hard link's other name — each printed a token
    unasked while only the reading directory's configuration was asked.
    Entries are named as the analysis names the path (a glob by itself:
    which of its brackets were quoted is not known, its matches under both
    readings are judged)."""
    out: list[tuple[str, str, str]] = []
    resolve = Resolver()
    for sub in bare.subcommands:
        if not sub.read_only:
            continue
        for p in sub.paths:
            if p.redirect or p.below or not posixpath.isabs(p.path):
                continue
            for real in _named_files(p.spelled or p.path, p.glob, resolve):
                out += [(p.path, key, scope) for _, key, scope in _file_secrets(real)]
    return out


def _named_files(spelled: str, glob_: bool, resolve: Resolver) -> list[str]:
    """Where a plain path leads, or each file a glob matches (past
    :data:`MAX_GLOB_LINKS`, the first ones: the analysis asks about a glob
    that long for its links)."""
    if not glob_:
        real = resolve(spelled)
        return [] if real is UNRESOLVED else [real]
    return [real_path(path) for path in _glob_matches(spelled)]


def _file_secrets(real: str) -> tuple[tuple[str, str, str], ...]:
    from sandbox import file_secrets  # noqa: PLC0415

    return file_secrets(real)


def _leads_to_git_config(bare: BashAnalysis) -> bool:
    """Does a path of the command lead, through a link, to what may be a
    git configuration file? (A review: a committed `cfglink ->
    .git/config` let `cat cfglink` print a token unasked.)"""
    return any(os.path.basename(real) in GIT_CONFIG_NAMES or "/.git/" in real
               for _, real in real_paths(bare))


def needs_facts(light: BashAnalysis) -> bool:
    """Does the command go through a link, read a whole tree, or have a
    glob that expands to a name like an option?"""
    return (bool(real_paths(light)) or any(s.trees for s in light.subcommands)
            or bool(_option_globs(_questions(light))))


def analyze_with_facts(
    light: BashAnalysis, *, extra_dirs: tuple[str, ...] = (), home: str | None = None
) -> BashAnalysis:
    """The second pass, with the links resolved and — for a tree read —
    the workspace's dotenv walk."""
    questions = _questions(light)
    git = _light(light.command, light.cwd, extra_dirs, home)[1]  # memoized analyses
    return _with_facts(light, questions, _resolved(questions), git, extra_dirs, home)


def _with_facts(
    light: BashAnalysis, questions: _Questions, links: tuple[tuple[str, str], ...],
    git: GitFacts, extra_dirs: tuple[str, ...], home: str | None,
) -> BashAnalysis:
    cwd = light.cwd
    injected = _option_globs(questions)
    facts = (replace(workspace_facts(cwd, extra_dirs, git=git,
                                     file_links_below=questions.content_roots,
                                     tree_roots=_tree_roots(light),
                                     real_paths=links), option_globs=injected)
             if questions.trees
             else WorkspaceFacts(**git, real_paths=links, option_globs=injected))
    return analyze_bash(light.command, cwd, extra_read_dirs=extra_dirs, home=home,
                        workspace=facts)


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
    return _resolved(_questions(analysis))


@valueclass
class _Questions:
    """What an analysis asks of the file system: the paths to resolve
    (plain and globs, each sorted), whether it reads a tree, and the roots
    of the tree reads that read through links to files."""

    plain: tuple[str, ...]
    globs: tuple[str, ...]
    trees: bool
    content_roots: tuple[str, ...]


def _questions(analysis: BashAnalysis) -> _Questions:
    """The analysis's questions (not kept: from a review, kept beside their
    analyses they held every heavy analysis the analyzer's own bounded
    store had dropped — `cat /<99k chars>N/{1..256}` lines grew a stream
    by ~49 MB a line)."""
    # what a walk reached is left out: the analyzer asks where the walk's
    # root leads, never where a file it found does (`find / -name x`
    # reaches some 260 sensitive entries, each a glob to expand)
    plain: set[str] = set()
    globs: set[str] = set()
    for sub in analysis.subcommands:
        for p in sub.paths:
            if p.path.startswith("/") and not p.below:
                (globs if p.glob else plain).add(p.spelled or p.path)
        plain.update(t.spelled or t.root for t in sub.trees)
    return _Questions(
        tuple(sorted(plain)), tuple(sorted(globs)),
        any(s.trees for s in analysis.subcommands),
        tuple(t.root for s in analysis.subcommands for t in s.trees
              if t.content and t.follows_file_links))


def _resolved(questions: _Questions) -> tuple[tuple[str, str], ...]:
    """Where the paths asked about go through a link, and where they lead,
    looked up now."""
    out = []
    resolve = Resolver()
    for path in questions.plain:
        real = resolve(path)
        if real is not path and real != os.path.normpath(path):
            out.append((path, real))  # UNRESOLVED too: where it leads is unknown
    for pattern in questions.globs:
        out.extend((pattern, real) for real in _glob_links(pattern))
    return tuple(out)


#: bracket forms bash reads and Python's glob does not: `[^a]` (a literal
#: `^` to Python) and the classes `[[:alpha:]]`, `[[=a=]]`, `[[.a.]]`. From
#: a review: `cat sub/[[:alpha:]].txt` and `cat sub/[^a]*` matched nothing
#: here, the link sub/k.txt -> ~/.ssh/id_rsa among their files was never
#: followed, and both were allowed. Such a glob is judged as leading out.
_GLOB_FORMS_PYTHON_MISREADS = ("[^", "[:", "[=", "[.")

def _option_globs(questions: _Questions) -> tuple[str, ...]:
    """The globs whose last component starts with a wildcard and matches a
    name that starts with ``-`` here: standing first in a word, such a
    name is an option to the command (a file named `-r` makes `grep foo *`
    read every file below each directory, `.env` files included; one
    named `-R` follows links out). The analyzer decides which words it
    concerns; past :data:`MAX_GLOB_LINKS` names, a glob is taken to match
    one."""
    out = []
    for pattern in questions.globs:
        if posixpath.basename(pattern)[:1] not in ("*", "?", "["):
            continue
        matches = _glob_matches(pattern)
        if len(matches) > MAX_GLOB_LINKS or any(
                posixpath.basename(path).startswith("-") for path in matches):
            out.append(pattern)
    return tuple(out)


def _glob_matches(pattern: str) -> list[str]:
    """The names a glob matches here, at most one past
    :data:`MAX_GLOB_LINKS`. The analysis keeps a word's value, not which
    of its brackets were quoted: `cat '[k]'*` names the file `[k]x` — a
    link, from a review — while `[k]` read as a class matches `kx`. Both
    readings are listed."""
    import glob  # noqa: PLC0415 - only a command with a glob needs it

    readings = [pattern, pattern.replace("[", "[[]")] if "[" in pattern else [pattern]
    found: dict[str, None] = {}
    for path in (p for reading in readings for p in glob.iglob(reading)):
        found[path] = None
        if len(found) > MAX_GLOB_LINKS:
            break
    return list(found)


def _glob_links(pattern: str) -> list[str]:
    """Where a glob's files lead, for those reached through a link."""
    if any(form in pattern for form in _GLOB_FORMS_PYTHON_MISREADS):
        return ["/"]
    found: list[str] = []
    for n, path in enumerate(_glob_matches(pattern)):
        if n >= MAX_GLOB_LINKS:
            return [*found, "/"]  # too many to look at: judged as leaving
        real = real_path(path)
        if real != os.path.normpath(path):
            found.append(real)  # UNRESOLVED too: judged as unknown
    return found


def workspace_facts(
    cwd: str, extra_dirs: tuple[str, ...] = (), *, git: GitFacts | None = None,
    file_links_below: tuple[str, ...] = (), real_paths: tuple[tuple[str, str], ...] = (),
    tree_roots: tuple[str, ...] = (),
) -> WorkspaceFacts:
    """Facts for commands that run in ``cwd`` and may read ``extra_dirs``;
    where the links to a file below ``file_links_below`` (the roots of the
    command's tree reads) lead, looked up now; the credentials in the
    configuration of every repository below one of ``tree_roots``. The
    sandbox package (and its import time) is loaded only when needed."""
    from sandbox import dotenv_below, runtime_dir  # noqa: PLC0415

    # the runtime directory (the search's cache) is looked for only when
    # there is a directory to search
    found = dotenv_below([cwd, *extra_dirs], runtime_dir)
    if git is not None and tree_roots:
        git = {**git, "config_secrets": _nested_secrets(git, tree_roots, found.repositories)}
    return WorkspaceFacts(
        searched=found.searched,
        dotenv_files=found.files,
        unsearched=found.unknown,
        dir_links=found.links,
        dotenv_dirs=found.dirs,
        **({"repo_programs": repo_programs(cwd)} if git is None else git),
        file_links=_file_link_targets(found.file_links, file_links_below),
        real_paths=real_paths,
    )


def _tree_roots(analysis: BashAnalysis) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.root for s in analysis.subcommands if s.read_only
                               for t in s.trees))


def _nested_secrets(git: GitFacts, roots: tuple[str, ...],
                    repositories: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """The credentials git's answer held already, and those of each
    repository the walk found below a tree read's root: a nested
    repository's `.git/config` and the files its includes name are read
    with the rest of the tree (from a review: `grep -r` from an outer
    repository printed an inner one's included token)."""
    from sandbox import repositories_secrets  # noqa: PLC0415

    nested = repositories_secrets(list(roots), list(repositories))
    if not nested:
        return tuple(git.get("config_secrets", ()))
    return tuple(dict.fromkeys([*git.get("config_secrets", ()), *nested]))


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
    I/O), as the installed git reads them; asked only for commands that
    read with git, and of git's own discovery (a review: a bare repository
    as the working directory has no `.git` to look for). ``cwd`` is
    normalized first, as the analyzer takes it (from a review: with `--cwd
    ws/a/../hostile`, a a link, the walk up from the raw path never saw
    ws/hostile/.git and its core.fsmonitor)."""
    from sandbox import repository_programs  # noqa: PLC0415

    try:
        return repository_programs(os.path.normpath(cwd))
    except ValueError:  # a NUL in the path: no directory git could run in
        return ()


