"""The shell Claude Code runs a command in, for ``shellgate hook``.

The analysis reads a command as bash reads it with its default options,
from the directory and the environment it is given. Claude Code runs it in
the user's shell, with the options the user's startup files set (it
sources them into a snapshot each session) and with the environment it was
started with. Where either changes the language — a glob that matches
dotfiles (`dotglob`, zsh's `GLOB_DOTS`), `**` that descends, a name found
through a relative PATH entry or a version manager's shim, a `cd` through
CDPATH — the analysis does not hold, and the hook allows nothing it
concerns.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Any

__all__ = ["environment_redirects", "language_options", "shimmed", "startup_options",
           "startup_options_apply"]

#: bash options that change what a command line means (globs, paths,
#: where assignments go, what echo prints, aliases)
_LANGUAGE_OPTIONS = frozenset({
    "dotglob", "extglob", "globstar", "nocaseglob", "nullglob", "failglob", "xpg_echo",
    "expand_aliases", "lastpipe", "nocasematch", "globskipdots", "physical", "posix",
    "keyword", "allexport", "braceexpand",
})
#: the same for zsh, as `setopt` spells them once case and underscores are
#: dropped (GLOB_DOTS matches dotfiles, MAGIC_EQUAL_SUBST expands `~` after
#: any `=`, GLOB_SUBST globs what a variable holds, KSH_GLOB reads `*(…)`)
_ZSH_OPTIONS = frozenset({
    "globdots", "extendedglob", "nullglob", "cshnullglob", "nocaseglob", "globstarshort",
    "kshglob", "magicequalsubst", "globsubst", "shglob", "rcexpandparam", "braceccl",
    "globassign", "markdirs", "numericglobsort", "chasedots", "chaselinks", "posixbuiltins",
})
#: the startup files of bash and zsh below the home that a session sources
_STARTUP_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_aliases",
                  ".zshenv", ".zprofile", ".zshrc", ".zlogin")
#: read at most this much of each
_READ_LIMIT = 1 << 20
#: what a version manager's shim or proxy resolves to
_MANAGERS = frozenset({"rustup", "asdf", "mise", "rtx", "pyenv", "rbenv", "nodenv", "goenv",
                       "volta", "proto", "fnm", "jenv", "sdkman", "direnv"})
#: characters that make a word a pattern the options above read differently
_GLOB_CHARS = frozenset("*?[")

#: (file identities) -> the options found: read again only when one changed
_SEEN: dict[str, tuple[tuple[tuple[int, ...] | None, ...], tuple[str, ...]]] = {}


def language_options(env: Mapping[str, str]) -> list[str]:
    """The language-changing options ``BASHOPTS``/``SHELLOPTS`` export to
    the shell Claude Code runs (``braceexpand`` is on by default and is
    listed by every bash: only a non-default set matters, so it is left out
    of SHELLOPTS' judgement)."""
    found = [o for o in env.get("BASHOPTS", "").split(":") if o in _LANGUAGE_OPTIONS]
    found += [o for o in env.get("SHELLOPTS", "").split(":")
              if o in _LANGUAGE_OPTIONS and o != "braceexpand"]
    return found


def startup_options(home: str) -> tuple[str, ...]:
    """The language-changing options the user's startup files name — in
    `shopt -s`, `set -o`, `setopt` or anywhere else outside a comment (a
    name is enough to stop an allow; Debian's own ~/.bashrc holds
    `#shopt -s globstar`) — and in the files they source directly
    (`source ~/.aliases`). From a review: `shopt -s
    dotglob` in ~/.bashrc, not exported, made Claude Code's `cat *` read
    the project's `.env` while the hook allowed it."""
    zdot = os.environ.get("ZDOTDIR")
    files = [os.path.join(home, name) for name in _STARTUP_FILES]
    if zdot and os.path.isabs(zdot):
        files += [os.path.join(zdot, name) for name in (".zshenv", ".zprofile", ".zshrc")]
    texts = [(path, _read(path)) for path in files]
    files += [p for _, text in texts for p in _sourced(text, home)]
    key = tuple(_identity(p) for p in files)
    kept = _SEEN.get(home)
    if kept is not None and kept[0] == key:
        return kept[1]
    words = " ".join(_uncommented(_read(p)) for p in files).lower()
    flat = words.replace("_", "")
    found = tuple(sorted({o for o in _LANGUAGE_OPTIONS - {"braceexpand"} if o in words}
                         | {o for o in _ZSH_OPTIONS if o in flat}))
    _SEEN[home] = (key, found)
    return found


def startup_options_apply(home: str, got: Any) -> bool:
    """Do the startup files' options change this command's meaning? Only
    a pattern reads differently under them: a command with no `*`, `?` or
    `[` is read alike (`expand_aliases` and `posix` aside, which the files
    may name for any command)."""
    found = startup_options(home)
    if not found:
        return False
    if {"expand_aliases", "posix", "keyword", "allexport", "xpg_echo", "lastpipe",
            "physical", "chasedots", "chaselinks", "posixbuiltins", "magicequalsubst"} & set(found):
        return True
    analysis = got.subject.analysis if got.subject is not None else None
    text = analysis.command if analysis is not None else ""
    return bool(_GLOB_CHARS & set(text)) or analysis is None


def environment_redirects(env: Mapping[str, str], got: Any) -> bool:
    """Does this environment send a name or a `cd` elsewhere than the
    analysis assumed: a PATH entry that is not absolute, or a CDPATH when
    the command changes directory?"""
    if any(not entry.startswith("/") for entry in env.get("PATH", "").split(":")):
        return True
    return bool(env.get("CDPATH")) and any(s.cd is not None for s in _subcommands(got))


def shimmed(got: Any) -> bool:
    """Is a command a version manager's shim or proxy, which runs what the
    project's files name (from a review: with `path = "/proc/self/cwd/tc"`
    in rust-toolchain.toml, `cargo --version` ran the project's program)?"""
    for sub in _subcommands(got):
        if not sub.argv or "/" in sub.argv[0]:
            continue
        found = shutil.which(sub.argv[0])
        real = os.path.realpath(found) if found else ""
        if "/shims/" in (found or "") or os.path.basename(real) in _MANAGERS:
            return True
    return False


def _subcommands(got: Any) -> tuple[Any, ...]:
    analysis = got.subject.analysis if got.subject is not None else None
    return analysis.subcommands if analysis is not None else ()


def _read(path: str) -> str:
    """A regular file's first MiB, as text (nothing for a FIFO or a device:
    opened without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except (OSError, ValueError):
        return ""
    try:
        import stat  # noqa: PLC0415

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, _READ_LIMIT).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def _uncommented(text: str) -> str:
    """The text without its comments: from a `#` that starts a word to the
    end of the line (a `#` inside a word, `${#x}`, starts none)."""
    out = []
    for line in text.splitlines():
        starts = (i for i, c in enumerate(line) if c == "#" and (i == 0 or line[i - 1] in " \t;"))
        cut = next(starts, len(line))
        out.append(line[:cut])
    return "\n".join(out)


def _sourced(text: str, home: str) -> list[str]:
    """The files a startup file sources by a literal path (`source
    ~/.aliases`, `. "$HOME/.shellrc"`), as absolute paths."""
    out = []
    for line in text.splitlines():
        words = line.strip().replace('"', " ").replace("'", " ").split()
        if len(words) < 2 or words[0] not in ("source", "."):
            continue
        path = words[1]
        for prefix in ("~/", "$HOME/", "${HOME}/"):
            if path.startswith(prefix):
                path = os.path.join(home, path[len(prefix):])
        if os.path.isabs(path):
            out.append(path)
    return out


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
