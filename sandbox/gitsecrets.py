"""Credentials in git configuration, wherever the file holding them lies.

A CI checkout leaves a token in `.git/config` (`http.<url>.extraheader`),
a proxy password sits in `~/.gitconfig`, and an include puts either in a
file under a name of its own (`creds.inc`) anywhere on the disk. Printing
one is a sensitive read. Three questions answer it:

* :func:`config_secrets` — the entries of the configuration git would use
  in a directory, and of every file its includes name whether or not the
  include is active there (`includeIf "gitdir:~/work/"` read from `~`, an
  `onbranch:` include of another branch);
* :func:`file_secrets` — a file judged by its content, as git reads a
  configuration file: the one answer that does not depend on knowing
  which configuration includes it (a repository elsewhere, a hard link);
* :func:`repositories_secrets` — the first for every repository a tree
  read reaches, nested ones too (`grep -r` from an outer repository).
"""

from __future__ import annotations

import os
import stat

from regexes import IGNORECASE, regex

from .gitask import ConfigEntry, Unknown, ask_file, ask_git
from .gitconfig import read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["INACTIVE", "config_secrets", "file_secrets", "holds_secret",
           "repositories_secrets"]

#: the scope of an entry from a file an include names that git does not
#: read where it was asked starts so (a file judged by itself: ``file``)
INACTIVE: Final = "inactive:"

#: (file, key, scope) of one entry holding a credential; a file of the form
#: ``<why>`` with key ``<unknown>`` says git could not answer
Secrets = tuple[tuple[str, str, str], ...]

#: a variable name that says its value is a credential (an extra header
#: carries a token: CI checkouts write `http.<url>.extraheader` into
#: .git/config); `author` is a person's name, not an authorization
_SECRET_NAME: Final = regex(r"pass|token|secret|auth(?!or)|extraheader|cookie", IGNORECASE)
#: a URL with userinfo, in a value (`http.proxy = http://user:pw@proxy`, a
#: remote's URL) or in a key's subsection (`url.https://TOKEN@host/.insteadof`)
_USERINFO: Final = regex(r"([A-Za-z][A-Za-z0-9+.-]*)?://([^/\s@]+)@")

#: what a file must hold, once quotes and escapes are taken out, for git to
#: read an entry :func:`holds_secret` takes for a credential from it
_SECRET_BYTES: Final = (b"pass", b"token", b"secret", b"auth", b"extraheader", b"cookie",
                        b"://", b"helper")
#: a file larger than this is handed to git without looking at it first
_LOOK_LIMIT: Final = 8 << 20
#: git follows includes this deep
_INCLUDE_DEPTH: Final = 10
#: files judged by content, kept by identity (dev, inode, size, mtime, ctime)
_FILES: dict[str, tuple[tuple[int, ...], Secrets]] = {}
_FILES_KEPT: Final = 512
#: nested repositories looked at for one tree read; past it, unknown
MAX_REPOSITORIES: Final = 64


def holds_secret(entry: ConfigEntry) -> bool:
    """Does printing this entry print a credential? (A credential helper
    named alone, `store` or `gcloud.sh`, is none; one with arguments or a
    shell snippet may carry a password. An ssh URL's user, `ssh://git@host`,
    is a login name: ssh authenticates with a key.)"""
    value = entry.value or ""
    if entry.key.startswith("credential.") and entry.key.endswith(".helper"):
        return any(c in value for c in " \t!=")
    return bool(_SECRET_NAME.search(entry.key) or _carries_userinfo(entry.key)
                or _carries_userinfo(value))


def _carries_userinfo(text: str) -> bool:
    for match in _USERINFO.finditer(text):
        scheme, userinfo = (match.group(1) or "").lower(), match.group(2)
        if ":" in userinfo or not scheme.endswith("ssh"):
            return True
    return False


