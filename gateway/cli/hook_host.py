"""What the host runs or obeys outside any project, for ``shellgate hook``.

Under the hook a command runs on the host, unsandboxed. The places the
host later runs or obeys by itself — the home entries of the host-run
table (shell startup files, ~/.local/bin, autostart and systemd user
units, ~/.gitconfig) and shellgate's own directories — are where a write
turns one approved call into code run at every login. Three questions:

* :func:`runs_on_the_host` — is a path one of those places (a write the
  analysis or a file tool names)?
* :func:`same_file_as_host_run` — is a file in the project another name
  of one (a hard link: writing it writes ~/.bashrc)?
* :func:`host_run_mention` — does a command that is not read-only name
  one of those places, or a directory above one, in a word the analysis
  does not take for a write (`sort -o ~/.bashrc`, `curl -o`, `uniq IN
  OUT`, `sed 'w …'`, an awk `>`, `find -fprint`, `tar -C ~`), or write
  git's configuration by its own meaning (`git config`)?
"""

from __future__ import annotations

import os
import stat
from typing import Any

__all__ = ["config_writer", "has_other_names", "host_run_mention", "host_run_places",
           "runs_on_the_host", "same_file_as_host_run", "write_candidates"]

def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def host_run_places(home: str) -> list[str]:
    """The places, each as its real path: the home entries of the host-run
    table and shellgate's own directories."""
    from sandbox import host_files, own_dirs  # noqa: PLC0415

    real_home = os.path.realpath(home)
    places = [f"{real_home}/{e.path}" for e in host_files() if e.scope == "home"]
    places += [os.path.realpath(d) for d in own_dirs(os.environ, home)]
    return list(dict.fromkeys(places))


def runs_on_the_host(where: Any, home: str) -> bool:
    """Is ``where`` (a resolved path) inside one of the places? From a
    review: Write of ~/.bashrc and of ~/.config/shellgate/settings.json got
    no decision."""
    places = host_run_places(home)
    return any(_inside(p, place) for p in (where.display, where.real) for place in places)


def same_file_as_host_run(real: str, home: str) -> str | None:
    """The place a file with more than one name is, when it is one: a hard
    link in the project to ~/.bashrc is written with it (from a review:
    Write of the project's `notes.sh`, a hard link to ~/.bashrc, changed
    the host's shell startup). Only the places that are files, and the
    files directly in the places that are directories, are compared."""
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    if st.st_nlink < 2:
        return None
    for place in host_run_places(home):
        for candidate in _files_at(place):
            try:
                other = os.stat(candidate)
            except (OSError, ValueError):
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                return candidate
    return None


def _files_at(place: str) -> list[str]:
    if not os.path.isdir(place):
        return [place]
    try:
        return [e.path for e in os.scandir(place) if e.is_file()]
    except OSError:
        return []


def host_run_mention(analysis: Any, home: str, cwd: str) -> str | None:
    """Why a person must see the command: a subcommand that is not
    read-only writes a configuration the host obeys by its meaning (`git
    config`, `npm config set`, `crontab`, `systemctl enable --user`), or
    names a place, or a directory holding one (`~`, `/home`), or another
    name (a hard link) of any file — through a path the analysis resolved,
    a word (`-o~/.bashrc`, `--output=…`, a program text such as `sed 'w
    /home/u/.bashrc'`) relative to the working directory or any directory
    the command changes to, or a glob's matches; or the analysis gave up
    and the text names one. Such a command gets no decision from the
    analysis of what it writes (the writer is not modelled), and an allow
    rule or a mode would let Claude Code run it unasked (from a review:
    `cd ~ && sort -o .bashrc x`, `cp -r alice /home/`, `sort -o
    ${HOME:-/x}/.bashrc`, a hard link `rc` written by `sort -o rc`)."""
    places = host_run_places(home)
    if _unanalyzed(analysis):
        said = _text_names(analysis.command, places, home)
        if said is not None:
            return said
    for sub, candidate in write_candidates(analysis, home, cwd):
        writer = config_writer(sub.argv)
        if writer is not None:
            return f"{os.path.basename(sub.argv[0])} writes {writer}"
        if candidate is None:
            continue
        hit = _place_of(candidate, places)
        if hit is not None:
            return (f"{os.path.basename(sub.argv[0])} names {hit}, which the host runs or "
                    "obeys outside any sandbox, and the command is no plain read; a person "
                    "decides")
        if has_other_names(candidate):
            return (f"{os.path.basename(sub.argv[0])} names {candidate}, a file with more than "
                    "one name (a hard link): what it writes there is written wherever the "
                    "other names are; a person decides")
    return None


