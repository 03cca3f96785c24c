"""What a repository makes git's *reads* run or read: from git's own answer
(:mod:`sandbox.gitask`), the repository's configuration entries that name
a command, a helper, a driver or a path; the hook a read runs by itself;
a work tree outside the directory; and every populated submodule's, since
`git status` and `git diff` run git inside each one.

The key list is a pattern as well as a table: a key newer than this
module whose name says it runs or reads something (``*.command``,
``*cmd``, ``*.program``, ``*.helper``, ``*.driver``, ``*.textconv``,
``hook.*``, ``*path``, ``*file``...) asks rather than passes.
"""

from __future__ import annotations

import os

from .gitask import ConfigEntry, GitView, Unknown, ask_git, ask_gitlinks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["program_entry", "repository_programs"]

#: a variable name ending so names a program, a helper, a driver, a file or
#: a directory git reads (each was found running or reading through one of
#: git's reads: `core.fsmonitor`, `diff.*.textconv`, `merge.*.driver` via
#: `log --remerge-diff`, `core.pager`, `gpg.program` with log.showSignature)
_SUFFIXES: Final = (
    "command", "cmd", "program", "helper", "driver", "textconv", "path", "file", "editor",
    "pager", "proxy", "browser", "hook", "tool", "filter", "fsmonitor", "external", "askpass",
    "insteadof", "uploadpack", "receivepack", "vcs", "process", "clean", "smudge",
)
#: sections every key of which runs something (config-based hooks, the
#: pager per command, clean/smudge filters)
_SECTIONS: Final = frozenset({"hook", "pager", "filter"})
#: keys whose true runs something although their name does not say so:
#: signatures are checked by gpg.program; a partial clone fetches a missing
#: object on any read (`git show`, even `git rev-parse HEAD:file`) through
#: the remote's transport, which may be a command
_WHEN_TRUE: Final = frozenset({"log.showsignature", "remote.*.promisor"})
#: a boolean git reads as false; anything else (`2`, `1k`, a word git then
#: refuses) is taken for true
_FALSE: Final = frozenset({"false", "no", "off", "0"})
_ANY_VALUE: Final = frozenset({"extensions.partialclone", "core.worktree"})
#: git has already read what these include: the entries are in the listing
_FOLLOWED: Final = ("include.", "includeif.")
#: values that name no program (a boolean, git's own fsmonitor daemon)
_INERT: Final = frozenset({"", "false", "no", "off", "0", "true", "yes", "on", "1", "cat"})

#: a hook git runs by itself during a read: `git status` and `git diff`
#: refresh the index and write it, which runs post-index-change
_READ_HOOKS: Final = ("post-index-change",)
#: submodules looked into, nested ones included; past it, unknown
_MAX_SUBMODULES: Final = 32
_MAX_DEPTH: Final = 4


def _pattern(key: str) -> str:
    """``diff.x.textconv`` → ``diff.*.textconv``: a subsection's name is
    the repository's choice."""
    section, _, rest = key.partition(".")
    if "." in rest:
        return f"{section}.*.{rest.rsplit('.', 1)[1]}"
    return key


def program_entry(entry: ConfigEntry) -> bool:
    """Does this entry make a read run a program or read a file?"""
    key = entry.key.lower()
    if key.startswith(_FOLLOWED):
        return False
    value = (entry.value or "").strip().lower() if entry.value is not None else ""
    pattern = _pattern(key)
    if pattern in _ANY_VALUE:
        return True
    if pattern in _WHEN_TRUE:
        return _git_true(value)
    if pattern == "submodule.*.update":
        return value.startswith("!")  # `update = !cmd` runs cmd
    if pattern == "protocol.*.allow" or key == "protocol.allow":
        return value != "never"  # `always` or `user` lets an ext:: URL run its command
    if pattern in ("remote.*.url", "remote.*.pushurl"):
        return "::" in value  # ext::, fd:: or a remote helper of the repository's naming
    named = key.split(".", 1)[0] in _SECTIONS or key.rsplit(".", 1)[-1].endswith(_SUFFIXES)
    return named and value not in _INERT


