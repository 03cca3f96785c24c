"""The built-in sensitive paths: reading or writing one is denied.

The list is data, ``profiles/sensitive-paths.toml``, shared with the sandbox
(which hides the same paths). This module reads that file once, at import:
static data shipped with the package, the only file :mod:`analyzers` ever
opens, never per call.

Matching is lexical, on normalized paths; a symlink inside the workspace that
points at ``~/.ssh`` is invisible here, which is why the sandbox hides these
paths too.
"""

from __future__ import annotations

from profiles import read_toml
from regexes import fnmatchcase
from values import valueclass

from .memo import memo

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re


@valueclass
class SensitivePath:
    pattern: str
    why: str
    #: the sandbox hides it only outside the working directory
    outside_workspace_only: bool = False
    #: "deny": never; "ask": a person must approve, wherever it lies
    level: str = "deny"
    #: file names the entry does not cover (`.env.example`)
    exceptions: tuple[str, ...] = ()


def _load() -> tuple[SensitivePath, ...]:
    data = read_toml("sensitive-paths.toml")
    return tuple(
        SensitivePath(e["path"], e["why"], e.get("scope") == "outside-workspace",
                      e.get("level", "deny"), tuple(e.get("except", ())))
        for e in data["paths"]
    )


SENSITIVE_PATHS: tuple[SensitivePath, ...] = _load()


#: A `~/...` entry protects that path in every home directory, not only the
#: caller's: `cat /home/other/.ssh/id_rsa` is as much a key leak.
OTHER_HOMES = ("/root", "/home/*")


def _expand(pattern: str, home: str) -> list[str]:
    if pattern == "~" or pattern.startswith("~/"):
        homes = [home.rstrip("/") or "/", *OTHER_HOMES] if home != "~" else ["~", *OTHER_HOMES]
        return list(dict.fromkeys(h + pattern[1:] for h in homes))
    return [pattern]


def _component_rx(part: str) -> str:
    import re  # noqa: PLC0415 - at the first path judged, not at every start

    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)


def _pattern_rx(parts: tuple[str, ...]) -> str:
    rx = ""
    for i, part in enumerate(parts):
        if part == "**":
            rx += "(?:[^/]*/)*"
        else:
            rx += _component_rx(part) + ("/" if i < len(parts) - 1 else "")
    return rf"^{rx}(?:/.*)?$"


def _static_prefix(parts: tuple[str, ...]) -> str | None:
    """The pattern's leading literal components, joined with a final ``/``;
    None when it starts with a wildcard."""
    static: list[str] = []
    for part in parts:
        if part == "**" or any(c in part for c in "*?["):
            break
        static.append(part)
    return None if static in ([], [""]) else "/".join(static) + "/"


@valueclass
class _Expanded:
    """One sensitive entry spelled for one home directory; ``fixed``: its
    components before the first ``**`` (each must match the path's
    component at the same place), ``None`` where one has a wildcard."""
    entry: SensitivePath
    parts: tuple[str, ...]
    static: str | None
    fixed: tuple[str | None, ...]


def _literals(parts: list[str] | tuple[str, ...]) -> tuple[str | None, ...]:
    """``parts`` up to the first ``**``, a component with a wildcard as None."""
    out: list[str | None] = []
    for part in parts:
        if part == "**":
            break
        out.append(part if _WILD.isdisjoint(part) else None)
    return tuple(out)


_WILD = frozenset("*?[")