def write_candidates(analysis: Any, home: str, cwd: str) -> list[tuple[Any, str | None]]:
    """(subcommand, path) for every path a subcommand that is not read-only
    may write: what the analysis resolved (any access: an unmodelled
    writer's output is a read or an unknown to it), a glob's matches, and
    every word that reads as a path relative to the working directory or a
    directory the command changes to. Each subcommand once with None."""
    bases = [cwd, *(s.cd for s in analysis.subcommands if s.cd and s.cd.startswith("/"))]
    out: list[tuple[Any, str | None]] = []
    for sub in analysis.subcommands:
        if sub.read_only or not sub.argv:
            continue
        out.append((sub, None))
        spelled = [p.spelled or p.path for p in sub.paths]
        spelled += [m for p in sub.paths if p.glob for m in _matches(p.spelled or p.path)]
        for word in _path_words(sub.argv):
            joined = [os.path.join(b, w) for w in _spellings(word, home) for b in bases]
            spelled += joined + [m for j in joined if _GLOB & set(j) for m in _matches(j)]
        out += [(sub, path) for path in dict.fromkeys(spelled) if path.startswith("/")]
    return out


#: (program, its first operand or option) that writes what the host obeys,
#: and what: read forms are told apart by :func:`config_writer`
_CONFIG_WRITERS = {
    "git": "git's configuration, whose programs (core.pager, core.fsmonitor, aliases, "
           "hooks) git runs on the host",
    "crontab": "the user's crontab, which cron runs",
    "systemctl": "the user's systemd units, which the user manager runs",
    "systemd-run": "a user unit or timer the user manager runs",
    "at": "a job atd runs later",
    "batch": "a job atd runs later",
    "npm": "npm's configuration or global packages (script-shell, bin links on PATH)",
    "pnpm": "pnpm's configuration or global packages",
    "yarn": "yarn's configuration or global packages",
    "pip": "pip's configuration or the user's packages (startup .pth files, bin on PATH)",
    "pip3": "pip's configuration or the user's packages (startup .pth files, bin on PATH)",
    "cargo": "programs in ~/.cargo/bin, on PATH",
    "go": "programs in ~/go/bin, on PATH",
    "uv": "tools in ~/.local/bin, on PATH",
    "pipx": "tools in ~/.local/bin, on PATH",
    "direnv": "direnv's allow list (the project's .envrc then runs in every shell)",
}
#: git's subcommands that write what git later obeys
_GIT_WRITES = frozenset({"config", "maintenance"})
#: git config's forms that only read
_GIT_CONFIG_READS = frozenset({"-l", "--list", "--get", "--get-all", "--get-regexp",
                               "--get-urlmatch", "--get-color", "--get-colorbool", "list",
                               "get", "--name-only", "--show-origin", "--show-scope"})
#: systemctl's verbs that only read
_SYSTEMCTL_READS = frozenset({"status", "show", "cat", "help", "is-active", "is-enabled",
                              "is-failed", "is-system-running", "list-units", "list-unit-files",
                              "list-timers", "list-sockets", "list-dependencies", "list-jobs"})
#: per package tool: the operands that write its configuration or install
#: globally (`npm config set`, `pip install --user`, `cargo install`)
_INSTALLS = {"npm": ({"config", "link"}, {"-g", "--global", "--location=global"}),
             "pnpm": ({"config", "link"}, {"-g", "--global"}),
             "yarn": ({"config", "link"}, {"global"}),
             "pip": ({"config"}, {"--user"}), "pip3": ({"config"}, {"--user"}),
             "cargo": ({"install"}, set()), "go": ({"install"}, set()),
             "uv": ({"tool"}, set()), "pipx": ({"install", "inject", "ensurepath"}, set()),
             "direnv": ({"allow", "permit", "grant"}, set())}


def config_writer(argv: tuple[str, ...]) -> str | None:
    """What ``argv`` writes that the host obeys by the command's meaning
    alone, with no path among its words; None for the read forms."""
    name = os.path.basename(argv[0])
    args = list(argv[1:])
    if name == "busybox" and args:
        name, args = args[0], args[1:]
    if name.startswith("git-"):
        name, args = "git", [name[4:], *args]
    if name == "git":
        return _git_writer(args)
    if name == "crontab":
        return None if "-l" in args else _CONFIG_WRITERS[name]
    if name == "systemctl":
        operands = [a for a in args if not a.startswith("-")]
        if "--user" in args and not (operands and operands[0] in _SYSTEMCTL_READS):
            return _CONFIG_WRITERS[name]
        return None
    if name in ("systemd-run", "at", "batch"):
        return _CONFIG_WRITERS[name]
    if name in ("python", "python3") and args[:2] == ["-m", "pip"]:
        name, args = "pip", args[2:]
    if name in _INSTALLS:
        verbs, flags = _INSTALLS[name]
        words = [a for a in args if not a.startswith("-")]
        if (words and words[0] in verbs) or flags & set(args):
            return _CONFIG_WRITERS[name]
    return None


def _git_writer(args: list[str]) -> str | None:
    sub, rest = _git_subcommand(args)
    aliases = [a for a in args if a.startswith("alias.")]
    if aliases or any(a.startswith(("--template", "init.templatedir", "init.templateDir"))
                      for a in args):
        # an alias can name `config`; a template directory fills .git/hooks
        return _CONFIG_WRITERS["git"]
    if sub == "config" and not (_GIT_CONFIG_READS & set(rest)):
        return _CONFIG_WRITERS["git"]
    if sub == "maintenance" and rest[:1] in (["start"], ["register"]):
        return "the user's crontab or timers and git's configuration"
    return None


