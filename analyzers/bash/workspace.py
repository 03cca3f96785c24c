"""Facts about the files around a command, and which dotenv files a command
that walks a directory tree reaches.

A dotenv file holds secrets, and reading one into a model's context needs a
person wherever it lies (the sensitive-path table's level "ask"). `cat .env`
names the file; `grep -r KEY .`, `find . -exec cat {} +` and
`find . -print0 | xargs -0 cat` read it without naming it (from the
execution oracle: the fixture's canary came out of an allowed
`find . -type f -exec cat {} +`). Which files lie below a directory is a
fact of the filesystem, and the analyzer does no I/O: its caller finds the
dotenv files (``gateway.workspace``, through ``sandbox.dotenv_below``) and
passes them in. Without facts, a command that reads the contents of a tree
is taken to reach one. Nothing relies on a tool skipping hidden names:
ripgrep's own rule gives way to its globs, types and ignore files (from a
review: ``rg -g '*' KEY`` and an ``.ignore`` saying ``!.env`` both printed
``.env``).
"""

from __future__ import annotations

import posixpath

from regexes import fnmatchcase
from values import replace, valueclass

#: where a path leads when the caller could not look it up (a directory on
#: its way not searchable, a loop of links, a name too long): unknown
UNRESOLVED = "<unresolved>"


@valueclass
class WorkspaceFacts:
    """What the caller found around the command (the analyzer does no I/O).

    ``searched``: directories searched for dotenv files to every depth,
    except below ``unsearched`` (a search that ran out of time, or could not
    list a directory); ``dotenv_files`` are what it found; ``dir_links``
    the symbolic links it met that are not to a file (a walk that follows
    one goes where nobody searched). ``repo_programs``: the configuration entries of
    the repository at the working directory that run programs
    (``core.fsmonitor=…``, a clean filter, ``diff.external``), read without
    running git; with any, git's reads are not read-only.
    """

    searched: tuple[str, ...] = ()
    dotenv_files: tuple[str, ...] = ()
    unsearched: tuple[str, ...] = ()
    dir_links: tuple[str, ...] = ()
    repo_programs: tuple[str, ...] = ()
    #: dotenv directories (``.envs/``, ``.env.d/``): every file in them counts
    dotenv_dirs: tuple[str, ...] = ()
    #: (path as written, path it resolves to) for the command's paths that
    #: go through a symbolic link: both are judged (from a review: with
    #: `up -> ..`, `cat up/.ssh/id_rsa` read as text stayed in the project)
    real_paths: tuple[tuple[str, str], ...] = ()
    #: (link, where it leads) for the symbolic links to a file that the
    #: search met below the command's tree reads: `find sub -exec cat {} +`
    #: reads the file a `sub/k.txt -> ~/.ssh/id_rsa` leads to (a review)
    file_links: tuple[tuple[str, str], ...] = ()
    #: (file, key, scope) of the git configuration entries (every scope)
    #: whose values are or carry credentials: printing them is a sensitive read
    config_secrets: tuple[tuple[str, str, str], ...] = ()
    #: globs (absolute, as the analysis resolved them) that match a name
    #: starting with ``-`` here: a word they start is an option too
    option_globs: tuple[str, ...] = ()


#: (pattern, include, fold_case): one name filter, in command-line order
Filter = tuple[str, bool, bool]


@valueclass
class TreeRead:
    """A command reads the contents of files it finds itself below ``root``.

    ``names``: ``(pattern, fold_case)`` tests a file's name must all pass
    (``find -name`` in a plain conjunction). ``filters``: include/exclude
    patterns where the last one matching a name decides (``grep
    --include/--exclude``, ``rg -g``); a name none matches is read when
    ``unmatched_read``. ``follows_links``: symbolic links to directories
    below the root are followed (``grep -R``, ``rg -L``, ``find -L``)."""

    root: str
    names: tuple[tuple[str, bool], ...] = ()
    filters: tuple[Filter, ...] = ()
    unmatched_read: bool = True
    follows_links: bool = False
    #: how deep below the root files are read (``diff DIR DIR``: 1)
    max_depth: int | None = None
    #: directory names not entered (``grep --exclude-dir``)
    skip_dirs: tuple[str, ...] = ()
    #: the walk reads the files' contents (``grep -r``); False for a walk
    #: that prints names, sizes or hashes (``find .``, ``ls -R``, ``du``):
    #: a dotenv file's name is no secret, a listing of ``~/.ssh`` is
    content: bool = True
    #: a link to a file met below the root is read where it leads: true of
    #: a reader handed what find found, of diff and of grep -R / rg -L;
    #: grep -r and rg skip the links they meet
    follows_file_links: bool = True
    #: the root with its `..` kept (analyzers.bash.paths.spell): resolved
    #: by the caller as the kernel does
    spelled: str = ""

    def reaches(self, path: str) -> bool:
        """Would this walk read ``path``, an absolute path below ``root``?
        A pattern fnmatch may read differently counts against us: as a
        name test or an include it matches, as an exclude it does not."""
        if not self.enters(posixpath.dirname(path), 1):
            return False
        name = posixpath.basename(path)
        if not all(not _plain(p) or _matches(name, p, fold) for p, fold in self.names):
            return False
        for pattern, include, fold in reversed(self.filters):
            if include and (not _plain(pattern) or _matches(name, pattern, fold)):
                return True
            if not include and _plain(pattern) and _matches(name, pattern, fold):
                return False
        return self.unmatched_read

    def enters(self, directory: str, below: int = 0) -> bool:
        """Would this walk read files ``below`` levels under ``directory``
        (at or below ``root``)? A dotenv directory is reached when its
        files would be: their names are not known, so no name test or
        filter keeps them out."""
        rel = posixpath.relpath(directory, self.root)
        parts = [] if rel == "." else rel.split("/")
        if self.max_depth is not None and len(parts) + below > self.max_depth:
            return False
        return not any(_plain(p) and fnmatchcase(part, p)
                       for part in parts for p in self.skip_dirs)


