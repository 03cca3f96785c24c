"""Facts about the files around a command, and which dotenv files a command
that walks a directory tree reaches.

A dotenv file holds secrets, and reading one into a model's context needs a
person wherever it lies (the sensitive-path table's level "ask"). `cat .env`
names the file; `grep -r KEY .`, `find . -exec cat {} +` and
`find . -print0 | xargs -0 cat` read it without naming it (from the
execution oracle: the fixture's canary came out of an allowed
`find . -type f -exec cat {} +`). Which files lie below a directory is a
fact of the filesystem, and the analyzer does no I/O: its caller finds the
dotenv files (``sandbox.workspace_facts``) and passes them in. Without
facts, a command that reads the contents of a tree is taken to reach one.
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkspaceFacts:
    """What the caller found around the command (the analyzer does no I/O).

    ``searched``: directories searched for dotenv files to every depth,
    except below ``unsearched`` (a search that ran out of time, or could not
    list a directory); ``dotenv_files`` are what it found. ``rg_config``:
    ripgrep may read a configuration file (``RIPGREP_CONFIG_PATH`` is set),
    which can add ``--hidden``. ``repo_programs``: the configuration entries
    of the repository at the working directory that run programs
    (``core.fsmonitor=…``, a clean filter, ``diff.external``), read without
    running git; with any, git's reads are not read-only.
    """

    searched: tuple[str, ...] = ()
    dotenv_files: tuple[str, ...] = ()
    unsearched: tuple[str, ...] = ()
    rg_config: bool = True
    repo_programs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TreeRead:
    """A command reads the contents of files it finds itself below ``root``.

    ``names``: ``(pattern, fold_case)`` tests a file's name must all pass to
    be read (``find -name``, ``grep --include``); ``excludes``: patterns
    whose files are skipped (``grep --exclude``, ``rg -g '!…'``);
    ``skips_hidden``: names starting with ``.`` are skipped at every depth
    below the root (ripgrep's default)."""

    root: str
    names: tuple[tuple[str, bool], ...] = ()
    excludes: tuple[str, ...] = ()
    skips_hidden: bool = False

    def reaches(self, path: str) -> bool:
        """Would this walk read ``path``, an absolute path below ``root``?"""
        rel = posixpath.relpath(path, self.root)
        name = posixpath.basename(path)
        if self.skips_hidden and any(part.startswith(".") for part in rel.split("/")):
            return False
        if any(_plain(p) and fnmatch.fnmatchcase(name, p) for p in self.excludes):
            return False
        return all(not _plain(pattern) or _matches(name, pattern, fold)
                   for pattern, fold in self.names)


def _matches(name: str, pattern: str, fold: bool) -> bool:
    if fold:
        return fnmatch.fnmatchcase(name.lower(), pattern.lower())
    return fnmatch.fnmatchcase(name, pattern)


def _plain(pattern: str) -> bool:
    """Patterns Python's fnmatch reads as find, grep and rg do: without
    ``\\`` (an escape for them, a letter for fnmatch) or ``[`` (POSIX
    classes such as ``[[:alpha:]]``). Any other pattern filters nothing:
    a name test passes, an exclusion excludes nothing."""
    return "\\" not in pattern and "[" not in pattern


def dotenv_reached(root: str, tree: TreeRead, facts: WorkspaceFacts | None) -> list[str]:
    """The dotenv paths a walk of ``root`` (absolute) reaches: files found
    there, or ``ROOT/**/.env`` where nobody looked."""
    unknown = [posixpath.join(root, "**", ".env")]
    if facts is None or not any(_within(root, s) for s in facts.searched):
        return unknown
    if any(_within(u, root) or _within(root, u) for u in facts.unsearched):
        return unknown
    # ripgrep skips hidden names unless a configuration file adds --hidden
    walk = TreeRead(root, tree.names, tree.excludes, tree.skips_hidden and not facts.rg_config)
    return [f for f in facts.dotenv_files if _within(f, root) and f != root and walk.reaches(f)]


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
