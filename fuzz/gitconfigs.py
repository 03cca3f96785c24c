"""A differential fuzzer of git's configuration: what shellgate says a
repository runs, against what git does with it.

Each case writes a configuration in one of the forms git's parser accepts
(a byte-order mark, CRLF, a header's case and spacing, a key on the
header's line, quoted and continued values, comments) — directly or
through includes of every form and depth, under true and false conditions
— or a decoy (commented, another section, a false condition). The real
`git status` then runs in the repository; whenever it ran the planted
monitor, :func:`sandbox.repository_programs` must have said so.
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
from pathlib import Path

from sandbox import repository_programs

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


def plant(repo: Path, rng: random.Random, marker: Path) -> None:
    """Write one case into ``repo``'s configuration; its program touches
    ``marker``."""
    command = f"touch {marker}; :"
    body = _entry(rng, command) if rng.random() < 0.7 else _decoy(rng, command)
    depth = rng.choice([0, 0, 1, 2, 5, 9])
    target = repo / ".git" / "config"
    text = target.read_text()
    if depth == 0:
        _write(target, text + body, rng)
        return
    for i in range(depth):
        name = f"inc{i}.cfg"
        form = rng.choice([name, f"./{name}", str(repo / ".git" / name)])
        condition = rng.choice(["[include]", '[includeIf "gitdir:**"]',
                                '[includeIf "gitdir:/nowhere/"]', '[includeIf "onbranch:*"]'])
        _write(target, text + f"{condition}\n\tpath = {form}\n", rng)
        target, text = repo / ".git" / name, ""
    _write(target, body, rng)


def missed(seed: int) -> bytes | None:
    """One case: the configuration git ran a program from while shellgate
    named none (its first bytes), or None."""
    rng = random.Random(seed)  # noqa: S311 - reproducible cases, no secret
    with tempfile.TemporaryDirectory(prefix="shellgate-git-") as tmp:
        repo = Path(tmp) / "r"
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=ENV,
                       capture_output=True, timeout=30)
        (repo / "a").write_text("a\n")
        marker = Path(tmp) / "RAN"
        plant(repo, rng, marker)
        said = repository_programs(str(repo))
        subprocess.run(["git", "status", "--short"], cwd=repo, env=ENV, capture_output=True,
                       check=False, timeout=30)
        if marker.exists() and not said:
            return (repo / ".git" / "config").read_bytes()[:300]
    return None