class _Table:
    """The expanded entries for one home, and a component trie over them.

    Why not one regex per entry, compiled up front: that was 268 regexes and
    their alternation, ~50 ms of every cold `shellgate check 'cat x'` and
    every hook call, for an answer that is nearly always "none". The trie
    gives, from a path's components, the entries it *could* match (a
    superset: a wildcard component is taken to match any component); only
    those entries' regexes are compiled and asked, so the verdict is still
    the regex's, exactly as before."""

    __slots__ = ("_any_first", "_by_first", "_rx", "_start", "_trie", "entries")

    def __init__(self, home: str) -> None:
        self.entries = tuple(
            _Expanded(entry, parts, _static_prefix(parts), _literals(parts))
            for entry in SENSITIVE_PATHS
            for parts in (tuple(p.split("/")) for p in _expand(entry.pattern, home))
        )
        self._trie: _Node = _Node()
        for index, expanded in enumerate(self.entries):
            node = self._trie
            for part in expanded.parts:
                node = node.child(part)
            node.ends.append(index)
        self._trie.seal()
        self._start = self._trie.reach
        #: entries by their second fixed component (see :meth:`sharing`)
        self._by_first: dict[str, list[int]] = {}
        self._any_first: list[int] = []
        for index, expanded in enumerate(self.entries):
            first = expanded.fixed[1] if len(expanded.fixed) > 1 else None
            if first is None:
                self._any_first.append(index)
            else:
                self._by_first.setdefault(first, []).append(index)
        #: each entry's regex, compiled when a path first needs it (the
        #: sources alone were most of the table's build, ~20 ms)
        self._rx: dict[int, re.Pattern[str]] = {}

    def candidates(self, path: str) -> list[int]:
        """Indices of the entries ``path`` may match, in list order."""
        found: set[int] = set()
        states = self._start
        for component in path.split("/"):
            for node in states:
                found.update(node.ends)  # anything below an entry is in it
            following: dict[int, _Node] = {}
            for node in states:
                for step in node.step(component):
                    for reached in step.reach:
                        following[id(reached)] = reached
            states = tuple(following.values())
            if not states:
                break
        else:
            for node in states:
                found.update(node.ends)
        return sorted(found)

    def sharing(self, literal: tuple[str | None, ...], also: set[int]) -> list[int]:
        """Indices, in list order, of ``also`` and of the entries whose
        second component (the first below ``/``) may be ``literal``'s: an
        entry whose differs, both without a wildcard, cannot overlap it."""
        first = literal[1] if len(literal) > 1 else None
        if first is None:
            return list(range(len(self.entries)))
        return sorted({*also, *self._by_first.get(first, ()), *self._any_first})

    def matches(self, index: int, path: str) -> bool:
        rx = self._rx.get(index)
        if rx is None:
            import re  # noqa: PLC0415 - at the first path judged, not at every start

            source = _pattern_rx(self.entries[index].parts)
            rx = self._rx[index] = re.compile(source, re.DOTALL)
        return rx.match(path) is not None


class _Node:
    __slots__ = ("ends", "globstar", "literal", "loops", "reach", "wild")

    def __init__(self, *, loops: bool = False) -> None:
        self.loops = loops  # reached by `**`, which may take any more components
        self.literal: dict[str, _Node] = {}
        self.wild: _Node | None = None  # a component with `*` or `?`
        self.globstar: _Node | None = None  # `**`: any number of components
        self.ends: list[int] = []
        #: this node and what its `**` reach by taking no component
        #: (:meth:`closure` of the node alone), set by :meth:`seal`
        self.reach: tuple[_Node, ...] = ()

    def seal(self) -> None:
        """Fill :attr:`reach` here and below, once the trie is built."""
        todo: list[_Node] = [self]
        while todo:
            node = todo.pop()
            node.reach = tuple(_Node.closure([node]))
            todo.extend(node.literal.values())
            todo.extend(n for n in (node.wild, node.globstar) if n is not None)

    def child(self, part: str) -> _Node:
        if part == "**":
            self.globstar = self.globstar or _Node(loops=True)
            return self.globstar
        if "*" in part or "?" in part:
            self.wild = self.wild or _Node()
            return self.wild
        return self.literal.setdefault(part, _Node())

    def step(self, component: str) -> list[_Node]:
        out = [n for n in (self.literal.get(component), self.wild) if n is not None]
        if self.globstar is not None:
            out.append(self.globstar)  # `**` takes this component
        if self.loops:
            out.append(self)  # ... and the next, as often as it likes
        return out

    @staticmethod
    def closure(nodes: list[_Node]) -> list[_Node]:
        """``nodes`` plus what their ``**`` reach by taking no component."""
        out: list[_Node] = []
        todo = list(nodes)
        while todo:
            node = todo.pop()
            if any(node is n for n in out):
                continue
            out.append(node)
            if node.globstar is not None:
                todo.append(node.globstar)
        return out


@memo(16)
def _table(home: str) -> _Table:
    return _Table(home)


