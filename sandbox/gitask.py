"""The configuration git would use, asked of the installed git.

A model of git's config syntax and repository layouts disagreed with git
(a byte-order mark, what ends a line or a comment, section headers,
include forms and depths, worktrees, shared git directories, bare layouts)
and each disagreement hid a program git then ran. So git is asked, in the
exact directory the command runs in, with the environment it runs with:
``git config --list --show-origin --show-scope -z --includes`` for the
entries and ``git rev-parse`` for where the repository is.

git may hang (an include that is a FIFO blocks every git command in that
repository) or refuse (a config it cannot parse, a repository owned by
someone else): it runs with a hard timeout and is killed past it, and a
timeout or a failure is :data:`UNKNOWN` — the caller asks a person.

Answers are kept, keyed by the identity of every file git reported
reading, every file an include names (there or not), the directories
discovery looked at and the environment variables git reads, so a
`check --jsonl` stream or a warm process does not run git per line, and
any change to what git would read is a new question.
"""

from __future__ import annotations

import os
import select
import time

from values import valueclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["UNKNOWN", "ConfigEntry", "GitView", "Unknown", "ask_common_dir", "ask_config",
           "ask_file", "ask_git", "ask_gitlinks", "clear_cache"]

#: git is killed past this many seconds (a FIFO include blocks it for ever)
TIMEOUT: Final = 2.0
#: answers kept (one per directory a stream asks about)
_CACHE_SIZE: Final = 64
#: what git prints at most; a config larger than this is not judged
_MAX_OUTPUT: Final = 64 << 20
#: the same for one file judged by its content (a file of 800,000 entries
#: took 30 s and 1.4 GB to read back: unknown, which asks, long before)
_MAX_FILE_OUTPUT: Final = 4 << 20

#: scopes whose entries the repository controls: its own config, its
#: worktree's, and what they include (git reports an included file with the
#: scope of the file that includes it)
REPOSITORY_SCOPES: Final = frozenset({"local", "worktree"})


@valueclass
class ConfigEntry:
    """One entry as git reports it: ``key`` lower-cased by git (the
    subsection keeps its case), ``value`` None for a bare key (a boolean
    true)."""

    scope: str
    origin: str
    key: str
    value: str | None


@valueclass
class GitView:
    """What git says about the directory: no repository (``gitdir`` empty),
    or its top, git directory, common directory, hooks directory and every
    configuration entry git would use."""

    entries: tuple[ConfigEntry, ...] = ()
    toplevel: str = ""
    gitdir: str = ""
    commondir: str = ""
    hooks: str = ""

    def repository_entries(self) -> tuple[ConfigEntry, ...]:
        """The entries the repository controls: its own scopes, and any
        read from a file inside its work tree or git directories — git
        labels an included file with the scope of the file including it,
        so a user's `includeIf "gitdir:~/work/"` of a file in the project
        reads as global (a review: its core.fsmonitor, planted by a
        sandboxed command, ran under an allowed `git status`)."""
        places = [p for p in (self.toplevel, self.gitdir, self.commondir) if p]
        return tuple(e for e in self.entries if e.scope in REPOSITORY_SCOPES
                     or any(_below_or_at(e.origin.partition(":")[2], p) for p in places))


@valueclass
class Unknown:
    """git could not answer (timed out, failed, printed what is not
    understood): whatever git would run there is unknown."""

    reason: str


UNKNOWN = Unknown("git could not say")

_Key = tuple[object, ...]
#: oldest first (a dict keeps insertion order; a hit is moved to the end)
_CACHE: dict[_Key, GitView] = {}


#: gitlinks answers, by repository, index identity, configuration and env
_GITLINKS: dict[_Key, tuple[str, ...]] = {}


def clear_cache() -> None:
    _CACHE.clear()
    _GITLINKS.clear()


def ask_git(cwd: str, env: dict[str, str] | None = None) -> GitView | Unknown:
    """What git would use in ``cwd``, run with ``env`` (the process's by
    default). No git installed: no program of a repository can run
    through it — an empty view."""
    env = dict(os.environ if env is None else env)
    git = _which("git", env)
    if isinstance(git, Unknown):
        return git
    if git is None or "\0" in cwd:
        return GitView()  # no git, or no directory any git could run in
    cwd = os.path.normpath(os.path.abspath(cwd))
    chain = _discovery_chain(cwd)
    env_key = _env_key(env)
    for key, kept in _cached_for(cwd, chain, env_key):
        if key == _full_key(cwd, chain, env_key, kept):
            _CACHE[key] = _CACHE.pop(key)
            return kept
    answer = _run(git, cwd, _git_env(env))
    if isinstance(answer, GitView):
        _CACHE[_full_key(cwd, chain, env_key, answer)] = answer
        while len(_CACHE) > _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
    return answer