#: git's global options that take the next word
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                         "--config-env", "--exec-path", "--super-prefix"})


def _git_subcommand(args: list[str]) -> tuple[str, list[str]]:
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg in _GIT_VALUED:
            skip = True
        elif not arg.startswith("-"):
            return arg, args[i + 1:]
    return "", []


#: options whose value is a message, never a path
_MESSAGE_OPTIONS = frozenset({"-m", "--message", "-F", "--file", "--subject", "--body",
                              "--title", "--description"})


def _path_words(argv: tuple[str, ...]) -> list[str]:
    """The words after the command's name that may name a path: all but a
    message (`git commit -m "docs: ~/.bashrc setup"`)."""
    out = []
    skip = False
    for word in argv[1:]:
        if skip:
            skip = False
            continue
        if word in _MESSAGE_OPTIONS:
            skip = True
            continue
        if word.partition("=")[0] in _MESSAGE_OPTIONS:
            continue
        out.append(word)
    return out


def _spellings(word: str, home: str) -> list[str]:
    """The paths a word may name: itself, what follows an `=` or a `~`
    inside it (`--output=~/.bashrc`, `-o~/.bashrc`), with `~` and `$HOME`
    expanded; every absolute path a program text holds (`w /u/.bashrc`)."""
    found = {word}
    if "=" in word:
        found.add(word.partition("=")[2])
    if "~" in word:
        found.add(word[word.index("~"):])
    found |= {w.replace("${HOME}", home).replace("$HOME", home) for w in found}
    found |= {home + w[1:] for w in found if w == "~" or w.startswith("~/")}
    found |= {piece for w in list(found) for piece in _absolute_pieces(w)}
    return [w for w in found if w and "\0" not in w and w[0] not in "-'\""]


#: what ends a path inside a program text
_PATH_END = frozenset(" \t\n'\"}{);,|&<>")
_GLOB = frozenset("*?[")


def _absolute_pieces(text: str) -> list[str]:
    """Each run of text from a `/` that follows a space, a quote or `>`, to
    the first character that ends a path in a program text."""
    out = []
    for i, c in enumerate(text):
        if c == "/" and i > 0 and text[i - 1] in " \t'\">":
            end = next((j for j in range(i, len(text)) if text[j] in _PATH_END), len(text))
            out.append(text[i:end])
    return out


def _matches(pattern: str) -> list[str]:
    import glob  # noqa: PLC0415

    return glob.glob(pattern)[:100]


def _place_of(path: str, places: list[str]) -> str | None:
    """The place ``path`` is in, or holds (it names a directory above one:
    `~`, `/home`, `/`), resolved as the kernel resolves it (`..` after a
    link climbs out of its target). A path through a process's own view
    (`/proc/self/cwd/..`: the command's directory, not ours) is taken for
    one."""
    if path.startswith("/proc/") and any(p in ("cwd", "root", "fd", "map_files")
                                         for p in path.split("/")[3:5]):
        return f"{path} (a directory seen through /proc)"
    from ..resolver import UNRESOLVED, kernel_path  # noqa: PLC0415

    real = kernel_path(path)
    if real == UNRESOLVED:
        return f"{path} (a path that cannot be resolved)"
    for place in places:
        if _inside(real, place) or _inside(place, real):
            return place
    return None


def has_other_names(path: str) -> bool:
    """Is ``path`` a regular file with more than one name (a hard link)?"""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def _unanalyzed(analysis: Any) -> bool:
    return bool(analysis.parse_reasons) or analysis.parse.value != "simple"


def _text_names(text: str, places: list[str], home: str) -> str | None:
    """For a command the analysis gave up on: does its text name a place,
    by any spelling of the home (`${HOME:-x}/.bashrc`, `~/.bashrc`), or go
    through a process's view of a directory (`/proc/self/cwd/..`)?"""
    real_home = os.path.realpath(home)
    for place in places:
        tail = os.path.relpath(place, real_home) if _inside(place, real_home) else None
        # a dotfile's name after any `/` (`${HOME:-x}/.bashrc`); a plain
        # name (`bin`, `go/bin`) only after a spelling of the home, not in
        # every `/usr/bin/…`
        spelled = ([f"/{tail}"] if tail.startswith(".") else
                   [f"{h}/{tail}" for h in ("~", "HOME", "}")]) if tail is not None else []
        if place in text or any(s in text for s in spelled):
            return (f"the command cannot be analyzed and names {place}, which the host runs or "
                    "obeys outside any sandbox; a person decides")
    if "/proc/" in text and ("/cwd" in text or "/root" in text):
        return ("the command cannot be analyzed and reaches a directory through /proc; a "
                "person decides")
    return None