def _git_true(value: str) -> bool:
    """git's boolean: false only as false, no, off or an integer 0 (with
    a k, m or g unit); `2` or `-1` is true."""
    if value in _FALSE:
        return False
    try:
        return int(value.rstrip("kmg") or "1") != 0
    except ValueError:
        return True


def repository_programs(cwd: str, env: dict[str, str] | None = None) -> tuple[str, ...]:
    """``key=value`` of each entry (and ``hook NAME``) by which the
    repository holding ``cwd`` makes git's reads run a program or read
    outside it — not the user's own global configuration. When git cannot
    answer, one entry saying so: unknown is not safe."""
    out: list[str] = []
    seen: set[str] = set()
    pending = [(os.path.abspath(cwd), 0)]
    top = ""
    while pending:
        where, depth = pending.pop()
        view = ask_git(where, env)
        if isinstance(view, Unknown):
            return (f"<{view.reason}>",)
        if not view.gitdir or view.gitdir in seen:
            continue
        seen.add(view.gitdir)
        if len(seen) > _MAX_SUBMODULES or depth > _MAX_DEPTH:
            return (f"<more than {_MAX_SUBMODULES} submodules or {_MAX_DEPTH} levels of them: "
                    "what git runs in them is not looked at>",)
        if depth == 0:
            top = view.toplevel or where
        found = _programs_of(view, where if depth == 0 else view.toplevel, top)
        if found:
            out += found
            continue  # the index is not read where the configuration runs programs
        links = ask_gitlinks(view, env)
        if isinstance(links, Unknown):
            return (f"<{links.reason}>",)
        pending += [(p, depth + 1) for p in links if os.path.lexists(os.path.join(p, ".git"))]
        out += _unchecked_modules(view, links)
    return tuple(dict.fromkeys(out))


def _programs_of(view: GitView, cwd: str, top: str) -> list[str]:
    """What ``view``'s repository makes a read run or read outside: its
    entries that name a program, a work tree elsewhere, the hook a read
    runs, history elsewhere. ``cwd``: where git runs; ``top``: the work
    tree of the repository git starts in (a submodule's must lie in it)."""
    # `core.worktree` is judged by where git puts the work tree, not by
    # its presence: every submodule's git directory names its work tree
    # back (`../../../lib`), and every read in a superproject asked
    out = [f"{e.key}={e.value if e.value is not None else 'true'}"
           for e in view.repository_entries()
           if program_entry(e) and e.key.lower() != "core.worktree"]
    if view.toplevel and not (_inside(cwd, view.toplevel) and _inside(view.toplevel, top)):
        # core.worktree (or GIT_WORK_TREE) elsewhere: `git diff` and `git
        # grep` print the files there — a submodule's too, which `git
        # status` and `git diff` at the top run git in
        out.append(f"core.worktree={view.toplevel}")
    out += [f"hook {name}" for name in _READ_HOOKS
            if os.path.lexists(os.path.join(view.hooks, name))]
    out += _data_elsewhere(view, top)
    return out


def _data_elsewhere(view: GitView, top: str) -> list[str]:
    """Where git would read the repository's history from outside its work
    tree: a git directory or common directory elsewhere, an object store
    or pack directory that is a link out, a pack file or loose-object
    directory linked out, an alternate object store. Attack (from a
    review): a project's `.git` file saying `gitdir: ~/other/.git`, or a
    `.git/commondir` naming another repository, and `git log -p` or `git
    show HEAD:secret` printed that repository's files; `git cat-file
    --batch-all-objects --batch` prints every object of a pack linked in.

    A linked worktree's git directory (`C/worktrees/N`, whose `gitdir`
    file names this work tree's `.git` back) and its common directory are
    the same repository's: what the project cannot plant (it would have to
    write inside the other repository)."""
    if not view.toplevel or not view.gitdir:
        return []
    key = _layout_key(view)
    key = (top, *key) if key is not None else None
    kept = _ELSEWHERE.get(key) if key is not None else None
    if kept is not None:
        return kept
    found = _history_elsewhere(view, top)
    if key is not None:
        if len(_ELSEWHERE) >= _MAX_KEPT:
            _ELSEWHERE.pop(next(iter(_ELSEWHERE)))
        _ELSEWHERE[key] = found
    return found


