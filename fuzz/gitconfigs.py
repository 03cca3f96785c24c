"""A differential fuzzer of git's configuration: what shellgate says a
repository runs, against what git does with it.

Each case writes a configuration in one of the forms git's parser accepts
(a byte-order mark, CRLF, a header's case and spacing, a key on the
header's line, quoted and continued values, comments) — directly or
through includes of every form and depth, under true and false conditions
— or a decoy (commented, another section, a false condition), in a
repository of one of the layouts git understands (its git directory
elsewhere behind a `.git` file, a linked worktree and its common
directory, a worktree's own `config.worktree`, a submodule's git directory
under `.git/modules`). The real `git status` then runs in the repository;
whenever it ran the planted monitor, :func:`sandbox.repository_programs`
must have said so, and every git directory git used must be in the
sandbox's model of the layout (:func:`sandbox.repository_gitdirs`, what a
run protects).

:func:`missed_secret` does the same for credentials: a file holding one
entry git reads as a credential, spelled apart in the ways git joins
(quotes, escapes, continued lines, case, a byte-order mark, CRLF), or a
decoy; whenever git's own listing of the file holds a credential,
:func:`sandbox.file_secrets` must have found it.
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
from pathlib import Path

from sandbox import file_secrets, repository_gitdirs, repository_programs, resolve_gitdir

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat", "LC_ALL": "C"}


def _entry(rng: random.Random, command: str) -> str:
    """``fsmonitor = COMMAND`` in the core section, in one of git's forms."""
    header = rng.choice(["[core]", "[CORE]", "[ core ]", "[core]\t# c", "[Core] ; c"])
    key = rng.choice(["fsmonitor", "FsMonitor", "FSMONITOR"])
    value = rng.choice([command, f'"{command}"', command.replace(" ", " \\\n ", 1)])
    sep = rng.choice([" = ", "=", "\t=\t"])
    if rng.random() < 0.2:
        return f"{header} {key}{sep}{value}\n"
    return f"{header}\n{rng.choice(['', '  ', chr(9)])}{key}{sep}{value}\n"


def _decoy(rng: random.Random, command: str) -> str:
    return rng.choice([f"# [core] fsmonitor = {command}\n",
                       f"[notcore]\n\tfsmonitor = {command}\n",
                       f"[core]\n; fsmonitor = {command}\n"])


def _write(path: Path, text: str, rng: random.Random) -> None:
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n")
    data = text.encode()
    if rng.random() < 0.2:
        data = b"\xef\xbb\xbf" + data
    path.write_bytes(data)


def plant(config: Path, rng: random.Random, marker: Path) -> None:
    """Write one case into the configuration file ``config`` (includes
    beside it); its program touches ``marker``."""
    command = f"touch {marker}; :"
    body = _entry(rng, command) if rng.random() < 0.7 else _decoy(rng, command)
    depth = rng.choice([0, 0, 1, 2, 5, 9])
    target = config
    text = target.read_text()
    if depth == 0:
        _write(target, text + body, rng)
        return
    for i in range(depth):
        name = f"inc{i}.cfg"
        form = rng.choice([name, f"./{name}", str(config.parent / name)])
        condition = rng.choice(["[include]", '[includeIf "gitdir:**"]',
                                '[includeIf "gitdir:/nowhere/"]', '[includeIf "onbranch:*"]'])
        _write(target, text + f"{condition}\n\tpath = {form}\n", rng)
        target, text = config.parent / name, ""
    _write(target, body, rng)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, env=ENV, capture_output=True,
                   timeout=30)


#: the layouts git understands that a repository may come in: (where git
#: runs, the git directory whose configuration is planted)
LAYOUTS = ("plain", "gitfile", "worktree", "worktree config", "submodule")


def _layout(top: Path, kind: str, rng: random.Random) -> tuple[Path, Path]:
    """Make a repository of ``kind`` under ``top``."""
    repo = top / "r"
    _git(top, "init", "-q", str(repo))
    (repo / "a").write_text("a\n")
    if kind == "plain":
        return repo, repo / ".git"
    if kind == "gitfile":
        # the git directory elsewhere, named by a `.git` file in any of the
        # spellings git reads (relative, absolute, a trailing CR)
        # (inside the work tree too, where only its configuration decides)
        inside = rng.random() < 0.5
        store = repo / ".store" if inside else top / "store"
        store.mkdir()
        (repo / ".git").rename(store / "r.git")
        named = rng.choice([".store/r.git" if inside else "../store/r.git", str(store / "r.git")])
        (repo / ".git").write_bytes(f"gitdir: {named}{rng.choice(['', chr(13)])}\n".encode())
        return repo, store / "r.git"
    _git(repo, "-c", "user.name=f", "-c", "user.email=f@x", "commit", "-q", "--allow-empty",
         "-m", "i")
    if kind in ("worktree", "worktree config"):
        _git(repo, "worktree", "add", "-q", str(top / "w"))
        if kind == "worktree config":
            _git(repo, "config", "extensions.worktreeConfig", "true")
            gitdir = repo / ".git" / "worktrees" / "w"
            (gitdir / "config.worktree").write_text("")
            return top / "w", gitdir
        return top / "w", repo / ".git"
    source = top / "source"
    _git(top, "init", "-q", str(source))
    _git(source, "-c", "user.name=f", "-c", "user.email=f@x", "commit", "-q",
         "--allow-empty", "-m", "s")
    _git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source),
         "sub")
    (repo / "sub" / "changed").write_text("x\n")  # status looks into it
    return repo, repo / ".git" / "modules" / "sub"