def _matches(name: str, pattern: str, fold: bool) -> bool:
    if fold:
        return fnmatchcase(name.lower(), pattern.lower())
    return fnmatchcase(name, pattern)


def _plain(pattern: str) -> bool:
    """Patterns Python's fnmatch reads as find, grep and rg do: without
    ``\\`` (an escape for them, a letter for fnmatch), ``[`` (POSIX classes
    such as ``[[:alpha:]]``), ``{`` (rg's alternatives) or ``/`` (rg and
    gitignore match those against paths, not names)."""
    return not any(c in pattern for c in "\\[{/")


def links_followed(root: str, tree: TreeRead, facts: WorkspaceFacts | None) -> bool:
    """Does a walk of ``root`` follow a link to a directory, where nobody
    searched and nothing was judged? (Its root through one, or one below it
    for a walk that follows links.)"""
    if facts is None:
        return False
    if any(_within(root, link) for link in facts.dir_links):
        return True
    return tree.follows_links and any(_within(link, root) for link in facts.dir_links)


def dotenv_reached(root: str, tree: TreeRead, facts: WorkspaceFacts | None) -> list[str]:
    """The dotenv paths a walk of ``root`` (absolute) reaches: files found
    there, or ``ROOT/**/.env`` where nobody looked."""
    if not tree.content:
        return []
    unknown = [posixpath.join(root, "**", ".env")]
    if facts is None or not any(_within(root, s) for s in facts.searched):
        return unknown
    if any(_within(u, root) or _within(root, u) for u in facts.unsearched):
        return unknown
    # a root through a link is named on the command line and followed by
    # every tool (`grep -r x src/shared` where shared -> ../../other)
    if any(_within(root, link) for link in facts.dir_links):
        return unknown
    if tree.follows_links and any(_within(link, root) for link in facts.dir_links):
        return unknown
    walk = replace(tree, root=root)
    files = [f for f in facts.dotenv_files if _within(f, root) and f != root and walk.reaches(f)]
    dirs = [d for d in facts.dotenv_dirs if _within(d, root) and walk.enters(d, 1)]
    return files + dirs


def file_links_reached(root: str, tree: TreeRead,
                       facts: WorkspaceFacts | None) -> list[tuple[str, str]]:
    """The (link, target) pairs of links to a file below ``root`` that a
    walk of it reads through."""
    if facts is None or not tree.content or not tree.follows_file_links:
        return []
    walk = replace(tree, root=root)
    return [(link, target) for link, target in facts.file_links
            if _within(link, root) and link != root and walk.reaches(link)]


def glob_tree(root: str, tree: TreeRead) -> TreeRead:
    """``tree`` walked from a glob operand: from the glob's directory, and
    following links (bash expands ``*`` to the names, links among them, and
    every tool follows a link it is given: from a review, ``grep -r KEY *``
    read another project's .env through ``shared -> ../other``)."""
    start = glob_root(root)
    if start == root:
        return replace(tree, root=root)
    return replace(tree, root=start, follows_links=True)


def glob_root(root: str) -> str:
    """The directory a walk of a glob operand starts from: the path up to
    its first component with a pattern (``src/*/x`` walks below ``src``;
    from a review, ``grep -r K= *`` was judged as a directory named ``*``)."""
    parts = root.split("/")
    for i, part in enumerate(parts):
        if any(c in part for c in "*?["):
            return "/".join(parts[:i]) or ("/" if root.startswith("/") else ".")
    return root


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
