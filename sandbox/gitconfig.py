"""A repository's git configuration, read without running git: its git
directories (its own, each submodule's, each linked worktree's) and what
the configuration makes git run or read (``core.hooksPath``,
``include.path``, ``includeIf.*.path``), for the sandbox's mounts.

What git's *reads* run is asked of git itself (:mod:`sandbox.gitprograms`).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

#: at most this many git directories per repository (submodules, worktrees)
_MAX_GITDIRS = 256
#: bytes of a configuration file looked at for an include; a larger file
#: is taken to have one
_MENTIONS_LIMIT = 64 << 20
#: include files followed at most this deep
_MAX_INCLUDE_DEPTH = 8


class _Irregular:
    """The type of :data:`IRREGULAR`."""


#: what :func:`read_regular` returns for a name that is there but is no
#: regular file (a FIFO, a socket, a device)
IRREGULAR = _Irregular()


def read_regular(path: str, limit: int) -> bytes | _Irregular | None:
    """The first ``limit`` bytes of the regular file at ``path`` (links
    followed); None when it cannot be read; :data:`IRREGULAR` when it is
    not a regular file. Opened without blocking: from reviews, a FIFO
    planted as ``/tmp/.git/config`` (by any user: /tmp is everyone's)
    hung every check and run whose directory lay below /tmp, and the warm
    daemons' warm-ups, for good; ``shellgate run -- mkfifo sub/.git`` hung
    that run's post-run guard and every later run in the workspace."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return IRREGULAR
        chunks: list[bytes] = []
        size = 0
        while size < limit:
            chunk = os.read(fd, limit - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def resolve_gitdir(worktree: str) -> str | None:
    """The git directory of the work tree: ``.git`` itself, or what a
    ``gitdir:`` file or a symlink names (resolved)."""
    dotgit = os.path.join(worktree, ".git")
    try:
        st = os.lstat(dotgit)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return dotgit
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(dotgit)
        return real if os.path.isdir(real) else None
    data = read_regular(dotgit, 1 << 20)
    if not isinstance(data, bytes):
        return None  # unreadable, or no regular file: git takes it for no repository
    named = _git_file_path(data, b"gitdir: ")
    if named is None:
        return None
    target = os.path.realpath(os.path.join(worktree, named))
    return target if os.path.isdir(target) else None


def _git_file_path(data: bytes, prefix: bytes) -> str | None:
    """The path a ``.git`` file (``prefix`` ``gitdir: ``) or a ``commondir``
    file (no prefix) names, read as git reads it: every byte after the
    prefix but the line breaks that end the file — no other whitespace
    trimmed, no other line break special, no decoding. From a review: a
    reading that stripped spaces, split at a form feed or decoded UTF-8
    named a decoy directory, while git used `.meta/wt ` and obeyed the
    config planted there."""
    if not data.startswith(prefix):
        return None
    named = data[len(prefix):].rstrip(b"\r\n")
    return os.fsdecode(named) if named and b"\0" not in named else None


def gitdirs(gitdir: str) -> list[str]:
    """``gitdir``, each submodule's git directory below ``modules/`` (nested
    ones too) and each linked worktree's below ``worktrees/``."""
    out = [gitdir]
    queue = [gitdir]
    while queue and len(out) < _MAX_GITDIRS:
        current = queue.pop()
        for sub, recurse in (("modules", True), ("worktrees", False)):
            base = os.path.join(current, sub)
            for found in _git_dirs_below(base, nested=recurse):
                if len(out) >= _MAX_GITDIRS:
                    break
                out.append(found)
                if recurse:
                    queue.append(found)
    return out


def repository_gitdirs(gitdir: str) -> list[str]:
    """:func:`gitdirs`, and for each of them that names a common directory
    (a ``commondir`` file: a linked worktree's), that directory as git
    resolves it and the git directories below it. git obeys the common
    directory's config and hooks in the linked worktree wherever that
    directory lies, and it need not look like a repository (no ``HEAD``):
    from a review, a linked worktree whose common directory sat inside the
    workspace under another name left that directory's config writable,
    and a planted core.fsmonitor ran at the host's next `git status`.
    When git cannot say, the file's own reading stands; both are kept when
    they differ."""
    from .gitask import ask_common_dir  # noqa: PLC0415 - spawns git only for a commondir file

    own = gitdirs(gitdir)
    commons: list[str] = []
    queue = list(own)
    while queue and len(own) + len(commons) < _MAX_GITDIRS:
        current = queue.pop()
        if not os.path.lexists(os.path.join(current, "commondir")):
            continue
        said = ask_common_dir(current)
        named = [_common_dir(current), *([said] if isinstance(said, str) else [])]
        for common in dict.fromkeys(os.path.realpath(c) for c in named):
            # kept when missing too: git adopts it the moment a command
            # makes it (from a review: a common directory moved away before
            # the run and re-made by the command, config and all)
            for found in gitdirs(common):
                if found not in own and found not in commons:
                    commons.append(found)
                    queue.append(found)
    # the common directories right after the repository's own: the first
    # few git directories are mounted, the rest only checked after the run
    # (from a review: 32 submodule directories pushed the common one past
    # the mounted few, and a host `git status` during the run obeyed it)
    return [own[0], *commons, *own[1:]][:_MAX_GITDIRS]


def _git_dirs_below(base: str, *, nested: bool) -> list[str]:
    """Directories below ``base`` that are git directories (hold ``HEAD``);
    submodule names may contain slashes, so `modules/a/b` is looked at too."""
    out: list[str] = []
    try:
        entries = [e for e in os.scandir(base) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return out
    for entry in entries:
        if os.path.lexists(os.path.join(entry.path, "HEAD")):
            out.append(entry.path)
        elif nested:
            out += _git_dirs_below(entry.path, nested=True)
    return out




def config_targets(gitdir: str, worktree: str, home: str) -> list[tuple[str, str]]:
    """(path, kind) of what the configuration makes git run or read for the
    repository: the ``core.hooksPath`` directory and every ``include.path``
    / ``includeIf.*.path`` file — from the system and global configuration
    and the repository's ``config`` and ``config.worktree``, and the files
    they include. A submodule's git directory names its work tree in
    ``core.worktree``; a relative hooksPath is relative to that.

    Read as git reads it (:func:`sandbox.gitask.ask_config`): a hooksPath
    the model of git's syntax missed (a byte-order mark, an include deeper
    than it followed) went unmounted. git is asked only when some file
    names an include or a hooksPath at all — git spells neither key any
    other way, and most repositories have none — and when git cannot
    answer, the model's reading stands."""
    worktree = _own_worktree(gitdir) or _linked_worktree(gitdir) or worktree
    starts = _shared_configs(home)
    # a linked worktree's git directory reads the shared `config` of the
    # common one (a review: core.hooksPath set there, as husky does, left
    # the linked worktree's hooks directory writable)
    common = _common_dir(gitdir)
    starts += [os.path.join(d, name) for d in dict.fromkeys((gitdir, common))
               for name in ("config", "config.worktree")]
    if not any(_mentions(p) for p in starts) and not _config_in_environment():
        return []
    from .gitask import Unknown, ask_config  # noqa: PLC0415

    listed = ask_config(gitdir)
    if isinstance(listed, Unknown):
        return _model_targets(starts, worktree, home)
    out: list[tuple[str, str]] = []
    for entry in listed:
        key, value = entry.key, entry.value or ""
        origin = entry.origin.partition(":")[2] if entry.origin.startswith("file:") else ""
        if key == "core.hookspath" and value:
            out.append((_expand(value, worktree, home), "dir"))
        elif key.startswith(("include.", "includeif.")) and key.endswith(".path") and value:
            out.append((_expand(value, os.path.dirname(origin) or gitdir, home), "file"))
    return out


def may_include(directory: str, home: str) -> bool:
    """Could the configuration git uses in ``directory`` include a file —
    the one way a file under a name of its own (`creds.inc` in the work
    tree) holds configuration, and credentials, git reads? True when a
    file git would read there names an include (or is no regular file),
    when the environment gives configuration or a git directory, or when a
    directory up from ``directory`` has a ``.git`` that cannot be read. A
    conservative filter before asking git, which costs two processes."""
    env = os.environ
    if _config_in_environment() or "GIT_DIR" in env or "GIT_COMMON_DIR" in env:
        return True
    starts = _shared_configs(home)
    for gitdir in _gitdirs_up(os.path.abspath(directory)):
        if gitdir is None:
            return True
        starts += [os.path.join(d, name) for d in dict.fromkeys((gitdir, _common_dir(gitdir)))
                   for name in ("config", "config.worktree")]
    return any(_mentions(p) for p in starts)


def _gitdirs_up(directory: str) -> Iterator[str | None]:
    """The git directories discovery may take going up from ``directory``:
    each ``.git`` (None for one that cannot be resolved) and each directory
    that holds ``HEAD`` itself (a bare repository), nearest first. Every
    one is yielded, not only the nearest git would take: a filter that
    looks at more files only asks git more often."""
    current = directory
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            yield resolve_gitdir(current)
        if os.path.lexists(os.path.join(current, "HEAD")):
            yield current
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def _shared_configs(home: str) -> list[str]:
    """The system and global files git reads, as this environment names
    them (GIT_CONFIG_SYSTEM, GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME)."""
    env = os.environ
    xdg = env.get("XDG_CONFIG_HOME", "")
    out = [env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"]
    if env.get("GIT_CONFIG_GLOBAL"):
        out.append(env["GIT_CONFIG_GLOBAL"])
    else:
        out += [_expand("~/.gitconfig", "/", home),
                os.path.join(xdg, "git", "config") if os.path.isabs(xdg)
                else _expand("~/.config/git/config", "/", home)]
    return out


def _config_in_environment() -> bool:
    """Does the environment itself give git configuration (GIT_CONFIG_COUNT
    and its keys, GIT_CONFIG_PARAMETERS)? Then git is asked whatever the
    files say."""
    return any(k in os.environ for k in ("GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS"))


def _common_dir(gitdir: str) -> str:
    data = read_regular(os.path.join(gitdir, "commondir"), 1 << 20)
    named = _git_file_path(data, b"") if isinstance(data, bytes) else None
    return os.path.realpath(os.path.join(gitdir, named)) if named else gitdir


def _linked_worktree(gitdir: str) -> str | None:
    """The work tree a linked worktree's git directory names (its `gitdir`
    file holds the path of the work tree's `.git`)."""
    named = read_regular(os.path.join(gitdir, "gitdir"), 4096)
    if not isinstance(named, bytes) or not named.strip():
        return None
    return os.path.dirname(os.path.normpath(named.decode("utf-8", "replace").strip()))


#: path -> (its identity, the answer): a stream of checks reads each
#: configuration file again only when it changed
_MENTIONS_SEEN: dict[str, tuple[tuple[int, ...], bool]] = {}


def _mentions(path: str) -> bool:
    """Does the file name an include or a hooksPath (or is it no regular
    file, which git would block on)?"""
    try:
        st = os.stat(path)
    except OSError:
        return False  # not there (or not reachable): git reads nothing from it
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
    seen = _MENTIONS_SEEN.get(path)
    if seen is not None and seen[0] == identity:
        return seen[1]
    answer = _read_mentions(path)
    if len(_MENTIONS_SEEN) >= 256:
        _MENTIONS_SEEN.clear()
    _MENTIONS_SEEN[path] = (identity, answer)
    return answer


def _read_mentions(path: str) -> bool:
    data = read_regular(path, _MENTIONS_LIMIT)
    if data is IRREGULAR:
        return True
    if not isinstance(data, bytes):
        return False
    if len(data) >= _MENTIONS_LIMIT:
        return True  # git reads on past what is looked at here (a review: 65 MiB of comments)
    low = data.lower()
    return b"include" in low or b"hookspath" in low


def _model_targets(starts: list[str], worktree: str, home: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path, section, key, value in _config_entries(starts, home):
        if section == "core" and key == "hookspath" and value:
            out.append((_expand(value, worktree, home), "dir"))
        elif section in ("include", "includeif") and key == "path" and value:
            out.append((_expand(value, os.path.dirname(path), home), "file"))
    return out


def _config_entries(starts: list[str], home: str) -> Iterator[tuple[str, str, str, str]]:
    """(file, section, key, value) of the config files ``starts`` and of
    every file they include (``include.path``, ``includeIf.*.path``), at
    most :data:`_MAX_INCLUDE_DEPTH` deep, each file once."""
    seen: set[str] = set()
    pending = [(p, 0) for p in starts]
    while pending:
        path, depth = pending.pop()
        if path in seen or depth > _MAX_INCLUDE_DEPTH:
            continue
        seen.add(path)
        for section, key, value in parse_config(path):
            yield path, section, key, value
            if section in ("include", "includeif") and key == "path" and value:
                pending.append((_expand(value, os.path.dirname(path), home), depth + 1))


def _own_worktree(gitdir: str) -> str | None:
    """``core.worktree`` of a git directory's own config (submodules and
    linked worktrees name their work tree there), resolved."""
    for section, key, value in parse_config(os.path.join(gitdir, "config")):
        if section == "core" and key == "worktree" and value:
            return os.path.normpath(os.path.join(gitdir, value))
    return None


def _expand(value: str, base: str, home: str) -> str:
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    return os.path.normpath(os.path.join(base, value))


def parse_config(path: str) -> list[tuple[str, str, str]]:
    """(section, key, value) of a git config file, lower-cased section
    (without its subsection) and key; enough of git's syntax for the keys
    read here (quoted values, comments, continuation lines). An unreadable
    file is empty (git stops at it). One that is there but is no regular
    file reads as a ``core.fsmonitor`` of unknown value: git would read
    whatever its writer feeds it, so a read may run anything (fail closed:
    ``git status`` there is asked, not allowed)."""
    data = read_regular(path, 1 << 20)
    if data is IRREGULAR:
        return [("core", "fsmonitor", f"<{path} is not a regular file>")]
    if not isinstance(data, bytes):
        return []
    text = data.decode("utf-8", "replace")
    out: list[tuple[str, str, str]] = []
    section = ""
    lines = text.replace("\\\n", "").splitlines()
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = line[1:].split("]", 1)[0].strip()
            section = header.split(None, 1)[0].split(".", 1)[0].strip('"').lower()
            rest = line.split("]", 1)[1].strip() if "]" in line else ""
            if not rest:
                continue
            line = rest  # `[core] hooksPath = x` on one line
        key, sep, value = line.partition("=")
        if not sep:
            continue
        out.append((section, key.strip().lower(), _value(value)))
    return out


def _value(text: str) -> str:
    """A config value: quotes removed, a trailing comment dropped."""
    out, quoted = [], False
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(text):
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(text[i], text[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()
