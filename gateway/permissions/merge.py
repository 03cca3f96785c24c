"""All sources merged into the one view the decider reads.

Single values (``defaultMode``) come from the highest source that sets
them: policy > flag > cliArg > local > project > user. The sandbox's
switches that widen (``enabled``, ``autoAllowBashIfSandboxed``,
``allowUnsandboxedCommands``, ``network.allowUnixSockets``) are closed by
any source that closes them, whatever its precedence.
Rule lists and ``additionalDirectories`` merge across every source, each
rule remembering its own.

A repository's files (project, local) arrive with a ``git clone``. They may
add rules and narrow the sandbox; they cannot switch the asking off — no
``bypassPermissions``, no allow rule for every call of a tool that changes
things (``Bash``, ``Bash(*)``, ``Edit``, ``Write``), no sandbox auto-allow —
nor widen what commands reach (the sandbox's writable paths, domains and
sockets, excluded commands, working directories outside the project).
Each refusal is reported; from a review, ``{"permissions": {"allow":
["Bash"]}}`` in a cloned repository ran `python3 -c …` unasked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from values import field, replace, valueclass

from ..pathnames import inside
from .guards import CODE_RUNNERS, rule_words
from .modes import MODE_NAMES, Mode
from .path_rules import anchor
from .rules import PATH_TOOLS, Behavior, Rule, parse_rule, unknown_tool
from .settings import Problem, SettingsFile, Source

if TYPE_CHECKING:
    from ..hooks import HookCommand

#: sandbox keys that widen what a command may reach, or switch asking off:
#: not from a repository
_WIDENING = {("filesystem", "allowWrite"), ("filesystem", "allowSecretWrites"),
             ("network", "allowedDomains"),
             ("network", "allowUnixSockets"), ("", "excludedCommands"), ("", "enabled"),
             ("", "autoAllowBashIfSandboxed"), ("", "allowUnsandboxedCommands")}

#: the switches among them, each with its closed value: whichever source
#: sets that value wins, not the highest source (from a review: a
#: repository's `allowUnsandboxedCommands: true` re-opened what the user's
#: `false` closed, the project's file being of higher precedence).
#: `enabled` is closed at false: shellgate always sandboxes, and
#: `enabled: true` is what lets autoAllowBashIfSandboxed allow unasked.
_CLOSED = {("", "enabled"): False, ("", "autoAllowBashIfSandboxed"): False,
           ("", "allowUnsandboxedCommands"): False, ("network", "allowUnixSockets"): False}

#: the settings keys the hooks collection reads
_HOOK_KEYS = ("hooks", "disableAllHooks", "allowManagedHooksOnly")

#: tools whose every call a repository's allow rule may not cover
_WRITERS = frozenset({"Bash", "Edit", "Write", "NotebookEdit", "MultiEdit"})


@valueclass(slots=False)
class PermissionSettings:
    """The effective permissions of a session."""

    rules: tuple[Rule, ...] = ()
    mode: Mode = Mode.DEFAULT
    mode_source: Source | None = None
    additional_dirs: tuple[str, ...] = ()
    bypass_disabled: bool = False
    managed_only: bool = False
    #: the merged ``sandbox`` key (``sandbox.SandboxSettings``)
    sandbox: Any = None
    problems: tuple[Problem, ...] = ()
    files: tuple[str, ...] = field(default=())
    #: each source's ``sandbox`` settings holding only its ``limits``:
    #: applied one after another, each can only lower a limit, so the
    #: lowest wins whoever set it (a repository's file cannot lift the
    #: user's own lower limit by taking precedence)
    sandbox_limits: tuple[Any, ...] = ()
    #: the hooks of every source (``gateway.hooks.HookCommand``), and apart
    #: those a repository's files bring (run only in a trusted workspace)
    hooks: tuple[HookCommand, ...] = ()
    repository_hooks: tuple[HookCommand, ...] = ()

    def of(self, behavior: Behavior) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.behavior == behavior)

    def with_rule(self, rule: Rule) -> PermissionSettings:
        return replace(self, rules=(*self.rules, rule))

    def with_mode(self, mode: Mode) -> PermissionSettings:
        return replace(self, mode=mode, mode_source=Source.SESSION)


def merge(files: Sequence[SettingsFile]) -> PermissionSettings:
    """``files`` in any order; precedence comes from each one's source."""
    ordered = sorted(files, key=lambda f: -f.source)
    problems: list[Problem] = [p for f in ordered for p in f.problems]
    managed_only = any(f.managed_rules_only for f in ordered if f.source is Source.POLICY)
    rules: list[Rule] = []
    dropped = 0
    for f in ordered:
        for behavior in ("deny", "ask", "allow"):
            for n, text in enumerate(getattr(f.permissions, behavior)):
                line = f.lines.get(text, 0) if isinstance(text, str) else 0
                origin = f"{f.path}:{line}" if line else f"{f.path} permissions.{behavior}[{n}]"
                got = parse_rule(text, behavior, f.source, origin, f.root)
                if isinstance(got, Problem):
                    problems.append(got)
                    continue
                if managed_only and behavior == "allow" and f.source is not Source.POLICY:
                    dropped += 1
                    continue
                if behavior == "allow" and f.untrusted and _everything(got):
                    problems.append(Problem(origin, f"{got.text}: a repository's settings cannot "
                                            f"allow every {got.tool} call (put it in "
                                            "~/.claude/settings.json or pass --allowedTools); "
                                            "ignored"))
                    continue
                if behavior == "allow" and f.untrusted and got.tool in PATH_TOOLS and got.content:
                    kept = _inside_project(got, f)
                    if kept is None:
                        problems.append(Problem(origin, f"{got.text}: a repository's settings "
                                                "cannot allow paths outside the project "
                                                f"({f.root}); ignored"))
                        continue
                    got = kept
                warn = unknown_tool(got)
                if warn is not None:
                    problems.append(warn)
                rules.append(got)
    if dropped:
        problems.append(Problem("policySettings", f"{dropped} allow rule(s) from other sources "
                                "ignored: allowManagedPermissionRulesOnly is set"))
    # it only ever narrows, so every source may say it (as in Claude Code)
    bypass_disabled = any(f.permissions.disable_bypass in ("disable", True) for f in ordered)
    mode, mode_source = _mode(ordered, bypass_disabled, problems)
    dirs = tuple(dict.fromkeys(_directories(ordered, problems)))
    sandbox, limits = _sandbox(ordered, problems)
    hooks: tuple[HookCommand, ...] = ()
    repository_hooks: tuple[HookCommand, ...] = ()
    if any(key in f.extra for f in ordered for key in _HOOK_KEYS):
        # the hooks package (asyncio with it) only for settings that name
        # hooks: a cold `shellgate run` reads settings too
        from .hook_settings import collect_hooks  # noqa: PLC0415

        found = collect_hooks(ordered)
        problems.extend(found.problems)
        hooks, repository_hooks = found.hooks, found.repository_hooks
    return PermissionSettings(tuple(rules), mode, mode_source, dirs, bypass_disabled,
                              managed_only, sandbox, tuple(problems),
                              tuple(f.path for f in ordered), limits, hooks, repository_hooks)


