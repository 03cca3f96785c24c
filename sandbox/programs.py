"""Where the sandbox's programs are, and the temporary directory, found
without importing shutil or tempfile.

shutil imports bz2 and lzma (its archive support) and tempfile imports
shutil, random and weakref: together about 7 ms of every cold `shellgate
run`, most of a run's own cost on top of bubblewrap's, to answer two
questions — which ``bwrap`` (or ``git``, ``python3``) is first on PATH, and
where the temporary directory is. Both answers are the standard library's:
:func:`which` follows ``shutil.which``'s rules on POSIX (a test holds the two
equal over the ways PATH is written), and :func:`temp_root` defers to
``tempfile.gettempdir`` whenever the usual answer is not plainly there.
"""

from __future__ import annotations

import os
import stat


def _runnable(candidate: str) -> bool:
    """An existing non-directory this user may execute (shutil.which's
    test: exists, access(F_OK | X_OK), not a directory)."""
    try:
        st = os.stat(candidate)
    except (OSError, ValueError):
        return False
    return not stat.S_ISDIR(st.st_mode) and os.access(candidate, os.F_OK | os.X_OK)


def _search_path() -> str:
    path = os.environ.get("PATH")
    if path is not None:
        return path
    try:
        return os.confstr("CS_PATH") or os.defpath
    except (AttributeError, ValueError):
        return os.defpath


def _path_directories() -> list[str]:
    """The directories of PATH, in order, each once (as shutil.which walks them)."""
    path = _search_path()
    return list(dict.fromkeys(path.split(os.pathsep))) if path else []


def which(name: str) -> str | None:
    """``shutil.which(name)``: ``name`` itself when it names a directory
    part, else the first directory of PATH (in order, each once) holding a
    runnable ``name``; None when there is none."""
    if os.path.dirname(name):
        return name if _runnable(name) else None
    return next((c for d in _path_directories()
                 if _runnable(c := os.path.join(d, name))), None)


def _system_trees() -> tuple[str, ...]:
    import profiles  # noqa: PLC0415 - the one list every part reads

    return tuple(profiles.read_toml("system-dirs.toml")["trees"])


def _in_system_tree(path: str, trees: tuple[str, ...]) -> bool:
    return any(path == t or path.startswith(t + "/") for t in trees)


def system_program(name: str) -> str | None:
    """The ``name`` shellgate starts itself (bubblewrap on the host; git,
    whose answers decide the guards): the first on PATH, as :func:`which`
    finds it, in a directory whose real path lies in a system tree
    (profiles/system-dirs.toml: /usr, /bin, /sbin ...), and returned by its
    own real path, which must lie in one too. No run can ever write there
    (the sandbox makes nothing at or below a system tree writable), so no
    command can have planted it.

    Attacks (from reviews): with an activated project virtualenv on PATH,
    one run wrote `.venv/bin/bwrap` and the next run started it on the
    host, as root; skipping only the run's own writable paths still took a
    bwrap planted by an earlier run in another writable root, or by this
    run for the post-run git check, or one reached through a `.venv`
    symlink swapped between the check and the start."""
    if os.path.dirname(name):
        return None
    trees = _system_trees()
    for directory in _path_directories():
        if not os.path.isabs(directory) or not _in_system_tree(os.path.realpath(directory),
                                                               trees):
            continue
        candidate = os.path.join(directory, name)
        real = os.path.realpath(candidate)
        if _runnable(real) and _in_system_tree(real, trees):
            return real
    return None


def temp_root() -> str:
    """``tempfile.gettempdir()``: TMPDIR, TEMP or TMP (the first set), else
    /tmp — when that directory is there and this user may create files in
    it; in any other case tempfile itself answers (it also tries /var/tmp,
    /usr/tmp and the working directory, by creating a file in each)."""
    for variable in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(variable)
        if value:
            candidate = os.path.abspath(value)
            break
    else:
        candidate = "/tmp"  # noqa: S108 - tempfile's own first default
    try:
        usable = (stat.S_ISDIR(os.stat(candidate).st_mode)
                  and os.access(candidate, os.W_OK | os.X_OK))
    except (OSError, ValueError):
        usable = False
    if usable:
        return candidate
    import tempfile  # noqa: PLC0415 - the unusual case: tempfile's own search

    return tempfile.gettempdir()