#: answers of :func:`_data_elsewhere`, by the identity of what they read
_ELSEWHERE: dict[tuple[object, ...], list[str]] = {}
_MAX_KEPT = 256


def _layout_key(view: GitView) -> tuple[object, ...] | None:
    """What :func:`_history_elsewhere` read, by identity: the directories
    whose entries it looked at (a link added or replaced changes their
    ctime) and the files it read. None where alternates name other stores
    (what lies behind them is not in the key: asked afresh)."""
    common = view.commondir or view.gitdir
    objects = os.path.join(common, "objects")
    paths = (view.toplevel, view.gitdir, common, objects, os.path.join(objects, "pack"),
             os.path.join(objects, "info"), os.path.join(view.gitdir, "gitdir"))
    # (and whether the git directory names its work tree back, which
    # decides whether a git directory elsewhere is the same repository's)
    key: list[object] = [view.toplevel, view.gitdir, common, _names_work_tree(view)]
    for path in paths:
        try:
            st = os.lstat(path)
        except OSError:
            key.append(None)
            continue
        key.append((st.st_dev, st.st_ino, st.st_mode, st.st_ctime_ns, st.st_mtime_ns))
    for name in ("alternates", "http-alternates"):
        if os.path.lexists(os.path.join(objects, "info", name)):
            return None
    for name in _LOOSE:  # an object file linked in changes its directory
        try:
            st = os.lstat(os.path.join(objects, name))
        except OSError:
            continue
        key.append((name, st.st_ino, st.st_mode, st.st_ctime_ns, st.st_mtime_ns))
    return tuple(key)


def _history_elsewhere(view: GitView, top: str) -> list[str]:
    real_top = os.path.realpath(view.toplevel)
    gitdir = os.path.realpath(view.gitdir)
    common = os.path.realpath(view.commondir or view.gitdir)
    # the same repository's: a linked worktree's, or a git directory whose
    # own core.worktree puts its work tree here (a submodule's, under the
    # superproject's `.git/modules`) — the project cannot plant either, it
    # would have to write inside the other repository
    linked = _linked_worktree(gitdir, common, real_top) or _names_work_tree(view)
    owned = [real_top, os.path.realpath(top), *([gitdir, common] if linked else [])]
    out: list[str] = []
    for what, path in (("git directory", gitdir), ("common git directory", common)):
        if not _within_any(path, owned):
            out.append(f"<the {what} {path} lies outside the work tree: git reads its history>")
    for path in _object_stores(common):
        if not _within_any(path, owned):
            out.append(f"<objects are read from {path}, outside the work tree>")
    return list(dict.fromkeys(out))


def _names_work_tree(view: GitView) -> bool:
    """Does the git directory's own configuration set core.worktree (a
    submodule's does), which puts the work tree where git says it is?"""
    return any(e.key.lower() == "core.worktree" and e.scope == "local" for e in view.entries)


def _linked_worktree(gitdir: str, common: str, top: str) -> bool:
    """Is ``gitdir`` a linked worktree's own directory under ``common``,
    naming this work tree back (git writes `<gitdir>/gitdir` when it adds
    the worktree)?"""
    if os.path.dirname(gitdir) != os.path.join(common, "worktrees"):
        return False
    try:
        with open(os.path.join(gitdir, "gitdir"), "rb") as handle:
            named = handle.read(4096).rstrip(b"\r\n").decode("utf-8", "surrogateescape")
    except OSError:
        return False
    return os.path.realpath(os.path.dirname(named)) == top


