"""What a project virtualenv's interpreter runs by itself, watched across a run.

Attacks (a red-team review, then issue 37): `.venv/bin/python` — the user's
next `pytest`, the interpreter an IDE starts on its own — runs, before any
of the user's code, the ``import`` lines of every ``.pth`` file in its
site-packages, the modules those lines name, and ``sitecustomize``; its
``pyvenv.cfg`` says which interpreter it is; ``bin/`` holds the scripts the
user runs by name and the ``activate`` script the shell sources. Virtualenvs
are ignored by git, so `git status` shows none of it. Seen missed before:
code appended to the module a ``.pth`` imports, and a ``.pth`` rewritten in
place at the same size with its mtime put back.

Each of those is keyed per file: the small files that decide what runs
(``.pth``, the ``.py`` modules they import, ``sitecustomize.py``,
``pyvenv.cfg``) by their content, the rest by a key the command cannot put
back (:mod:`sandbox.statkeys`). The rest of site-packages is watched by the
directory's own change time: a package installed or removed adds or removes
top-level entries there, which are then named. Everything is reported,
nothing undone: `pip install` in the sandbox is legitimate.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from itertools import pairwise

from values import field, valueclass

from .gitconfig import read_regular
from .hashing import hex_digest
from .statkeys import MAX_DEPTH, MAX_ENTRIES, Key, stat_key, tree_keys, unreadable_key

#: a report path ending so watches the virtualenv around a site-packages
PTH = "/*.pth"
#: files larger than this are keyed by their stat, not read
_MAX_READ = 1 << 20
#: modules every start looks for on the path (a package of the name too)
_CUSTOMIZE = frozenset({"sitecustomize", "usercustomize"})
#: modules a `.pth` line imports by call (`__import__("x")`, `import_module("x")`)
_CALLED = re.compile(r"(?:__import__|import_module)\(\s*['\"]([\w.]+)")


@valueclass
class VenvSnapshot:
    """The state of one site-packages and its virtualenv: ``site_key`` the
    directory's own (inode, times), ``names`` its top-level entries,
    ``startup`` the key of each watched file by a label relative to the
    virtualenv, ``bounded`` the trees whose bound was hit."""

    present: bool
    site_key: Key = ()
    names: frozenset[str] = frozenset()
    #: the top-level entries of site-packages keyed in ``startup``
    watched: frozenset[str] = frozenset()
    startup: dict[str, Key | str] = field(default_factory=dict)
    bounded: tuple[str, ...] = ()


def venv_snapshot(site: str, previous: VenvSnapshot | None = None) -> VenvSnapshot:
    """The state of ``site`` (a ``lib/python3.X/site-packages``) and its
    virtualenv. With ``previous`` and site-packages unchanged by its change
    time, its listing is not read again: the same entries are re-keyed."""
    try:
        site_st = os.stat(site)
    except OSError:
        return VenvSnapshot(False)
    venv = os.path.dirname(os.path.dirname(os.path.dirname(site)))
    rel_site = os.path.relpath(site, venv)
    # unlike statkeys.stat_key, the directory's times: an entry added to or
    # removed from site-packages changes them, and nothing can set them back
    site_key = (site_st.st_ino, site_st.st_mtime_ns, site_st.st_ctime_ns)
    read: dict[str, bytes | None] = {}
    if previous is not None and previous.present and previous.site_key == site_key:
        names, watched = previous.names, previous.watched
    else:
        try:
            names = frozenset(os.listdir(site))
        except OSError:
            return VenvSnapshot(False)
        watched = _startup_names(site, names, read)
    keys: dict[str, Key | str] = {}
    bounded: list[str] = []
    for name in watched:
        _key_entry(os.path.join(site, name), f"{rel_site}/{name}", keys, bounded,
                   read=read if name.endswith((".pth", ".py")) else None)
    _key_path_dirs(site, watched, keys, bounded, read)
    # `__pycache__/NAME.cpython-3X.pyc` runs instead of NAME.py when its
    # header matches the source's size and mtime, which the command sets
    stems = {n.split(".", 1)[0] for n in watched}
    with contextlib.suppress(OSError), os.scandir(os.path.join(site, "__pycache__")) as cache:
        for entry in cache:
            if entry.name.split(".", 1)[0] in stems:
                _key_entry(entry.path, f"{rel_site}/__pycache__/{entry.name}", keys, bounded)
    # the virtualenv's own top: `pyvenv.cfg` names the interpreter, a
    # `lib64` made a real directory is a second site-packages on some systems
    with contextlib.suppress(OSError), os.scandir(venv) as top:
        for entry in top:
            if entry.name != "bin":
                _key_entry(entry.path, entry.name, keys, bounded, depth=0,
                           read=read if entry.name == "pyvenv.cfg" else None)
    _key_entry(os.path.join(venv, "bin"), "bin", keys, bounded)
    return VenvSnapshot(True, site_key, names, watched, keys, tuple(bounded))


#: directories `.pth` path lines add that are looked into, at most
_MAX_PATH_DIRS = 32


def _key_path_dirs(site: str, watched: frozenset[str], keys: dict[str, Key | str],
                   bounded: list[str], read: dict[str, bytes | None]) -> None:
    """Attack (a review): a `.pth` path line — every editable install has
    one — puts a directory on the path, often the project's own `src/`;
    a `sitecustomize.py` written there ran at the next start unreported.
    In each such directory the startup modules and those the `.pth` import
    lines name are keyed (labelled by their absolute path)."""
    stems = set(_CUSTOMIZE)
    folders: list[str] = []
    for name in sorted(n for n in watched if n.endswith(".pth")):
        data = (_read_once(os.path.join(site, name), read) or b"").decode("utf-8", "replace")
        stems |= _imported(data.encode())
        for raw in data.splitlines():
            line = raw.strip()
            if line and not raw.startswith(("#", "import ", "import\t")):
                folder = os.path.normpath(os.path.join(site, line))
                if folder != site and os.path.isdir(folder):
                    folders.append(folder)
    for folder in list(dict.fromkeys(folders))[:_MAX_PATH_DIRS]:
        with contextlib.suppress(OSError), os.scandir(folder) as listing:
            for entry in listing:
                if entry.name.split(".", 1)[0] in stems:
                    _key_entry(entry.path, entry.path, keys, bounded,
                               read=read if entry.name.endswith(".py") else None)
    if len(set(folders)) > _MAX_PATH_DIRS:
        bounded.append(f"{site} (the directories its .pth files add)")


def _startup_names(site: str, names: frozenset[str], read: dict[str, bytes | None]
                   ) -> frozenset[str]:
    """The top-level entries of ``site`` an interpreter start runs: each
    ``.pth``, and the modules, packages and extensions named by their
    ``import`` lines or ``sitecustomize``/``usercustomize``."""
    pth = {n for n in names if n.endswith(".pth")}
    stems = set(_CUSTOMIZE)
    for name in pth:
        stems |= _imported(_read_once(os.path.join(site, name), read) or b"")
    return frozenset(pth | {n for n in names if n.split(".", 1)[0] in stems})


def _imported(data: bytes) -> set[str]:
    """Top-level names of the modules a `.pth` file's import lines import:
    `site` runs a line whole when it starts with "import " (or a tab), so
    every statement of it counts (`import os; import evil`, `from x import
    y`, `__import__("z")`). Names hidden otherwise (`exec` of a string) are
    not found, but the `.pth` holding them is keyed by its content."""
    found: set[str] = set()
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.startswith(("import ", "import\t")):
            continue
        found.update(m.split(".", 1)[0] for m in _CALLED.findall(line))
        for statement in line.split(";"):
            words = statement.split("#", 1)[0].replace(",", " , ").split()
            if words[:1] == ["from"] and len(words) > 1:
                found.add(words[1].split(".", 1)[0])
            elif words[:1] == ["import"]:
                # `import a.b as c, d`: the first word after `import` and each comma
                found.update(w.split(".", 1)[0] for prev, w in pairwise(words)
                             if prev in ("import", ","))
    return found


def _key_entry(path: str, label: str, keys: dict[str, Key | str], bounded: list[str], *,
               read: dict[str, bytes | None] | None = None, depth: int = -1) -> None:
    """Key ``path`` under ``label``: a directory tree entry by entry
    (bounded; only itself at ``depth`` 0), a small file by its content when
    ``read`` is given (the cache of what was read), anything else by its
    stat."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    keys[label] = stat_key(st)
    if stat.S_ISDIR(st.st_mode) and depth != 0:
        try:
            tree, hit = tree_keys(path)
        except OSError:
            keys[label] = unreadable_key(path)
            return
        keys.update((f"{label}/{rel}", key) for rel, key in tree.items())
        if hit:
            bounded.append(path)
    elif read is not None:
        keys[label] = _content_key(path, st, read)