def _git_env(env: dict[str, str]) -> dict[str, str]:
    """The command's environment, but git never prompts, pages or takes a
    lock, and speaks in its own words (every scope is listed: the callers
    choose by scope)."""
    return {**env, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat",
            "PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "LANGUAGE": "C"}


def _run(git: str, cwd: str, env: dict[str, str]) -> GitView | Unknown:
    where = _call(git, cwd, env, ["rev-parse", "--path-format=absolute", "--show-toplevel",
                                   "--git-dir", "--git-common-dir", "--git-path", "hooks"])
    if isinstance(where, Unknown):
        return where
    toplevel = gitdir = commondir = hooks = ""
    if where is not None:  # else no repository, as git sees it: the user's config alone
        lines = where.decode("utf-8", "surrogateescape").split("\n")
        if len(lines) < 4:
            # a bare repository has no top: git prints three lines
            lines = ["", *lines]
        toplevel, gitdir, commondir, hooks = lines[:4]
    listing = _call(git, cwd, env, ["config", "--list", "--show-origin", "--show-scope", "-z",
                                     "--includes"])
    if isinstance(listing, Unknown):
        return listing
    if listing is None:
        return Unknown("git could not read the repository's configuration")
    entries = _parse(listing)
    if entries is None:
        return Unknown("git printed a configuration listing that is not understood")
    base = toplevel or gitdir or cwd
    return GitView(tuple(_absolute(e, base) for e in entries), toplevel, gitdir, commondir,
                   hooks)


def ask_config(gitdir: str, env: dict[str, str] | None = None
               ) -> tuple[ConfigEntry, ...] | Unknown:
    """Every entry of the configuration git would use for the git
    directory ``gitdir`` (system, global, its own, and what they include),
    origins absolute."""
    env = dict(os.environ if env is None else env)
    git = _which("git", env)
    if isinstance(git, Unknown):
        return git
    if git is None:
        return ()
    listing = _call(git, gitdir, _git_env(env), [
        f"--git-dir={gitdir}", "config", "--list", "--show-origin", "--show-scope", "-z",
        "--includes"])
    if isinstance(listing, Unknown):
        return listing
    entries = _parse(listing or b"")
    if entries is None:
        return Unknown("git printed a configuration listing that is not understood")
    return tuple(_absolute(e, gitdir) for e in entries)


def ask_file(path: str, env: dict[str, str] | None = None
             ) -> tuple[ConfigEntry, ...] | Unknown | None:
    """The entries of the file ``path`` read on its own as a git
    configuration file (its includes not followed), scope ``file``; None
    when git does not take it for one (a line git cannot parse: git then
    refuses the whole file, wherever it is included from)."""
    env = dict(os.environ if env is None else env)
    git = _which("git", env)
    if isinstance(git, Unknown):
        return git
    if git is None:
        # unlike what a repository runs (no git, nothing runs), what a file
        # holds is there without git: unknown (from a review)
        return Unknown("git is not installed: whether the file holds a credential in git's "
                       "syntax is not known")
    # from `/`: git's discovery would otherwise read the configuration of
    # whatever repository this process stands in (a FIFO there blocks it)
    ran = _spawn([git, "-C", "/", "--no-pager", "config", "--file", os.path.abspath(path),
                  "--no-includes", "--list", "-z"], _git_env(env), max_output=_MAX_FILE_OUTPUT)
    if isinstance(ran, str):
        return Unknown(f"git config --file {ran}")
    status, out, err = ran
    if status != 0:
        if b"bad config" in err or b"unable to read config file" in err:
            return None
        said = err.decode("utf-8", "replace").strip().splitlines()[:1]
        return Unknown(f"git config --file failed: {said[0] if said else status}")
    out_entries: list[ConfigEntry] = []
    for record in out.split(b"\0")[:-1]:
        key, newline, value = record.decode("utf-8", "surrogateescape").partition("\n")
        out_entries.append(ConfigEntry("file", f"file:{path}", key, value if newline else None))
    return tuple(out_entries)


def ask_common_dir(gitdir: str, env: dict[str, str] | None = None) -> str | Unknown | None:
    """The common directory git resolves for the git directory ``gitdir``
    (what its ``commondir`` file names, as git reads that file), absolute;
    None when git takes ``gitdir`` for no git directory at all."""
    env = dict(os.environ if env is None else env)
    git = _which("git", env)
    if isinstance(git, Unknown) or git is None:
        return git
    said = _call(git, gitdir, _git_env(env), [
        f"--git-dir={gitdir}", "rev-parse", "--path-format=absolute", "--git-common-dir"])
    if isinstance(said, Unknown) or said is None:
        return said
    return said.decode("utf-8", "surrogateescape")


def ask_gitlinks(view: GitView, env: dict[str, str] | None = None) -> tuple[str, ...] | Unknown:
    """The work trees the index names as submodules (gitlinks), absolute.
    Asked only of a repository whose configuration runs nothing (the caller
    checks): reading the index queries core.fsmonitor (`git ls-files` ran a
    planted one), and expanding a sparse index reads trees, which a partial
    clone fetches through its remote's transport (a review: an `ext::` URL
    ran during the check). So the monitor and hooks are off, the index is
    read as it is (`--sparse`), and no transport may run."""
    env = dict(os.environ if env is None else env)
    git = _which("git", env)
    if isinstance(git, Unknown):
        return git
    if git is None or not view.toplevel:
        return ()
    index_file = env.get("GIT_INDEX_FILE") or os.path.join(view.gitdir, "index")
    # the listing depends on the index alone (its shared parts, under a
    # split index, are never rewritten in place: named by their hash), on
    # the configuration and on the environment; a stream asks once
    key = (git, view, _identity(os.path.join(view.toplevel, index_file), follow=True),
           _env_key(env))
    kept = _GITLINKS.get(key)
    if kept is not None:
        return kept
    overrides = [f"{e.key}=never" for e in view.entries
                 if e.key.startswith("protocol.") and e.key.endswith(".allow")]
    args = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
            "-c", "protocol.allow=never", *(a for o in overrides for a in ("-c", o)),
            "ls-files", "--sparse", "--stage", "-z"]
    index = _call(git, view.toplevel, {**_git_env(env), "GIT_NO_LAZY_FETCH": "1"}, args)
    if isinstance(index, Unknown):
        return index
    links = _gitlinks(index or b"", view.toplevel)
    if key[2] is not None:
        _GITLINKS[key] = links
        while len(_GITLINKS) > _CACHE_SIZE:
            del _GITLINKS[next(iter(_GITLINKS))]
    return links