@memo(8192)
def match_sensitive(path: str, home: str, *, glob: bool = False) -> SensitivePath | None:
    """The sensitive entry ``path`` falls under, if any.

    ``path`` is normalized (absolute, or ``~/...`` when home is unknown).
    With ``glob`` the path is a pattern (``~/.s*/id_rsa``): it matches when
    any path it could expand to is sensitive.
    """
    table = _table(home)
    name = path.rsplit("/", 1)[-1]
    if not glob:
        for index in table.candidates(path):
            entry = table.entries[index].entry
            if entry.exceptions and name in entry.exceptions:
                continue
            if table.matches(index, path):
                return entry
        return None
    candidates = set(table.candidates(path))
    split = path.split("/")
    literal = _literals([p if _WILD.isdisjoint(p) else "*" for p in split])
    for index in table.sharing(literal, candidates):
        expanded = table.entries[index]
        entry = expanded.entry
        if entry.exceptions and name in entry.exceptions:
            continue
        if index in candidates and table.matches(index, path):
            return entry
        # before its first `**` an entry's components pair with the path's
        # one to one, and two with no wildcard in either overlap only when
        # equal: the search below gives the same answer, at ~5 us an entry
        # (2 ms a glob)
        pairs = zip(literal, expanded.fixed, strict=False)  # to the shorter one's end
        if any(a != b for a, b in pairs if a is not None and b is not None):
            continue
        if _glob_overlaps(split, expanded.parts):
            return entry
    return None


@memo(4096)
def sensitive_anywhere(raw: str, home: str) -> SensitivePath | None:
    """The sensitive entry a relative path may be in *some* directory: where
    the working directory is unknown (`cd "$X"`, or too many candidates),
    `cat .env` may read any dotenv file and `cat .ssh/id_rsa` a key (from a
    review: six `cd`s made `.env` an ordinary path outside the project, and
    the sandbox's auto-allow read it). The path's components are laid over
    each stretch of an entry's pattern; each must match a component with
    something literal in it (a bare `*` in ``/etc/wireguard/*`` would make
    every name sensitive); running past the pattern's end is "below" it."""
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts or raw.startswith(("/", "~")):
        return None
    for expanded in _table(home).entries:
        entry, pattern = expanded.entry, expanded.parts
        if entry.exceptions and parts[-1] in entry.exceptions:
            continue
        if any(_laid_over(parts, pattern, at) for at in range(1, len(pattern))):
            return entry
    return None


def _laid_over(parts: list[str], pattern: tuple[str, ...], at: int) -> bool:
    for j, part in enumerate(parts):
        if at + j >= len(pattern):
            return True  # below a sensitive path
        pat = pattern[at + j]
        if pat == "**" or not pat.strip("*?"):
            return False  # a wildcard alone says nothing of this name
        if not fnmatchcase(part, pat):
            return False
    return True


def _glob_overlaps(path: list[str] | tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Could some concrete path match both the glob ``path`` and the
    sensitive ``pattern`` (or lie below it)? Component by component; a
    component pair overlaps when either matches the other. A leading ``.``
    must be matched literally by the glob, as bash does without dotglob.

    A search over (path component, pattern component) pairs, each visited
    once: the recursive form overflowed the stack on `ls */*/…/x` (1,500
    components, from the fuzzer) and branched twice at every ``**``."""
    todo, seen = [(0, 0)], set()
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if j == len(pattern):
            return True  # everything below a sensitive path is sensitive
        if i == len(path):
            continue
        if pattern[j] == "**":
            todo += [(i + 1, j), (i, j + 1)]
        elif _component_overlap(path[i], pattern[j]):
            todo.append((i + 1, j + 1))
    return False


def _component_overlap(glob: str, pat: str) -> bool:
    if glob == pat:
        return True
    if pat.startswith(".") and not glob.startswith("."):
        return False  # without dotglob, `*` never matches a leading `.`
    return (
        fnmatchcase(pat, glob)
        or fnmatchcase(glob, pat)
        or (any(c in glob for c in "*?[") and any(c in pat for c in "*?["))
    )


def sensitive_below(root: str, home: str) -> list[tuple[str, SensitivePath]]:
    """The sensitive entries that lie strictly below ``root``, as patterns
    (``/root/.ssh``, ``/proc/*/environ``): a command reading every file below
    ``root`` reads them (from a review: `grep -r KEY .` run in the home
    printed ``.ssh/id_rsa``, which `cat` is denied). Entries starting with
    ``**`` (the dotenv ones) are left to the caller's search."""
    return list(_sensitive_below(root, home))


@memo(1024)
def _sensitive_below(root: str, home: str) -> tuple[tuple[str, SensitivePath], ...]:
    prefix = root.rstrip("/") + "/"
    out = []
    for expanded in _table(home).entries:
        if expanded.static is None or not expanded.static.startswith(prefix):
            continue
        pattern = "/".join(expanded.parts)
        if pattern.startswith(prefix):
            out.append((pattern, expanded.entry))
    return tuple(out)