def _content_key(path: str, st: os.stat_result, read: dict[str, bytes | None]) -> Key | str:
    """The digest of a small regular file (a link followed, as Python
    follows it), else its stat key. A link is keyed as itself too: from a
    review, a `.pth` swapped for a link to an identical file elsewhere
    passed unseen, and that file was then rewritten by a run that does not
    watch this virtualenv."""
    if stat.S_ISLNK(st.st_mode):
        link = stat_key(st)
        try:
            target = os.stat(path)
        except OSError:
            return link
        return f"{link}->{_content_key(path, target, read)}"
    if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_READ:
        return stat_key(st)
    data = _read_once(path, read)
    return hex_digest(data) if data is not None else stat_key(st)


def _read_once(path: str, read: dict[str, bytes | None]) -> bytes | None:
    if path not in read:
        read[path] = _read(path)
    return read[path]


def _read(path: str) -> bytes | None:
    # without blocking: a FIFO planted under a startup name must not hang the check
    data = read_regular(path, _MAX_READ)
    return data if isinstance(data, bytes) else None


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def venv_reports(site: str, before: VenvSnapshot, now: VenvSnapshot) -> tuple[list[str],
                                                                               list[str]]:
    """Reports and problems (a bound hit) for one site-packages."""
    reports: list[str] = []
    if not now.present:
        if before.present:
            reports.append(f"{site} was removed during the run: review what replaces it")
        return reports, []
    venv = os.path.dirname(os.path.dirname(os.path.dirname(site)))
    rel_site = os.path.relpath(site, venv) + "/"
    changed = sorted(k for k in before.startup.keys() | now.startup.keys()
                     if before.startup.get(k) != now.startup.get(k))
    in_site = [n[len(rel_site):] for n in changed if n.startswith(rel_site)]
    in_venv = [n for n in changed if not n.startswith(rel_site)]
    if in_site:
        reports.append(
            f"Python startup files were added or changed in {site} during the run: "
            f"{_shown(in_site)}; every python of that environment runs them at start: "
            f"review them")
    if in_venv:
        reports.append(
            f"Python startup files were added or changed in {venv} during the run: "
            f"{_shown(in_venv)}; its interpreter, its scripts and its activate script run "
            f"them: review them")
    if before.site_key != now.site_key:
        shown_site = {n.split("/", 1)[0] for n in in_site}
        added = sorted(now.names - before.names - shown_site)
        removed = sorted(before.names - now.names - shown_site)
        for names, verb in ((added, "added to"), (removed, "removed from")):
            if names:
                reports.append(
                    f"entries were {verb} {site} during the run (a package installed or "
                    f"removed?): {_shown(names)}; not undone: review them")
    problems = [f"{path} holds more than {MAX_ENTRIES} entries or {MAX_DEPTH} levels: only "
                f"those within were compared after the run, changes past them go unseen"
                for path in dict.fromkeys((*before.bounded, *now.bounded))]
    return reports, problems