def config_secrets(cwd: str, env: dict[str, str] | None = None) -> Secrets:
    """(file, key, scope) of each entry of the configuration git would use in
    ``cwd`` — every scope: `git config http.proxy` printed a password from
    the user's global file — whose value is or carries a credential, and of
    each file an include there names that git does not read in ``cwd``
    (from a review: `~/work-creds.inc`, included under `gitdir:~/work/`,
    read from `~`; an include active on another branch), with the scope
    :data:`INACTIVE` before the including file's (git prints them in no listing there, but a read of
    the file does). When git cannot answer, one entry saying so (every
    config read then asks)."""
    view = ask_git(os.path.abspath(cwd), env)
    if isinstance(view, Unknown):
        return ((f"<{view.reason}>", "<unknown>", "local"),)
    found = [(_origin(e), e.key, e.scope) for e in view.entries if holds_secret(e)]
    read = {_origin(e) for e in view.entries}
    for target, scope in dict.fromkeys(_include_targets(view.entries, env)):
        if target not in read:
            found += [(f, k, INACTIVE + scope) for f, k, _ in _closure(target, read, env)]
    return tuple(dict.fromkeys(found))


def file_secrets(path: str, env: dict[str, str] | None = None) -> Secrets:
    """The credential-holding entries git reads from the file ``path`` taken
    as a configuration file, scope ``file``: whatever includes it — a
    repository shellgate never looks at, a hard link's other name — a read
    of it prints them. A file that is no regular file holds none (git
    blocks on a FIFO include); a file git refuses to parse holds none git
    would use. Kept while the file's identity is unchanged."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ()
    if not stat.S_ISREG(st.st_mode):
        return ()
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    kept = _FILES.get(path)
    if kept is not None and kept[0] == identity:
        return kept[1]
    answer = _judged(path, st.st_size, env)
    _FILES[path] = (identity, answer)
    while len(_FILES) > _FILES_KEPT:
        del _FILES[next(iter(_FILES))]
    return answer


def repositories_secrets(roots: list[str], repositories: list[str],
                         env: dict[str, str] | None = None) -> Secrets:
    """:func:`config_secrets` of each repository (the directory holding a
    `.git`) strictly below one of ``roots``: a tree read from an outer
    repository reaches a nested one's `.git/config` and the files its
    includes name (from a review: `grep -r` from the outer repository
    printed the inner one's included token). The roots' own are the
    caller's. Past :data:`MAX_REPOSITORIES`, unknown."""
    below = [r for r in dict.fromkeys(repositories)
             if any(r.startswith(root.rstrip("/") + "/") for root in roots)]
    if len(below) > MAX_REPOSITORIES:
        return ((f"<more than {MAX_REPOSITORIES} repositories below {roots[0]}>", "<unknown>",
                 "local"),)
    return tuple(dict.fromkeys(e for place in below for e in config_secrets(place, env)))


# -- judging one file ----------------------------------------------------------------

def _judged(path: str, size: int, env: dict[str, str] | None) -> Secrets:
    data = read_regular(path, _LOOK_LIMIT + 1) if size <= _LOOK_LIMIT else None
    if isinstance(data, bytes) and not _may_hold(data):
        return ()
    if data is not None and not isinstance(data, bytes):
        return ()  # no longer a regular file: it holds nothing a reader prints
    entries = ask_file(path, env)
    if isinstance(entries, Unknown):
        return ((path, "<unknown>", "file"),)
    if entries is None:
        # no configuration git reads; the credential store's own format
        # (`store --file=…` names any file) is a credential all the same
        return ((path, "credential.helper store", "file"),) if _store_format(data) else ()
    return tuple(dict.fromkeys((path, e.key, "file") for e in entries if holds_secret(e)))


#: one line of git's credential store: a URL with a user and a password
_STORE_LINE: Final = regex(rb"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]*@\S*")


def _store_format(data: bytes | None) -> bool:
    """Is the file git's credential store (`https://user:TOKEN@host` a
    line)? From a review: `credential.helper = store --file=$PWD/store.txt`
    and `cat store.txt` printed the token unasked."""
    lines = [line.strip() for line in (data or b"").splitlines() if line.strip()]
    return bool(lines) and all(_STORE_LINE.fullmatch(line) for line in lines)


def _may_hold(data: bytes) -> bool:
    """Could git read an entry holding a credential from this file? Not
    unless, with line continuations, backslashes and quotes taken out (the
    only ways git's syntax joins text: `"pa"ss`, `pa\\ss` in a subsection,
    `http:/\\⏎/u:p@h`), it holds a word :func:`holds_secret` looks for (a
    credential store's line holds `://`)."""
    for joiner in (b"\\\r\n", b"\\\n", b"\\", b'"'):
        data = data.replace(joiner, b"")
    data = data.lower()
    return any(word in data for word in _SECRET_BYTES)


# -- includes ------------------------------------------------------------------------

def _include_targets(entries: tuple[ConfigEntry, ...] | list[ConfigEntry],
                     env: dict[str, str] | None) -> list[tuple[str, str]]:
    """Every file an `include.path` or `includeIf.<condition>.path` entry
    names, active or not, as git expands it (`~/` from HOME, a relative
    path from the including file's directory), resolved as the kernel
    opens it; with the including entry's scope."""
    home = (env if env is not None else os.environ).get("HOME") or os.path.expanduser("~")
    out = []
    for entry in entries:
        key, value = entry.key, entry.value or ""
        if not (key.startswith(("include.", "includeif.")) and key.endswith(".path") and value):
            continue
        origin = _origin(entry)
        if value.startswith("~/"):
            target = os.path.join(home, value[2:])
        elif value.startswith("~"):
            named = _user_home(value)  # `~user/…`, as git expands it
            if named is None:
                continue
            target = named
        elif value.startswith("%(prefix)/"):
            target = os.path.join(_git_prefix(env), value[len("%(prefix)/"):])
        elif os.path.isabs(origin):
            target = os.path.join(os.path.dirname(origin), value)
        elif os.path.isabs(value):
            target = value
        else:
            continue  # relative to a blob or the command line: nothing on disk to name
        out.append((os.path.realpath(target), entry.scope))
    return out


def _user_home(value: str) -> str | None:
    """`~user/rest` with that user's home (from a review: an inactive
    include written `~root/../…` was joined as a relative path, and the
    file it names was never looked at)."""
    import pwd  # noqa: PLC0415 - only a configuration that spells one needs it

    name, _, rest = value[1:].partition("/")
    try:
        return os.path.join(pwd.getpwnam(name).pw_dir, rest)
    except (KeyError, ValueError):
        return None  # git cannot expand it either: no file


def _git_prefix(env: dict[str, str] | None) -> str:
    """The prefix git was installed under (`%(prefix)/` in an include):
    two levels up from the git the environment finds."""
    import shutil  # noqa: PLC0415

    found = shutil.which("git", path=(env if env is not None else os.environ).get("PATH"))
    return os.path.dirname(os.path.dirname(os.path.realpath(found))) if found else "/usr"


def _closure(target: str, read: set[str], env: dict[str, str] | None) -> Secrets:
    """The secrets of ``target`` and of what it includes in turn, as deep
    as git follows includes, each file once."""
    found: list[tuple[str, str, str]] = []
    seen = set(read)
    layer = [target]
    for _ in range(_INCLUDE_DEPTH):
        layer = [t for t in dict.fromkeys(layer) if t not in seen]
        if not layer:
            break
        seen.update(layer)
        following: list[str] = []
        for path in layer:
            found += file_secrets(path, env)
            entries = _includes_of(path, env)
            following += [t for t, _ in _include_targets(entries, env)]
        layer = following
    return tuple(found)


def _includes_of(path: str, env: dict[str, str] | None) -> list[ConfigEntry]:
    """The include entries of one file (only a file that names an include
    is handed to git for them; one past the look-ahead is too)."""
    data = read_regular(path, _LOOK_LIMIT + 1)
    if not isinstance(data, bytes) or (len(data) <= _LOOK_LIMIT
                                       and b"include" not in data.lower()):
        return []
    entries = ask_file(path, env)
    return [] if isinstance(entries, Unknown) or entries is None else list(entries)


def _origin(entry: ConfigEntry) -> str:
    return entry.origin.partition(":")[2] if entry.origin.startswith("file:") else entry.origin
