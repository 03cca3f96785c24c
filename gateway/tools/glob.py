"""Glob: the files under a directory whose paths match a glob pattern,
newest first.

It walks in this process, not in the sandbox, so it sees exactly what the
sandbox's filesystem plan lets a sandboxed ``ls``/``cat`` see and no more:
every directory is checked with the plan before the walk descends into it
(a hidden ``~/.ssh`` is never listed), every candidate file goes through
:func:`paths.read_right` (the plan, the process views, the sensitive list),
and symbolic links to directories are never followed (a link in the
workspace to ``/`` would otherwise walk the machine)."""

from __future__ import annotations

import asyncio
import fnmatch
import itertools
import os
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from values import field, valueclass

from ..context import ToolContext
from ..decisions import VALID, Decision, PermissionResult, Validation, invalid
from ..messages import ProgressCallback, ToolResult
from ..pathnames import inside
from ..resolver import real_path
from . import paths
from .base import ReadOnlyTool, SearchOrRead, Subject, build_tool

if TYPE_CHECKING:
    from sandbox import FsPlan

#: at most this many paths are returned (newest first)
MAX_RESULTS = 100
#: a walk looks at this many directory entries at most …
MAX_ENTRIES = 200_000
#: … for this long at most; what it found so far is returned with a note
BUDGET_S = 10.0
#: brace expansion is bounded: `{a,b}{c,d}…` doubles with every group
MAX_ALTERNATIVES = 256
#: Version-control directories: entered only when the pattern names them
#: literally (`.git/*`); `**/*` would otherwise drown in object files.
#: Grep excludes the same names.
VCS_DIRS = (".git", ".hg", ".svn", ".bzr", ".jj", ".sl")


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(min_length=1, max_length=4096, description=(
        'The glob pattern to match files against, relative to the path (e.g. "**/*.py", '
        '"src/**/*.{ts,tsx}")'))
    path: str | None = Field(default=None, description=(
        "The directory to search in (absolute, or relative to the working directory). "
        "Omit it to search the working directory."))


# -- the pattern ------------------------------------------------------------------

#: a compiled path component, or "**" (any number of components)
_Part: TypeAlias = "re.Pattern[str] | Literal['**']"
#: (alternative, index of the next component to match)
_State: TypeAlias = tuple[int, int]


def expand_braces(pattern: str) -> list[str]:
    """``*.{ts,tsx}`` → ``*.ts``, ``*.tsx`` (nested groups too). A brace
    without a matching close or without a comma is literal."""
    out: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        group = _first_group(current)
        if group is None:
            out.append(current)
        else:
            start, end, choices = group
            todo.extend(current[:start] + c + current[end + 1:] for c in reversed(choices))
        if len(out) + len(todo) > MAX_ALTERNATIVES:
            raise ValueError(f"the pattern expands to more than {MAX_ALTERNATIVES} alternatives")
    return out


def _first_group(text: str) -> tuple[int, int, list[str]] | None:
    """The first ``{…,…}`` group: its span and its top-level choices. One
    pass with a stack (a pattern of 4,000 unclosed braces costs no more)."""
    opened: list[tuple[int, list[int]]] = []
    groups: list[tuple[int, int, list[int]]] = []
    for index, char in enumerate(text):
        if char == "{":
            opened.append((index, []))
        elif char == "," and opened:
            opened[-1][1].append(index)
        elif char == "}" and opened:
            start, commas = opened.pop()
            if commas:
                groups.append((start, index, commas))
    if not groups:
        return None
    start, end, commas = min(groups)
    pairs = itertools.pairwise([start, *commas, end])
    return start, end, [text[a + 1:b] for a, b in pairs]


class Matcher:
    """A glob pattern as a small automaton over path components, so that a
    walk can tell at each directory whether anything below it can match
    (``src/**/*.ts`` never enters ``node_modules``). ``**`` is zero or more
    components; ``*``, ``?`` and ``[…]`` stay within one and match a
    leading dot (dotfiles are listed)."""

    def __init__(self, pattern: str) -> None:
        self.literals = [tuple(c for c in alt.split("/") if c not in ("", "."))
                         for alt in expand_braces(pattern)]
        self.alternatives: list[tuple[_Part, ...]] = [
            tuple(_part(c) for c in alt) for alt in self.literals]

    def start(self) -> frozenset[_State]:
        return self._closure({(i, 0) for i in range(len(self.alternatives))})

    def step(self, states: frozenset[_State], name: str, *, literal_only: bool = False
             ) -> frozenset[_State]:
        """The states after one more component, ``name``. ``literal_only``:
        only a component spelled exactly ``name`` may consume it."""
        out: set[_State] = set()
        for alt, index in states:
            parts = self.alternatives[alt]
            if index == len(parts):
                continue
            part = parts[index]
            if literal_only:
                if self.literals[alt][index] == name:
                    out.add((alt, index + 1))
            elif isinstance(part, str):  # "**" consumes any component and stays
                out.add((alt, index))
            elif part.match(name):
                out.add((alt, index + 1))
        return self._closure(out)

    def accepts(self, states: frozenset[_State]) -> bool:
        return any(index == len(self.alternatives[alt]) for alt, index in states)

    def alive(self, states: frozenset[_State]) -> bool:
        """Can a longer path still match (is a directory worth entering)?"""
        return any(index < len(self.alternatives[alt]) for alt, index in states)

    def _closure(self, states: set[_State]) -> frozenset[_State]:
        todo = list(states)
        while todo:
            alt, index = todo.pop()
            parts = self.alternatives[alt]
            if index < len(parts) and parts[index] == "**" and (alt, index + 1) not in states:
                states.add((alt, index + 1))
                todo.append((alt, index + 1))
        return frozenset(states)