def _gitlinks(index: bytes, toplevel: str) -> tuple[str, ...]:
    """``mode object stage<TAB>path`` records whose mode is a gitlink: git
    status and diff run git in each populated one, whether or not
    ``.gitmodules`` names it."""
    out = []
    for record in index.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta.startswith(b"160000 ") and path:
            out.append(os.path.join(toplevel, path.decode("utf-8", "surrogateescape")))
    return tuple(out)


def _call(git: str, cwd: str, env: dict[str, str], args: list[str]) -> bytes | Unknown | None:
    """git's output; None when it says "not a repository" (exit 128 with
    nothing on stdout from rev-parse); :class:`Unknown` on a timeout, any
    other failure, or too much output."""
    ran = _spawn([git, "-C", cwd, "--no-pager", *args], env)
    if isinstance(ran, str):
        return Unknown(f"git {_verb(args)} {ran}")
    status, out, err = ran
    if status == 128 and b"not a git repository" in err:
        return None
    if status != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()[:1]
        return Unknown(f"git {_verb(args)} failed: {said[0] if said else status}")
    # rev-parse ends each answer with a newline (`--git-dir=X` may come first)
    return out.rstrip(b"\n") if "rev-parse" in args else out


def _spawn(argv: list[str], env: dict[str, str], *,
           max_output: int = _MAX_OUTPUT) -> tuple[int, bytes, bytes] | str:
    """Run ``argv`` (stdin from /dev/null) and collect its output, killed
    past :data:`TIMEOUT` or :data:`_MAX_OUTPUT` bytes; a string says why
    there is no answer. posix_spawn and select rather than subprocess: a
    cold `shellgate check` of `git log` would otherwise load threading,
    signal handling and the rest of subprocess for one short child."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)])
    except (OSError, ValueError) as exc:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        return f"could not run: {exc}"
    os.close(out_w)
    os.close(err_w)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    why = _collect(chunks, max_output)
    for fd in chunks:
        os.close(fd)
    if why:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    if why:
        return why
    return os.waitstatus_to_exitcode(status), b"".join(chunks[out_r]), b"".join(chunks[err_r])


def _collect(chunks: dict[int, list[bytes]], max_output: int) -> str:
    """Read each pipe to its end; what went wrong, or ''."""
    deadline = time.monotonic() + TIMEOUT
    open_fds = list(chunks)
    size = 0
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            return f"took more than {TIMEOUT:g} s (a FIFO in its configuration?)"
        ready, _, _ = select.select(open_fds, [], [], left)
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if not data:
                open_fds.remove(fd)
                continue
            chunks[fd].append(data)
            size += len(data)
            if size > max_output:
                return f"printed more than {max_output} bytes"
    return ""


def _below_or_at(path: str, root: str) -> bool:
    return bool(path) and (path == root or path.startswith(root.rstrip("/") + "/"))


def _which(name: str, env: dict[str, str]) -> str | Unknown | None:
    """The program ``name`` as the command's PATH finds it, in its
    absolute entries only: an empty or relative entry is the directory
    judged, and a `git` a repository put there would run while shellgate
    only asks about the repository. One found only there is unknown."""
    relative = False
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(folder):
            relative = relative or os.path.exists(os.path.join(folder or ".", name))
            continue
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return Unknown(f"{name} is found only through a relative PATH entry") if relative else None


def _verb(args: list[str]) -> str:
    return next(a for a in args if not a.startswith("-") and "=" not in a)


def _parse(listing: bytes) -> list[ConfigEntry] | None:
    """``scope NUL origin NUL key [LF value] NUL`` records."""
    fields = listing.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 3:
        return None
    out: list[ConfigEntry] = []
    for i in range(0, len(fields), 3):
        scope, origin, pair = (f.decode("utf-8", "surrogateescape") for f in fields[i:i + 3])
        key, newline, value = pair.partition("\n")
        out.append(ConfigEntry(scope, origin, key, value if newline else None))
    return out


def _absolute(entry: ConfigEntry, base: str) -> ConfigEntry:
    """git names a repository's files relative to the top of its work tree
    (``file:.git/config``), and an include as its path was written; made
    absolute and resolved as the kernel opens it. From a review: with
    `include.path = ../conflink/creds.inc` (conflink -> conf), the text
    named a file no command reads, and `cat conf/creds.inc` printed the
    token unasked."""
    kind, sep, path = entry.origin.partition(":")
    if kind == "file" and sep and path:
        return ConfigEntry(entry.scope, f"file:{os.path.realpath(os.path.join(base, path))}",
                           entry.key, entry.value)
    return entry


# -- the cache's key -------------------------------------------------------

#: environment variables git's discovery or configuration reads
_ENV_NAMES: Final = ("HOME", "XDG_CONFIG_HOME", "PATH")


def _env_key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith("GIT_") or k in _ENV_NAMES))


def _identity(path: str, *, follow: bool = False) -> tuple[int, ...] | None:
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _discovery_chain(cwd: str) -> tuple[tuple[str, tuple[int, ...] | None], ...]:
    """Each directory from ``cwd`` up, and its ``.git``: what git's
    discovery looks at (a ``.git`` made, removed or changed anywhere on
    the way is a new question)."""
    out = []
    path = cwd
    while True:
        out.append((path, _identity(os.path.join(path, ".git"))))
        parent = os.path.dirname(path)
        if parent == path:
            return tuple(out)
        path = parent


def _cached_for(cwd: str, chain: object, env_key: object) -> list[tuple[_Key, GitView]]:
    return [(k, v) for k, v in reversed(_CACHE.items()) if k[:3] == (cwd, chain, env_key)]


def _full_key(cwd: str, chain: object, env_key: object, view: GitView) -> _Key:
    """The identity of everything git read or would read: the git
    directories, each file it reported, its directory (a config file made
    where there was none), and every file an include names."""
    paths = {view.hooks}
    if view.gitdir:
        # HEAD decides `includeIf "onbranch:"`; commondir and gitdir where
        # a worktree's files are (each rewritten in place changes its ctime)
        paths.update((view.gitdir, view.commondir, os.path.join(view.gitdir, "config.worktree"),
                      os.path.join(view.commondir, "config"), os.path.join(view.gitdir, "index"),
                      os.path.join(view.gitdir, "HEAD"), os.path.join(view.gitdir, "commondir"),
                      os.path.join(view.gitdir, "gitdir")))
    # the user's files, there or not (a ~/.gitconfig made later is new)
    home = os.path.expanduser("~")
    paths.update((os.path.join(home, ".gitconfig"), os.path.join(home, ".config", "git"),
                  "/etc/gitconfig"))
    for entry in view.entries:
        kind, _, origin = entry.origin.partition(":")
        if kind != "file":
            continue
        paths.update((origin, os.path.dirname(origin)))
        if entry.key.startswith(("include.", "includeif.")) and entry.key.endswith(".path"):
            paths.add(_include_target(entry.value or "", origin, view))
    # both the name and what it leads to: an include that is a link to a
    # file rewritten elsewhere changes only the target's identity
    return (cwd, chain, env_key, tuple(sorted((p, _identity(p), _identity(p, follow=True))
                                              for p in paths if p)))


def _include_target(value: str, origin: str, view: GitView) -> str:
    if value.startswith("~/"):
        return os.path.expanduser(value)
    return os.path.normpath(os.path.join(os.path.dirname(origin), value))
