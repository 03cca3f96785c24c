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
    "cdablevars", "autocd", "globdots", "extendedglob", "nullglob", "cshnullglob", "nocaseglob",
    "globstarshort", "kshglob", "magicequalsubst", "globsubst", "shglob", "rcexpandparam",
    "braceccl", "globassign", "markdirs", "numericglobsort", "chasedots", "chaselinks",
    "posixbuiltins",
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

#: home -> (the start files' identities, the options found, the identity of
#: every file read): read again only when one changed
_SEEN: dict[str, tuple[Any, tuple[str, ...], tuple[tuple[str, tuple[int, ...] | None], ...]]] = {}


def language_options(env: Mapping[str, str]) -> list[str]:
    """The language-changing options ``BASHOPTS``/``SHELLOPTS`` export to
    the shell Claude Code runs (``braceexpand`` is on by default and is
    listed by every bash: only a non-default set matters, so it is left out
    of SHELLOPTS' judgement)."""
    found = [o for o in env.get("BASHOPTS", "").split(":") if o in _LANGUAGE_OPTIONS]
    found += [o for o in env.get("SHELLOPTS", "").split(":")
              if o in _LANGUAGE_OPTIONS and o != "braceexpand"]
    if "POSIXLY_CORRECT" in env:
        # bash starts in posix mode when it is set, to any value, as with
        # SHELLOPTS=posix (from a review: that stopped an allow, this not)
        found.append("posix (POSIXLY_CORRECT)")
    return found


def startup_options(home: str) -> tuple[str, ...]:
    """The language-changing options the user's startup files turn on —
    bash's `shopt -s`, `set -o` and `set -P/-k/-a`, zsh's `setopt` and
    `unsetopt NO_…` — in the home's files, the system's (`/etc/bash.bashrc`,
    `/etc/profile.d/`, `/etc/zsh/`), `BASH_ENV` and `ENV`, and every file
    they source, through `for` loops and conditions too, as deep as they
    go (64 files, 4 MiB at most). An option spelled through a variable,
    or a file sourced through one, is :data:`UNKNOWN_OPTION`. A query
    (`shopt -oq posix`, in Debian's stock ~/.bashrc) turns nothing on.
    From a review: `shopt -s dotglob` in ~/.bashrc, not exported, made
    Claude Code's `cat *` read the project's `.env` while the hook allowed
    it."""
    starts = _start_files(home)
    key = tuple((p, _identity(p)) for p in starts)
    kept = _SEEN.get(home)
    if kept is not None and kept[0] == key and all(
            _identity(p) == i for p, i in kept[2]):
        return kept[1]
    scan = _Scan(home)
    for path in starts:
        scan.file(path)
    found = tuple(sorted(scan.options))
    _SEEN[home] = (key, found, tuple((p, _identity(p)) for p in scan.read))
    return found


#: what an option set through a variable, or a file sourced through one, is
UNKNOWN_OPTION = "<an option or a file named through a variable>"
#: bash's single-letter `set` flags that change the language
_SET_FLAGS = {"P": "physical", "k": "keyword", "a": "allexport"}
_MAX_FILES = 64
_MAX_BYTES = 4 << 20


def _start_files(home: str) -> list[str]:
    env = os.environ
    files = [os.path.join(home, name) for name in _STARTUP_FILES]
    files += ["/etc/bash.bashrc", "/etc/bashrc", "/etc/profile", "/etc/zsh/zshenv",
              "/etc/zsh/zshrc", "/etc/zshenv", "/etc/zshrc"]
    files += [env[k] for k in ("BASH_ENV", "ENV") if os.path.isabs(env.get(k, ""))]
    zdot = env.get("ZDOTDIR")
    if zdot and os.path.isabs(zdot):
        files += [os.path.join(zdot, name) for name in (".zshenv", ".zprofile", ".zshrc")]
    return list(dict.fromkeys(files))