def _mode(ordered: Sequence[SettingsFile], bypass_disabled: bool,
          problems: list[Problem]) -> tuple[Mode, Source | None]:
    for f in ordered:
        value = f.permissions.default_mode
        if value is None:
            continue
        mode = Mode.parse(value)
        if mode is None:
            problems.append(Problem(f.path, f"defaultMode {value!r} is not a mode ({MODE_NAMES});"
                                    " ignored"))
            continue
        if mode is Mode.BYPASS and bypass_disabled:
            problems.append(Problem(f.path, "bypassPermissions is disabled by the managed policy "
                                    "(disableBypassPermissionsMode); the default mode is used"))
            continue
        if mode is Mode.BYPASS and f.untrusted:
            problems.append(Problem(f.path, "a repository's settings cannot choose "
                                    "bypassPermissions (put it in ~/.claude/settings.json or "
                                    "pass --permission-mode); ignored"))
            continue
        return mode, f.source
    return Mode.DEFAULT, None


def _everything(rule: Rule) -> bool:
    """An allow rule covering every call of a tool that changes things
    (``Bash``, ``Bash(**)``, ``Bash(* *)``, ``Edit``) — or, for Bash, any
    program (``Bash(*-*)``, ``Bash(p*)``: no whole first word) or any code
    (``Bash(python3:*)``, ``Bash(env:*)``: a shell, an interpreter, a
    wrapper runs whatever its arguments say). From the second review: a
    repository's `Bash(*-*)` ran `python3 -c …` unasked."""
    if rule.tool not in _WRITERS:
        return False
    if rule.content is None:
        return True
    if rule.tool != "Bash":
        return False
    words = rule_words(rule.content)
    return not words or os.path.basename(words[0]) in CODE_RUNNERS


