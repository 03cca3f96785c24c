"""The ``hooks`` settings key, in Claude Code's shape, read forgivingly.

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Write",
                               "hooks": [{"type": "command",
                                          "command": "~/bin/guard.sh",
                                          "timeout": 30}]}]}}

A matcher is a tool name (``Write``), a list (``Edit|Write``), a regular
expression (``Notebook.*``, ``mcp__memory__.*``: searched, as Claude Code
does), or empty / ``*`` for every tool. Events without tools (SessionStart,
UserPromptSubmit, Stop) take no matcher. Each mistake costs its own entry
and is said once with the file; nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from regexes import regex
from values import valueclass

#: the events the gateway and its agent client fire
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
SESSION_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop")
EVENTS = (*TOOL_EVENTS, *SESSION_EVENTS)

DEFAULT_TIMEOUT_S = 60.0
#: a hook may ask for more time, not for forever
MAX_TIMEOUT_S = 3600.0
#: a matcher is a name or a short pattern; a longer one is a mistake
MAX_MATCHER_CHARS = 1000
#: a bare name or list: exact comparison, never a pattern (`Bash` must not
#: match `BashOutput`)
_PLAIN = regex(r"[A-Za-z0-9_|]+")


@valueclass
class HookCommand:
    """One configured command hook, with where it came from."""

    event: str
    command: str
    matcher: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: the settings source's label (``userSettings``, ``projectSettings`` …)
    source: str = ""
    #: the file it was read from
    origin: str = ""

    def matches(self, tool_name: str) -> bool:
        return matcher_matches(self.matcher, tool_name)


def matcher_matches(matcher: str, tool_name: str) -> bool:
    """Claude Code's matcher: empty or ``*`` is every tool; names and
    ``A|B`` lists compare exactly; anything else is a regular expression
    searched in the name. A pattern that does not compile matches nothing
    (it was reported when the settings were read)."""
    if matcher in ("", "*"):
        return True
    if _PLAIN.fullmatch(matcher):
        return tool_name in matcher.split("|")
    try:
        return re.search(matcher, tool_name) is not None
    except re.error:
        return False


def parse_hooks(value: Any, *, source: str, origin: str
                ) -> tuple[tuple[HookCommand, ...], tuple[str, ...]]:
    """The command hooks of one settings file's ``hooks`` value, and what
    was wrong with it (one line each)."""
    if value is None:
        return (), ()
    problems: list[str] = []
    if not isinstance(value, Mapping):
        return (), (f"'hooks' must be an object of events, not {type(value).__name__}; "
                    "ignored",)
    found: list[HookCommand] = []
    for event, groups in value.items():
        if event not in EVENTS:
            # repr: the name is a repository's text, said on the terminal
            # (from a review: an event named "\x1b[2J\x1b]0;owned\x07"
            # cleared the screen and set the window title)
            problems.append(f"hooks.{event!r} is not an event shellgate runs "
                            f"({', '.join(EVENTS)}); ignored")
            continue
        if not isinstance(groups, Sequence) or isinstance(groups, str):
            problems.append(f"hooks.{event} must be a list of matcher groups; ignored")
            continue
        for n, group in enumerate(groups):
            found.extend(_group(event, n, group, source, origin, problems))
    return tuple(found), tuple(problems)


def _group(event: str, n: int, group: Any, source: str, origin: str,
           problems: list[str]) -> list[HookCommand]:
    where = f"hooks.{event}[{n}]"
    if not isinstance(group, Mapping):
        problems.append(f"{where} must be an object with 'hooks'; ignored")
        return []
    matcher = group.get("matcher", "")
    if matcher is None:
        matcher = ""
    if not isinstance(matcher, str) or len(matcher) > MAX_MATCHER_CHARS:
        problems.append(f"{where}.matcher must be a tool name or a short pattern; ignored")
        return []
    if matcher and event not in TOOL_EVENTS:
        problems.append(f"{where}.matcher: {event} has no tool to match; the matcher is "
                        "ignored and the hooks run for every event")
        matcher = ""
    if not _PLAIN.fullmatch(matcher or "x") and matcher != "*":
        try:
            re.compile(matcher)
        except re.error as exc:
            problems.append(f"{where}.matcher {matcher!r} is not a valid pattern ({exc}); "
                            "its hooks never run")
            return []
    entries = group.get("hooks")
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        problems.append(f"{where}.hooks must be a list of hooks; ignored")
        return []
    out: list[HookCommand] = []
    for k, entry in enumerate(entries):
        hook = _entry(f"{where}.hooks[{k}]", entry, problems)
        if hook is not None:
            command, timeout = hook
            out.append(HookCommand(event, command, matcher, timeout, source, origin))
    return out


def _entry(where: str, entry: Any, problems: list[str]) -> tuple[str, float] | None:
    if not isinstance(entry, Mapping):
        problems.append(f"{where} must be an object; ignored")
        return None
    kind = entry.get("type", "command")
    if kind != "command":
        problems.append(f"{where}: hooks of type {kind!r} are not run (only 'command'); "
                        "ignored")
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        problems.append(f"{where}.command must be a non-empty string; ignored")
        return None
    if "\0" in command:
        problems.append(f"{where}.command holds a NUL byte; ignored")
        return None
    try:
        command.encode()
    except UnicodeEncodeError:
        # a lone surrogate (`"command": "sh \ud800.sh"`): no program can be
        # given it, and resolving its paths crashed the session's start
        problems.append(f"{where}.command is not valid UTF-8 text; ignored")
        return None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if (isinstance(timeout, bool) or not isinstance(timeout, int | float)
            or not timeout > 0):  # NaN is not > 0 either
        problems.append(f"{where}.timeout must be a positive number of seconds; "
                        f"{DEFAULT_TIMEOUT_S:g} s is used")
        timeout = DEFAULT_TIMEOUT_S
    return command, float(min(timeout, MAX_TIMEOUT_S))


def for_event(hooks: Sequence[HookCommand], event: str,
              tool_name: str | None = None) -> list[HookCommand]:
    """The hooks one event runs, each command once (the same command set in
    two files runs once, as in Claude Code), in the order configured."""
    seen: set[str] = set()
    out = []
    for hook in hooks:
        if hook.event != event or hook.command in seen:
            continue
        if tool_name is not None and not hook.matches(tool_name):
            continue
        seen.add(hook.command)
        out.append(hook)
    return out