class _Scan:
    """One reading of the startup files: the options they turn on and the
    files read."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.options: set[str] = set()
        self.read: list[str] = []
        self.size = 0

    def file(self, path: str) -> None:
        if path in self.read:
            return
        if len(self.read) >= _MAX_FILES or self.size > _MAX_BYTES:
            self.options.add(UNKNOWN_OPTION)
            return
        self.read.append(path)
        text = _read(path)
        self.size += len(text)
        loops: dict[str, list[str]] = {}
        for words in _commands(_uncommented(text)):
            self.command(words, loops)

    def command(self, words: list[str], loops: dict[str, list[str]]) -> None:
        while words and words[0] in _PREFIXES:
            words = words[1:]
        if not words:
            return
        name, args = words[0], words[1:]
        if name == "for" and len(args) >= 2 and args[1] == "in":
            loops[args[0]] = [p for w in args[2:] for p in self.paths(w, {})]
        elif name in (".", "source") and args:
            for path in self.paths(args[0], loops):
                self.file(path)
        elif name == "export" and args and args[0].partition("=")[0] in _STARTUP_VARIABLES:
            self.assignment(args[0])
        elif name.partition("=")[0] in _STARTUP_VARIABLES and "=" in name:
            self.assignment(name)
        elif name in ("shopt", "set", "setopt", "unsetopt"):
            self.options |= _turned_on(name, args)

    def assignment(self, word: str) -> None:
        variable, _, value = word.partition("=")
        for target in self.paths(value, {}):
            if variable == "ZDOTDIR":
                for name in (".zshenv", ".zprofile", ".zshrc"):
                    self.file(os.path.join(target, name))
            else:
                self.file(target)

    def paths(self, word: str, loops: dict[str, list[str]]) -> list[str]:
        """The files a word names: `~/`, `$HOME` and a `for` loop's
        variable expanded, a glob matched; a word with another variable is
        unknown."""
        for spelled in ("${HOME}", "$HOME", "~"):
            if word == spelled or word.startswith(spelled + "/"):
                word = self.home + word[len(spelled):]
        variable = word.removeprefix("$").strip("{}")
        if word.startswith("$") and variable in loops:
            return loops[variable]
        if "$" in word or "`" in word:
            self.options.add(UNKNOWN_OPTION)
            return []
        if not os.path.isabs(word):
            return []  # relative to wherever the shell starts: not the user's to plant
        if _GLOB_CHARS & set(word):
            import glob  # noqa: PLC0415

            return sorted(glob.glob(word))[:_MAX_FILES]
        return [word]


#: variables that name a file or a directory of startup files
_STARTUP_VARIABLES = frozenset({"ZDOTDIR", "BASH_ENV", "ENV"})
#: words before a command that leave it the command
_PREFIXES = frozenset({"if", "then", "else", "elif", "do", "!", "{", "(", "time", "builtin",
                       "command", "while", "until", "&&", "||"})


def _commands(text: str) -> list[list[str]]:
    """The text as simple commands, each its words with quotes removed (a
    line that does not split, an unclosed quote, is one unknown word)."""
    import shlex  # noqa: PLC0415

    out: list[list[str]] = []
    for line in text.splitlines():
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|(){}")
            lexer.whitespace_split = True
            tokens = list(lexer)
        except ValueError:
            out.append(["$unknown"])
            continue
        current: list[str] = []
        for token in tokens:
            if token in (";", "&&", "||", "|", "&", "(", ")", "{", "}", ";;"):
                if current:
                    out.append(current)
                current = []
            else:
                current.append(token)
        if current:
            out.append(current)
    return out


def _turned_on(name: str, args: list[str]) -> set[str]:
    """The language options a `shopt`, `set`, `setopt` or `unsetopt` turns on."""
    out: set[str] = set()
    if any("$" in a or "`" in a for a in args):
        return {UNKNOWN_OPTION}
    if name == "shopt":
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        if "s" in flags:
            out |= {a for a in args if not a.startswith("-")} & (_LANGUAGE_OPTIONS | {
                "cdable_vars", "autocd"})
    elif name == "set":
        for i, arg in enumerate(args):
            if arg == "-o" and i + 1 < len(args):
                value = args[i + 1]
                out |= {value} & _LANGUAGE_OPTIONS | ({_zsh(value)} & _ZSH_OPTIONS)
            elif arg.startswith("-") and arg != "--":
                out |= {_SET_FLAGS[c] for c in arg[1:] if c in _SET_FLAGS}
    else:
        for arg in args:
            flat = _zsh(arg)
            if name == "unsetopt":
                flat = flat[2:] if flat.startswith("no") else ""
            elif flat.startswith("no") and flat[2:] in _ZSH_OPTIONS:
                continue
            if flat in _ZSH_OPTIONS:
                out.add(flat)
    return out


def _zsh(name: str) -> str:
    return name.lower().replace("_", "")


def startup_options_apply(home: str, got: Any) -> bool:
    """Do the startup files' options change this command's meaning? Only
    a pattern reads differently under them: a command with no `*`, `?` or
    `[` is read alike (`expand_aliases` and `posix` aside, which the files
    may name for any command)."""
    found = startup_options(home)
    if not found:
        return False
    if {"expand_aliases", "posix", "keyword", "allexport", "xpg_echo", "lastpipe",
            "physical", "chasedots", "chaselinks", "posixbuiltins", "magicequalsubst",
            "cdable_vars", "cdablevars", "autocd"} & set(found):
        # `cd HOME` with cdable_vars is `cd ~`: any command may mean another
        # place (from a review: `cd HOME && cat .ssh/id_rsa` was allowed)
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


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