def _inside_project(rule: Rule, f: SettingsFile) -> Rule | None:
    """A repository's path allow rule, kept to its project: a bare name
    (`Read(*.md)`, any depth anywhere) is anchored at the project; a rule
    reaching out of it (`Read(//**)`, `Edit(~/…)`) is refused. From a
    review: `Read(//**)` planted in a subdirectory's settings let a session
    started there read any file outside its project unasked."""
    assert rule.content is not None
    anchored = anchor(rule.content, root=f.root, cwd=f.root, home="/nonexistent-home")
    if anchored is None:
        return replace(rule, content="/**/" + rule.content.lstrip("/"))
    hit = re.search(r"(?<!\\)[*?\[]", anchored)
    literal = anchored if hit is None else anchored[:anchored.rfind("/", 0, hit.start())]
    literal = os.path.realpath(literal or "/")
    root = os.path.realpath(f.root)
    if inside(literal, root):
        return rule
    return None


def _directories(ordered: Sequence[SettingsFile], problems: list[Problem]) -> list[str]:
    out: list[str] = []
    for f in ordered:
        for d in f.permissions.additional_directories:
            path = _directory(d, f)
            # where it leads, not how it is written: `./link` to ~ is ~
            real, root = os.path.realpath(path), os.path.realpath(f.root)
            if f.untrusted and not (
                    inside(real, root)):
                problems.append(Problem(f.path, f"additionalDirectories {d!r}: a repository's "
                                        "settings cannot add a directory outside the project "
                                        f"({f.root}); ignored"))
                continue
            out.append(path)
    return out


def _directory(path: str, f: SettingsFile) -> str:
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    return os.path.normpath(os.path.join(f.root, expanded))


def _sandbox(ordered: Sequence[SettingsFile],
             problems: list[Problem]) -> tuple[Any, tuple[Any, ...]]:
    """The ``sandbox`` keys merged: switches from the highest source, lists
    added; a repository's widening lists dropped (and said)."""
    from sandbox import PolicyError, parse_settings  # noqa: PLC0415

    merged: dict[str, Any] = {}
    lowered: list[Any] = []
    closed: set[tuple[str, str]] = set()
    for f in reversed(ordered):  # lowest first: higher sources overwrite switches
        if f.sandbox is None:
            continue
        try:
            parsed = parse_settings(f.sandbox)
        except PolicyError as exc:
            problems.append(Problem(f.path, f"{exc}; the sandbox key is ignored"))
            continue
        # Fixed: `exclude_defaults` dropped a value equal to the default,
        # so a policy's `"allowUnixSockets": false` could not switch off a
        # user's `true`; what a file sets, it sets (and `false` or `[]`
        # from a repository narrows: it is not refused as widening; an
        # explicit `null` says nothing and overrides nothing)
        data = parsed.model_dump(by_alias=True, exclude_unset=True, exclude_none=True)
        for section, key in sorted(_WIDENING):
            holder = data.get(section, {}) if section else data
            if holder.get(key) and f.untrusted:
                problems.append(Problem(f.path, f"sandbox.{section + '.' if section else ''}"
                                        f"{key}: a repository's settings cannot widen the "
                                        "sandbox; ignored"))
                del holder[key]
        limits = data.pop("limits", None)
        if limits:
            lowered.append(parse_settings({"limits": limits}))
        closed.update(key for key, value in _CLOSED.items()
                      if (data.get(key[0], {}) if key[0] else data).get(key[1]) is value)
        _fold(merged, data)
    for section, key in closed:
        (merged.setdefault(section, {}) if section else merged)[key] = _CLOSED[section, key]
    return parse_settings(merged), tuple(lowered)


def _fold(into: dict[str, Any], data: dict[str, Any]) -> None:
    for key, value in data.items():
        if isinstance(value, dict):
            _fold(into.setdefault(key, {}), value)
        elif isinstance(value, (list, tuple)) and isinstance(into.get(key), (list, tuple)):
            into[key] = [*into[key], *value]
        else:
            into[key] = value