def missed(seed: int) -> bytes | None:
    """One case: the configuration git ran a program from while shellgate
    named none, or a git directory git used that the sandbox's model of
    the layout leaves out (a description and the first bytes), or None."""
    rng = random.Random(seed)  # noqa: S311 - reproducible cases, no secret
    with tempfile.TemporaryDirectory(prefix="shellgate-git-") as tmp:
        kind = rng.choice(LAYOUTS)
        where, gitdir = _layout(Path(tmp), kind, rng)
        marker = Path(tmp) / "RAN"
        config = gitdir / ("config.worktree" if kind == "worktree config" else "config")
        plant(config, rng, marker)
        said = repository_programs(str(where))
        subprocess.run(["git", "status", "--short"], cwd=where, env=ENV, capture_output=True,
                       check=False, timeout=30)
        if marker.exists() and not said:
            return f"{kind}: ".encode() + config.read_bytes()[:300]
        unmodelled = _unmodelled(where)
        if unmodelled:
            return f"{kind}: the sandbox leaves out {unmodelled}".encode()
    return None


def _unmodelled(where: Path) -> list[str]:
    """The git directories git itself uses at ``where`` (its own and the
    common one) that the sandbox's model of the layout does not list for
    protection."""
    asked = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-dir",
                            "--git-common-dir"], cwd=where, env=ENV, capture_output=True,
                           text=True, check=False, timeout=30)
    if asked.returncode != 0:
        return []
    own = resolve_gitdir(str(where))
    modelled = {os.path.realpath(d) for d in repository_gitdirs(own)} if own else set()
    return [d for d in asked.stdout.split("\n") if d and os.path.realpath(d) not in modelled]


#: (section header, key, value) of entries git reads as credentials
_SECRETS = (("[http]", "proxy", "http://u:pw@proxy:1"),
            ('[http "https://h/"]', "extraHeader", "AUTHORIZATION: bearer t"),
            ('[url "https://tok@h/"]', "insteadOf", "gh:"),
            ("[credential]", "helper", "!f() { echo password=x; }; f"),
            ('[remote "o"]', "url", "https://u:p@h/r"),
            ("[sendemail]", "smtpPass", "pw"),
            ("[http]", "cookieFile", "c"))


def _apart(rng: random.Random, text: str) -> str:
    """``text`` spelled apart where git joins it again: an empty quoted
    string or a quoted run, and in values a continued line."""
    if len(text) < 2:
        return text
    cut = rng.randrange(1, len(text))
    return rng.choice([f'{text[:cut]}""{text[cut:]}', f'{text[:cut]}"{text[cut:]}"',
                       f"{text[:cut]}\\\n{text[cut:]}", text])


def _secret_text(rng: random.Random) -> str:
    header, key, value = rng.choice(_SECRETS)
    if rng.random() < 0.3 and '"' in header:
        # a subsection's backslash escapes any character
        inner = header.split('"')[1]
        cut = rng.randrange(len(inner))
        header = header.replace(inner, f"{inner[:cut]}\\{inner[cut:]}")
    key = "".join(c.upper() if rng.random() < 0.3 else c for c in key)
    if rng.random() < 0.3:
        return rng.choice([f"# {header} {key} = {value}\n", f"[other]\n\tname = {value[:2]}\n"])
    return f"{header}\n\t{key} = {_apart(rng, value)}\n"


def missed_secret(seed: int) -> bytes | None:
    """One case: a file git reads a credential from while shellgate found
    none (its first bytes), or None."""
    from sandbox.gitask import ask_file  # noqa: PLC0415 - git's own reading
    from sandbox.gitsecrets import holds_secret  # noqa: PLC0415

    rng = random.Random(seed)  # noqa: S311 - reproducible cases, no secret
    with tempfile.TemporaryDirectory(prefix="shellgate-gitsecret-") as tmp:
        path = Path(tmp) / "c.inc"
        _write(path, "".join(_secret_text(rng) for _ in range(rng.randint(1, 3))), rng)
        entries = ask_file(str(path))
        held = isinstance(entries, tuple) and any(holds_secret(e) for e in entries)
        if held and not file_secrets(str(path)):
            return path.read_bytes()[:300]
    return None
