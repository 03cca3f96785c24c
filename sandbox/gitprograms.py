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
        found = _programs_of(view, where if depth == 0 else view.toplevel)
        if found:
            out += found
            continue  # the index is not read where the configuration runs programs
        links = ask_gitlinks(view, env)
        if isinstance(links, Unknown):
            return (f"<{links.reason}>",)
        pending += [(p, depth + 1) for p in links if os.path.lexists(os.path.join(p, ".git"))]
        out += _unchecked_modules(view, links)
    return tuple(dict.fromkeys(out))


def _programs_of(view: GitView, cwd: str) -> list[str]:
    out = [f"{e.key}={e.value if e.value is not None else 'true'}"
           for e in view.repository_entries() if program_entry(e)]
    if view.toplevel and not _inside(cwd, view.toplevel):
        # core.worktree (or GIT_WORK_TREE) elsewhere: `git diff` and `git
        # grep` print the files there
        out.append(f"core.worktree={view.toplevel}")
    out += [f"hook {name}" for name in _READ_HOOKS
            if os.path.lexists(os.path.join(view.hooks, name))]
    return out


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
