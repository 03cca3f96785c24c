"""Which commands read the contents of files they find themselves below a
directory (see :mod:`..workspace` for why it matters: dotenv files), and
the name filters each applies as the real tool does."""

from __future__ import annotations

from ..workspace import Filter, TreeRead, glob_root, glob_tree
from .find import FindFacts
from .flags import ParsedArgs
from .search import grep_recursive, search_operands

#: a reader run on found files that reads what is in them. grep's and rg's
#: -l, -c and -q print names, counts or a status, yet the pattern still
#: tests every file's content: from a review, 447 `grep -rl '^SECRET=…' .`
#: calls rebuilt a .env one character at a time. wc, ls, file, stat, du and
#: the checksums print sizes, names and hashes.
CONTENT_READERS = frozenset({"cat", "head", "tail", "grep", "egrep", "fgrep", "rg"})
#: rg options that list files without opening them
_NO_CONTENT = frozenset({"--files", "--type-list"})


def reads_content(argv0: str, p: ParsedArgs) -> bool:
    return argv0 in CONTENT_READERS and not (argv0 == "rg" and p.has(*_NO_CONTENT))


def search_trees(argv: tuple[str, ...], p: ParsedArgs) -> tuple[TreeRead, ...]:
    """grep -r and rg walk their operands (the working directory when none
    is given)."""
    name = argv[0]
    if not reads_content(name, p) or (name != "rg" and not grep_recursive(p)):
        return ()
    walk = _rg_walk(p) if name == "rg" else _grep_walk(p)
    return tuple(glob_tree(r, walk) for r in search_operands(name, p))


def _grep_walk(p: ParsedArgs) -> TreeRead:
    """GNU grep: of --include/--exclude the last that matches a name wins;
    a name none matches is read unless the first of them is --include."""
    filters: list[Filter] = [(v, f == "--include", False) for f, v in p.flags
                             if f in ("--include", "--exclude") and v is not None]
    unmatched = not filters or not filters[0][1]
    skip = tuple(v for f, v in p.flags if f == "--exclude-dir" and v is not None)
    follows = p.has("-R", "--dereference-recursive")
    return TreeRead("", (), tuple(filters), unmatched, follows, skip_dirs=skip,
                    follows_file_links=follows)


def _rg_walk(p: ParsedArgs) -> TreeRead:
    """ripgrep: of its globs the last that matches wins (`!` excludes); with
    any including glob, a name none matches is not read. File types (-t,
    --type-add) filter nothing here: a type may be defined to hold .env."""
    filters: list[Filter] = []
    fold_all = p.has("--glob-case-insensitive")  # from a review: -g '*.ENV' read .env
    for f, v in p.flags:
        if f in ("-g", "--glob", "--iglob") and v is not None:
            include = not v.startswith("!")
            filters.append((v if include else v[1:], include, fold_all or f == "--iglob"))
    unmatched = not any(include for _, include, _ in filters)
    follows = p.has("-L", "--follow")
    return TreeRead("", (), tuple(filters), unmatched, follows, follows_file_links=follows)


def diff_trees(p: ParsedArgs) -> tuple[TreeRead, ...]:
    """diff given directories compares the files in them — every depth with
    -r, the top level without (from a review: ``diff -N . src`` printed
    .env) — ``--from-file``/``--to-file`` too (``diff -rN --to-file=. src``);
    it follows links unless told not to."""
    sides = [*p.positionals, *(v for f, v in p.flags
                               if f in ("--from-file", "--to-file") and v is not None)]
    walk = TreeRead("", follows_links=not p.has("--no-dereference"),
                    max_depth=None if p.has("-r", "--recursive") else 1)
    return tuple(glob_tree(s, walk) for s in sides)


def found_trees(find: FindFacts, reader: tuple[str, ...], p: ParsedArgs,
                follows: bool) -> tuple[TreeRead, ...]:
    """A reader run on what a find found (``-exec … {} +``,
    ``-print0 | xargs -0``) reads below find's roots: only the files that
    passed find's name tests, unless it walks on itself (grep -r, rg)."""
    if not reader:
        return ()
    if not reads_content(reader[0], p):
        # names, sizes, hashes of what was found (`-exec sha256sum {} +`)
        walk = TreeRead("", find.names, follows_links=follows, content=False)
        return tuple(glob_tree(r, walk) for r in find.roots)
    if reader[0] == "rg" or grep_recursive(p):
        return tuple(TreeRead(glob_root(r), follows_links=True) for r in find.roots)
    walk = TreeRead("", find.names, follows_links=follows)
    return tuple(glob_tree(r, walk) for r in find.roots)


def listing_trees(argv: tuple[str, ...], p: ParsedArgs, find: FindFacts | None) -> tuple[
        TreeRead, ...]:
    """Walks that print names, sizes or hashes of what they find: every find,
    ``ls -R``, ``du`` and ``tree``. A name below ``~/.ssh`` is what `ls -a
    ~/.ssh` is denied for (from a review: `find .` and `ls -aR` in the home
    listed the keys)."""
    name = argv[0]
    if find is not None:
        walk = TreeRead("", follows_links=find.follows, max_depth=find.maxdepth, content=False)
        return tuple(glob_tree(r, walk) for r in find.roots)
    depth: int | None = None
    if name == "ls":
        if not p.has("-R", "--recursive"):
            return ()
        follows = p.has("-L", "--dereference")
    elif name == "du":
        if p.has("-s", "--summarize"):
            return ()
        value = next((v for f, v in p.flags if f in ("-d", "--max-depth") and v), None)
        depth = int(value) if value is not None and value.isdigit() else None
        follows = p.has("-L", "--dereference")
    elif name == "tree":
        value = next((v for f, v in p.flags if f == "-L" and v), None)
        depth = int(value) if value is not None and value.isdigit() else None
        follows = p.has("-l")
    else:
        return ()
    walk = TreeRead("", follows_links=follows, max_depth=depth, content=False)
    return tuple(glob_tree(o, walk) for o in (p.positionals or (".",)))
