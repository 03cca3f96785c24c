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
from typing import Any

__all__ = ["host_run_mention", "host_run_places", "runs_on_the_host", "same_file_as_host_run"]

#: commands that write a configuration the host obeys by their meaning
#: alone, with no path in their words: (program, first operand) -> what
_CONFIG_WRITERS = {
    ("git", "config"): "git's configuration, whose programs (core.pager, core.fsmonitor, "
                       "aliases) git runs on the host",
    ("crontab", ""): "the user's crontab, which cron runs",
    ("systemctl", "--user"): "the user's systemd units, which the user manager runs",
}


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
    read-only names a place, or a directory holding one (`~`, `~/.config`),
    in any of its words — as a path, after an option (`-o~/.bashrc`,
    `--output=…`) or inside a program text (`sed 'w /home/u/.bashrc'`) —
    or writes git's configuration, the crontab or user units by its
    meaning. Such a command gets no decision from the analysis of what it
    writes (the writer is not modelled), and an allow rule or a mode would
    let Claude Code run it unasked."""
    places = host_run_places(home)
    real_home = os.path.realpath(home)
    for sub in analysis.subcommands:
        if sub.read_only or not sub.argv:
            continue
        writer = _config_writer(sub.argv)
        if writer is not None:
            return f"{' '.join(sub.argv[:2])} writes {writer}"
        base = sub.cd if sub.cd is not None and sub.cd.startswith("/") else cwd
        for word in sub.argv[1:]:
            hit = _named_place(word, places, home, real_home, base)
            if hit is not None:
                return (f"{sub.argv[0]} names {hit}, which the host runs or obeys outside any "
                        "sandbox, and the command is no plain read; a person decides")
    return None


#: git's global options that take the next word
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                         "--config-env", "--exec-path", "--super-prefix"})


def _git_subcommand(args: tuple[str, ...]) -> str:
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _GIT_VALUED:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return ""


def _config_writer(argv: tuple[str, ...]) -> str | None:
    name = os.path.basename(argv[0])
    first = next((a for a in argv[1:] if not a.startswith("-") or a == "--user"), "")
    if name == "git" and _git_subcommand(argv[1:]) == "config":
        return _CONFIG_WRITERS[("git", "config")]
    if name == "crontab" and not {"-l"} & set(argv[1:]):
        return _CONFIG_WRITERS[("crontab", "")]
    if name == "systemctl" and first == "--user":
        return _CONFIG_WRITERS[("systemctl", "--user")]
    return None


def _named_place(word: str, places: list[str], home: str, real_home: str,
                 base: str) -> str | None:
    """The place (or the directory above one) ``word`` names or holds."""
    spellings = {word}
    for marker in ("=", "~"):
        if marker in word:
            spellings.add(word[word.index(marker) + (1 if marker == "=" else 0):])
    spellings |= {s.replace("$HOME", home).replace("${HOME}", home) for s in spellings}
    spellings |= {home + s[1:] for s in spellings if s == "~" or s.startswith("~/")}
    for text in spellings:
        if not text or "\0" in text:
            continue
        candidates = [text]
        if not text.startswith("/") and text[0] not in "-'\"":
            candidates.append(os.path.join(base, text))
        for candidate in candidates:
            if not candidate.startswith("/"):
                continue
            real = os.path.realpath(os.path.normpath(candidate))
            for place in places:
                if _inside(real, place) or (_inside(place, real) and real != "/"
                                            and _inside(real, real_home)):
                    return place
    # a place's path inside a program text (`sed 'w /home/u/.bashrc' f`)
    for place in places:
        rel = os.path.relpath(place, real_home) if _inside(place, real_home) else None
        if place in word or (rel is not None and (f"~/{rel}" in word or f"$HOME/{rel}" in word)):
            return place
    return None