def _part(component: str) -> _Part:
    return "**" if component == "**" else re.compile(fnmatch.translate(component))


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is refused, if it is."""
    if "\0" in pattern:
        return "the pattern contains a NUL character"
    try:
        alternatives = expand_braces(pattern)
    except ValueError as exc:
        return str(exc)
    # Both would lead out of the directory the permission check was about
    # (`path: ws, pattern: ../../home/u/.ssh/*`); the walk never produces
    # such a path, so it is refused rather than silently matching nothing.
    if any(alt.startswith(("/", "~")) for alt in alternatives):
        return "the pattern must be relative to the path; put the directory in `path`"
    if any(".." in alt.split("/") for alt in alternatives):
        return "the pattern may not contain `..`; set `path` to the directory instead"
    return None


# -- the walk ---------------------------------------------------------------------


@valueclass(frozen=False, slots=False)
class WalkResult:
    """What a walk found: (mtime, absolute path) of each match, how many
    dotenv files it left out, and why it stopped early (empty: it did not)."""

    found: list[tuple[float, str]] = field(default_factory=list)
    asked: int = 0
    entries: int = 0
    stopped: str = ""


class Walker:
    """One bounded walk of a directory for a :class:`Matcher`. Runs on a
    worker thread; ``stop`` is polled at every entry (a cancelled call)."""

    def __init__(self, matcher: Matcher, ctx: ToolContext, stop: Callable[[], bool]) -> None:
        self.matcher = matcher
        self.ctx = ctx
        self.stop = stop
        self.result = WalkResult()
        self.deadline = 0.0
        self.plan: FsPlan | None = None

    def run(self, root: paths.Resolved) -> WalkResult:
        # The plan once per call: every directory below is checked against it.
        self.plan = self.ctx.session.fs_plan()
        self.deadline = time.monotonic() + BUDGET_S
        stack = [(root.display, root.real, self.matcher.start())]
        while stack and not self.result.stopped:
            shown, real, states = stack.pop()
            for entry in _listing(real):
                if self._exhausted():
                    break
                self._visit(entry, shown, real, states, stack)
        return self.result

    def _visit(self, entry: os.DirEntry[str], shown: str, real: str, states: frozenset[_State],
               stack: list[tuple[str, str, frozenset[_State]]]) -> None:
        name = entry.name
        child = (os.path.join(shown, name), os.path.join(real, name))
        if entry.is_dir(follow_symlinks=False):  # a link to a directory is never entered
            after = self.matcher.step(states, name, literal_only=name in VCS_DIRS)
            if self.matcher.alive(after) and self._may_enter(child[1]):
                stack.append((*child, after))
        elif self.matcher.accepts(self.matcher.step(states, name)):
            self._candidate(entry, *child)

    def _may_enter(self, real: str) -> bool:
        """A directory the sandbox hides is not walked, nor are the process
        views (``path: /`` would list ``/proc/1/environ`` …): what they hold
        is never looked at, as a sandboxed ``ls -R`` cannot. The check on
        each file (:func:`paths.read_right`) would refuse it too; two
        layers, and a hidden tree costs no time."""
        assert self.plan is not None
        if any(inside(real, v) for v in paths.process_views()):
            return False
        return self.plan.may_read(real).allowed

    def _candidate(self, entry: os.DirEntry[str], shown: str, real: str) -> None:
        if entry.is_symlink():
            real = real_path(real)
            if os.path.isdir(real):
                return  # a link to a directory is neither followed nor listed
        denial = paths.read_right(paths.Resolved(shown, real), self.ctx)
        if denial is None:
            self.result.found.append((_mtime(entry), shown))
        elif denial.decision == Decision.ASK:
            # A dotenv file: Read asks a person for it; a listing does not
            # (leaving it out is the fail-closed side: no name, no content).
            self.result.asked += 1

    def _exhausted(self) -> bool:
        result = self.result
        result.entries += 1
        if self.stop():
            result.stopped = "the call was cancelled"
        elif result.entries > MAX_ENTRIES:
            result.stopped = f"it looked at {MAX_ENTRIES} entries"
        elif time.monotonic() > self.deadline:
            result.stopped = f"it ran for {BUDGET_S:g} s"
        return bool(result.stopped)


def _listing(directory: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except OSError:
        return []  # unreadable or gone: as `find` would, go on with the rest


def _mtime(entry: os.DirEntry[str]) -> float:
    for follow in (True, False):
        try:
            return entry.stat(follow_symlinks=follow).st_mtime
        except OSError:
            continue
    return 0.0


def render(result: WalkResult) -> str:
    """Newest first, at most :data:`MAX_RESULTS`, with what was left out."""
    found = sorted(result.found, key=lambda f: (-f[0], f[1]))
    lines = [p for _, p in found[:MAX_RESULTS]] or ["No files found"]
    if len(found) > MAX_RESULTS:
        lines.append(f"(showing {MAX_RESULTS} of {len(found)}; narrow the pattern or path)")
    if result.asked:
        lines.append(f"({result.asked} dotenv file(s) not listed: reading one needs a "
                     "person's approval)")
    if result.stopped:
        lines.append(f"(the search stopped early: {result.stopped}; the list may be "
                     "incomplete, narrow the pattern or path)")
    return "\n".join(lines)


# -- the tool ---------------------------------------------------------------------

_PROMPT = """Finds files by name with a glob pattern.
- The pattern is relative to `path` (the working directory when omitted): "**/*.py" matches \
at any depth, "*.py" only at the top, "src/**/*.{ts,tsx}" below src; `*` matches dotfiles too.
- Returns absolute paths, newest first (modification time), at most 100, with a note when \
there are more.
- Sees what sandboxed commands see, no more: hidden paths (keys, credentials, other \
projects' dotenv files) are left out, and so are dotenv files (.env, .env.*), which only \
Read can open, with a person's approval.
- Symbolic links to directories are neither followed nor listed. Version-control \
directories (.git, .hg, .svn …) are entered only when the pattern names them (".git/*").
- To search file contents use Grep."""


def root_of(path: str | None, ctx: ToolContext) -> paths.Resolved:
    """The directory searched: ``path`` resolved, the working directory by default."""
    return paths.resolve(path or ctx.session.cwd, ctx)


def search_permission(root: paths.Resolved, ctx: ToolContext, tool: str) -> PermissionResult:
    """Glob's and Grep's rule: what the sandbox hides is denied (held in
    every mode); outside the working directories a person is asked."""
    denial = paths.read_right(root, ctx)
    if denial is not None:
        return denial
    if not paths.in_working_dirs(root, ctx):
        return PermissionResult(Decision.ASK, "tool", f"{tool} of {root.display}, which is "
                                "outside the working directories", hint="add the directory "
                                "with --add-dir to search it without asking")
    return PermissionResult(Decision.ALLOW, "tool", f"{tool} inside the working directories")


class GlobTool(ReadOnlyTool[GlobInput]):
    name = "Glob"
    input_model = GlobInput
    search_hint = "find files by name or glob pattern"

    def description(self, data: GlobInput | None = None) -> str:
        return ("Find files by glob pattern (\"**/*.py\"), newest first; "
                "only what the sandbox lets commands see")

    def prompt(self) -> str:
        return _PROMPT

    def activity_description(self, data: GlobInput, cwd: str = "") -> str:
        return f"Searching for {data.pattern}"

    def summary(self, data: GlobInput, cwd: str = "") -> str:
        return data.pattern + (f" in {data.path}" if data.path else "")

    def is_search_or_read(self, data: GlobInput, ctx: ToolContext) -> SearchOrRead:
        return SearchOrRead(is_search=True)

    def permission_matcher(self, data: GlobInput, ctx: ToolContext) -> Subject:
        # the path as named and where it leads: an allow rule must hold
        # for both, a deny for either (`ln -s ~/.aws/credentials notes`)
        target = root_of(data.path, ctx)
        return Subject("path", tuple(dict.fromkeys((target.display, target.real))), "read")

    async def validate_input(self, data: GlobInput, ctx: ToolContext) -> Validation:
        problem = pattern_problem(data.pattern)
        if problem is not None:
            return invalid(problem, 1)
        root = root_of(data.path, ctx)
        right = paths.read_right(root, ctx)
        if right is not None and right.decision is Decision.DENY:
            # not even a stat: whether a hidden path exists is itself a fact
            # (from a review: "is not a directory" vs "does not exist" told
            # what ~/.ssh holds); the permission stage denies it
            return VALID
        if not os.path.exists(root.real):
            return invalid(f"{root.display} does not exist", 2)
        if not os.path.isdir(root.real):
            return invalid(f"{root.display} is not a directory; Glob searches a directory", 3)
        return VALID

    async def check_permissions(self, data: GlobInput, ctx: ToolContext) -> PermissionResult:
        return search_permission(root_of(data.path, ctx), ctx, "Glob")

    async def call(self, data: GlobInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        stop = threading.Event()
        walker = Walker(Matcher(data.pattern), ctx, stop.is_set)
        try:
            result = await asyncio.to_thread(walker.run, root_of(data.path, ctx))
        except asyncio.CancelledError:
            stop.set()  # the walk's thread sees it at its next entry and ends
            raise
        return ToolResult(render(result))


GLOB = build_tool(GlobTool())
