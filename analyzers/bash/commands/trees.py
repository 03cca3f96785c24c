"""Which commands read the contents of files they find themselves below a
directory (see :mod:`..workspace` for why it matters: dotenv files)."""

from __future__ import annotations

from ..workspace import TreeRead
from .find import FindFacts
from .flags import ParsedArgs

#: a reader run on found files that prints what is in them (wc, ls, file,
#: stat, du and the checksums print counts, names and hashes)
CONTENT_READERS = frozenset({"cat", "head", "tail", "grep", "egrep", "fgrep", "rg"})
#: grep/rg options after which only names, counts or a status are printed
_NAMES_ONLY = frozenset({"-l", "-L", "-c", "-q", "--files-with-matches", "--files-without-match",
                         "--count", "--count-matches", "--quiet", "--silent", "--files",
                         "--type-list"})
_GREP_RECURSIVE = frozenset({"-r", "-R", "--recursive", "--dereference-recursive"})


def _values(p: ParsedArgs, *names: str) -> list[str]:
    return [v for f, v in p.flags if f in names and v is not None]


def prints_content(argv0: str, p: ParsedArgs) -> bool:
    return argv0 in CONTENT_READERS and not p.has(*_NAMES_ONLY)


def search_trees(argv: tuple[str, ...], p: ParsedArgs, roots: list[str]) -> tuple[TreeRead, ...]:
    """grep -r and rg walk their operands (``roots``, the working directory
    when none is given)."""
    name = argv[0]
    if not prints_content(name, p):
        return ()
    if name == "rg":
        return tuple(TreeRead(r, *_rg_filters(argv, p)) for r in roots)
    recursive = p.has(*_GREP_RECURSIVE) or "recurse" in _values(p, "-d", "--directories")
    if not recursive:
        return ()
    names = tuple((g, False) for g in _values(p, "--include"))
    # several --include globs are alternatives: one alone is a test
    return tuple(TreeRead(r, names if len(names) == 1 else (), tuple(_values(p, "--exclude")))
                 for r in roots)


def _rg_filters(
    argv: tuple[str, ...], p: ParsedArgs
) -> tuple[tuple[tuple[str, bool], ...], tuple[str, ...], bool]:
    globs = [(g, False) for g in _values(p, "-g", "--glob")]
    globs += [(g, True) for g in _values(p, "--iglob")]
    # gitignore-style: a glob with a `/` matches paths, not names
    excludes = tuple(g[1:] for g, fold in globs if g.startswith("!") and "/" not in g and not fold)
    positive = [(g, fold) for g, fold in globs if not g.startswith("!")]
    names = tuple(positive) if len(positive) == 1 and "/" not in positive[0][0] else ()
    u_count = sum(t.count("u") for t in argv[1:] if t.startswith("-") and not t.startswith("--"))
    hidden = p.has("--hidden", "-.", "--unrestricted") or u_count >= 2
    return names, excludes, not hidden


def diff_trees(p: ParsedArgs) -> tuple[TreeRead, ...]:
    if not p.has("-r", "--recursive"):
        return ()
    return tuple(TreeRead(op) for op in p.positionals)


def found_trees(find: FindFacts, reader: tuple[str, ...], p: ParsedArgs) -> tuple[TreeRead, ...]:
    """A reader run on what a find found (``-exec … {} +``,
    ``-print0 | xargs -0``) reads below find's roots: only the files that
    passed find's name tests, unless it walks on itself (grep -r, rg)."""
    if not reader or not prints_content(reader[0], p):
        return ()
    walks = reader[0] == "rg" or p.has(*_GREP_RECURSIVE)
    return tuple(TreeRead(r, () if walks else find.names) for r in find.roots)
