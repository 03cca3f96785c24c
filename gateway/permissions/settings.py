"""Settings files in Claude Code's shape, read forgivingly.

One file is read into a :class:`SettingsFile`: the ``permissions`` key
(``allow``, ``ask``, ``deny``, ``defaultMode``, ``additionalDirectories``,
``disableBypassPermissionsMode``), the managed-only switch
``allowManagedPermissionRulesOnly`` and the ``sandbox`` key. Every other key
is kept (``extra``) and ignored. Each key is validated on its own: a wrong
value costs that key, reported once with the file and line, never the file
— and never a crash, never a silent allow.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from enum import IntEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from values import field, valueclass

from .modes import MODE_NAMES, Mode

#: a settings file is a page of JSON; a larger one is refused unread
MAX_SETTINGS_BYTES = 1 << 20


class Source(IntEnum):
    """Where a setting came from, highest first in precedence for single
    values: policy > flag > cliArg > local > project > user; ``session`` holds
    the answers given while the session runs."""

    SESSION = 0
    USER = 1
    PROJECT = 2
    LOCAL = 3
    CLI_ARG = 4
    FLAG = 5
    POLICY = 6

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def repository_controlled(self) -> bool:
        """A file that arrives with a cloned repository: it may narrow what
        runs but never switch the asking off or widen the sandbox."""
        return self in (Source.PROJECT, Source.LOCAL)


_LABELS = {Source.SESSION: "session", Source.USER: "userSettings",
           Source.PROJECT: "projectSettings", Source.LOCAL: "localSettings",
           Source.CLI_ARG: "cliArg", Source.FLAG: "flagSettings",
           Source.POLICY: "policySettings"}


@valueclass
class Problem:
    """A mistake in a settings file, said once: where and what."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class PermissionsBlock(BaseModel):
    """``permissions`` as Claude Code writes it (camelCase)."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    default_mode: str | None = Field(default=None, alias="defaultMode")
    additional_directories: tuple[str, ...] = Field(default=(), alias="additionalDirectories")
    #: Claude Code writes ``"disable"``; ``true`` is taken to mean the same
    disable_bypass: str | bool | None = Field(default=None, alias="disableBypassPermissionsMode")


@valueclass(slots=False)
class SettingsFile:
    """One source's settings as read, with its mistakes."""

    source: Source
    path: str
    #: where ``/pattern`` rules are anchored (the directory holding ``.claude``)
    root: str
    permissions: PermissionsBlock = field(default_factory=PermissionsBlock)
    managed_rules_only: bool = False
    sandbox: Any = None
    #: the line each rule string sits on, for reporting
    lines: Mapping[str, int] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: a file of another source that lies where commands may write (a
    #: `--settings` file in the project): read as a repository's is
    repository: bool = False

    @property
    def untrusted(self) -> bool:
        """Held to what a repository's file may do (narrow, never widen)."""
        return self.source.repository_controlled or self.repository


def read_settings(path: str, source: Source, root: str) -> SettingsFile | None:
    """The file at ``path``, or ``None`` when there is none. Never raises:
    an unreadable or malformed file is a :class:`SettingsFile` with a
    problem and nothing else."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return SettingsFile(source, path, root, problems=(Problem(path, "is a directory"),))
    except OSError as exc:
        return SettingsFile(source, path, root, problems=(
            Problem(path, f"cannot be read ({exc.strerror or type(exc).__name__})"),))
    if len(raw) > MAX_SETTINGS_BYTES:
        return SettingsFile(source, path, root, problems=(
            Problem(path, f"is larger than {MAX_SETTINGS_BYTES} bytes; not read"),))
    return parse_settings_text(raw, path, source, root)


def parse_settings_text(raw: bytes, path: str, source: Source, root: str) -> SettingsFile:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return SettingsFile(source, path, root, problems=(
            Problem(path, f"is not UTF-8 (byte {exc.start}); the file is skipped"),))
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        return SettingsFile(source, path, root, problems=(
            Problem(f"{path}:{exc.lineno}:{exc.colno}", f"not valid JSON ({exc.msg})"
                    f"{_json_hint(text, exc.pos)}; the file is skipped"),))
    except RecursionError:
        return SettingsFile(source, path, root, problems=(
            Problem(path, "nested too deeply; the file is skipped"),))
    except ValueError as exc:
        # Fixed: json.loads raises a bare ValueError past 4300 digits in a
        # number (`{"a": 1111…}`), and it escaped: "never raises" broke
        return SettingsFile(source, path, root, problems=(
            Problem(path, f"cannot be read as JSON ({exc}); the file is skipped"),))
    if not isinstance(data, dict):
        return SettingsFile(source, path, root, problems=(
            Problem(path, f"must hold a JSON object, not {type(data).__name__}; the file is "
                    "skipped"),))
    return _from_mapping(data, text, path, source, root)


def _from_mapping(data: dict[str, Any], text: str, path: str, source: Source,
                  root: str) -> SettingsFile:
    problems: list[Problem] = []
    perms = data.get("permissions", {})
    if not isinstance(perms, dict):
        problems.append(Problem(_at(path, text, "permissions"),
                                "'permissions' must be an object; ignored"))
        perms = {}
    kept: dict[str, Any] = {}
    for name, given in perms.items():
        value = _string_list(name, given, path, text, problems) if name in _LISTS else given
        try:
            PermissionsBlock.model_validate({name: value})
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            problems.append(Problem(_at(path, text, name),
                                    f"permissions.{name}: {err.get('msg', 'invalid')}; ignored"))
            continue
        why = _value_problem(name, value)
        if why is not None:
            problems.append(Problem(_at(path, text, name), f"permissions.{name}: {why}; ignored"))
            continue
        kept[name] = value
    block = PermissionsBlock.model_validate(kept)
    for name in sorted(set(block.model_extra or {})):
        problems.append(Problem(_at(path, text, name), f"permissions.{name} is not a known key "
                                "(allow, ask, deny, defaultMode, additionalDirectories, "
                                "disableBypassPermissionsMode); ignored"))
    for name in sorted(_MISPLACED & set(data)):
        # `{"deny": [...]}` without the `permissions` around it: the one
        # unknown top-level key that is surely a mistake (and a deny that
        # protects nothing if left unsaid)
        problems.append(Problem(_at(path, text, name), f"{name!r} belongs inside "
                                f"\"permissions\": {{...}}; ignored here"))
    managed_only = data.get("allowManagedPermissionRulesOnly", False)
    if not isinstance(managed_only, bool):
        problems.append(Problem(_at(path, text, "allowManagedPermissionRulesOnly"),
                                "allowManagedPermissionRulesOnly must be true or false; ignored"))
        managed_only = False
    lines = {rule: _line(text, rule) for rule in (*block.allow, *block.ask, *block.deny)}
    known = {"permissions", "allowManagedPermissionRulesOnly", "sandbox"}
    return SettingsFile(source, path, root, block, managed_only, data.get("sandbox"),
                        lines, tuple(problems),
                        {k: v for k, v in data.items() if k not in known})


#: keys of ``permissions`` written at the top level by mistake
_MISPLACED = frozenset({"allow", "ask", "deny", "defaultMode", "additionalDirectories",
                        "disableBypassPermissionsMode"})


def _value_problem(name: str, value: Any) -> str | None:
    """What is wrong with a value the model accepts as a string but that
    means nothing: said here, with the file's line (``defaultMode: "auto"``
    was reported by the merge without one; ``disableBypassPermissionsMode:
    "disabled"`` left bypass allowed without a word)."""
    if name == "defaultMode" and isinstance(value, str) and Mode.parse(value) is None:
        return f"{value!r} is not a mode ({MODE_NAMES})"
    if name == "disableBypassPermissionsMode" and value not in ("disable", True, False, None):
        return f"{value!r} is not \"disable\""
    return None


def _json_hint(text: str, pos: int) -> str:
    """What a person most likely wrote at a JSON error: a comment or a
    comma before a closing bracket (both fine in JavaScript, not in JSON)."""
    rest = text[pos:].lstrip()
    if rest.startswith(("//", "/*")) or text[:pos].rstrip().endswith(("//", "/*")):
        return " — JSON allows no comments"
    before = text[:pos].rstrip()
    if before.endswith(",") and rest[:1] in ("}", "]"):
        return " — a comma before a closing bracket (JSON allows none)"
    return ""


#: the rule lists, read element by element: one bad rule costs itself only
_LISTS = ("allow", "ask", "deny", "additionalDirectories")


def _string_list(name: str, value: Any, path: str, text: str,
                 problems: list[Problem]) -> Any:
    """The strings of a list key. A lone string in ``deny`` or ``ask`` is
    taken as a list of one (a mistake must never make a rule vanish that
    would have refused something); in ``allow`` it is dropped (nor may one
    grant what was not clearly written)."""
    if isinstance(value, str):
        if name in ("deny", "ask"):
            problems.append(Problem(_at(path, text, name), f"permissions.{name} should be a "
                                    "list of rules; taken as a list of one"))
            return [value]
        problems.append(Problem(_at(path, text, name), f"permissions.{name} should be a list "
                                "of rules, not a string; ignored"))
        return []
    if not isinstance(value, list):
        return value  # reported by the model's validation below
    kept = []
    for n, item in enumerate(value):
        if isinstance(item, str):
            kept.append(item)
        else:
            problems.append(Problem(_at(path, text, name), f"permissions.{name}[{n}] must be a "
                                    f"string, not {type(item).__name__}; skipped"))
    return kept


def _line(text: str, value: str) -> int:
    """The line a string value sits on (0 when it cannot be found)."""
    at = text.find(json.dumps(value, ensure_ascii=False))
    if at < 0:
        at = text.find(json.dumps(value))
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def _at(path: str, text: str, key: str) -> str:
    at = text.find(f'"{key}"')
    return f"{path}:{text.count(chr(10), 0, at) + 1}" if at >= 0 else path


def settings_root(path: str) -> str:
    """The directory a file's ``/pattern`` rules are anchored at: the one
    holding its ``.claude`` or ``.shellgate`` (or ``~/.config/shellgate``'s
    home); a settings file elsewhere anchors at its own directory."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.basename(folder) in (".claude", ".shellgate"):
        return os.path.dirname(folder)
    if folder.endswith("/.config/shellgate"):
        return folder[: -len("/.config/shellgate")] or "/"
    return folder