#: loose objects live in objects/00 … objects/ff
_LOOSE = tuple(f"{i:02x}" for i in range(256))
#: alternates looked at, nested ones included (git stops at 5 levels)
_MAX_ALTERNATES = 16


#: bytes of an alternates file read; a longer one is not understood
_MAX_ALTERNATES_BYTES = 1 << 20


def _object_stores(common: str) -> list[str]:
    """Every directory or file git reads objects from, as the kernel
    resolves it: the object store, its pack directory and each entry
    there, each loose-object directory and each object file in it that is
    a link, and the alternates (a line a path, relative to the object
    store, `#` a comment; followed as git follows them). What is not
    understood is named as a place outside (`<…>`): an alternate in C
    quotes, an alternates file past 1 MiB, more stores than are followed.
    From a review: each of those, and a loose object linked to another
    repository's (git checks no hash on reading), printed its content."""
    objects = os.path.join(common, "objects")
    out = [os.path.realpath(objects)]
    pack = os.path.join(objects, "pack")
    out.append(os.path.realpath(pack))
    out += _links_in(pack)
    out += _loose_links(objects)
    out += _alternates(out[0])
    return out


def _loose_links(objects: str) -> list[str]:
    """Where the loose-object directories, and the object files in them,
    that are links lead."""
    out: list[str] = []
    for name in _LOOSE:
        path = os.path.join(objects, name)
        if os.path.islink(path):
            out.append(os.path.realpath(path))
            continue
        out += _links_in(path)
    return out


def _links_in(directory: str) -> list[str]:
    """Where the links in ``directory`` lead (none when it cannot be
    listed). contextlib stays out: `check` imports this module cold."""
    try:
        return [os.path.realpath(e.path) for e in os.scandir(directory) if e.is_symlink()]
    except OSError:
        return []


def _alternates(store: str) -> list[str]:
    """The stores ``store``'s alternates name, nested ones too."""
    out: list[str] = []
    pending, seen = [store], set[str]()
    while pending:
        store = pending.pop()
        if store in seen:
            continue
        if len(seen) >= _MAX_ALTERNATES:
            return [*out, f"<more than {_MAX_ALTERNATES} alternate object stores>"]
        seen.add(store)
        for name in ("alternates", "http-alternates"):
            try:
                with open(os.path.join(store, "info", name), "rb") as handle:
                    data = handle.read(_MAX_ALTERNATES_BYTES + 1)
            except OSError:
                continue
            if len(data) > _MAX_ALTERNATES_BYTES:
                out.append(f"<{name} of {store} past {_MAX_ALTERNATES_BYTES} bytes>")
                continue
            for raw in data.splitlines():
                line = raw.strip().decode("utf-8", "surrogateescape")
                if not line or line.startswith("#"):
                    continue
                if name == "http-alternates" or "://" in line or line.startswith('"'):
                    out.append(f"<{line}>")  # fetched, or quoted as C quotes: outside
                    continue
                target = os.path.realpath(os.path.join(store, line))
                out.append(target)
                pending.append(target)
    return out


def _within_any(path: str, places: list[str]) -> bool:
    return any(_inside(path, place) for place in places)


def _unchecked_modules(view: GitView, links: tuple[str, ...]) -> list[str]:
    """A submodule's git directory under ``modules/`` with no populated
    work tree is still opened by `git grep --recurse-submodules --cached`
    (a review: its partial clone's transport ran): its configuration is
    not looked at, so it is named as unknown."""
    base = os.path.join(view.commondir, "modules")
    if not links and not os.path.isdir(base):
        return []
    populated = {os.path.realpath(p) for p in links if os.path.lexists(os.path.join(p, ".git"))}
    out = []
    try:
        names = os.listdir(base)
    except OSError:
        return []
    for name in names:
        work = os.path.join(view.toplevel, name)
        if os.path.realpath(work) not in populated:
            out.append(f"<the submodule git directory modules/{name} is not checked out, and "
                       "what it runs is not looked at>")
    return out


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
