"""Which settings files a session reads, and the flags beside them.

policy   /etc/shellgate/managed-settings.json, /etc/claude-code/managed-settings.json,
         and each directory's managed-settings.d/*.json on top, in name order (the
         later file wins a single value; /etc/shellgate wins over /etc/claude-code)
flag     --settings FILE
cliArg   --allowedTools, --disallowedTools, --permission-mode, --add-dir
local    .claude/settings.local.json, .shellgate/settings.local.json
project  .claude/settings.json, .shellgate/settings.json
user     ~/.claude/settings.json, ~/.config/shellgate/settings.json
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from values import replace, valueclass

from ..tools.paths import inside
from .settings import PermissionsBlock, Problem, SettingsFile, Source, read_settings, settings_root

MANAGED_DIRS = ("/etc/shellgate", "/etc/claude-code")


@valueclass
class CliPermissions:
    """What the command line says about permissions (the cliArg source)."""

    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    permission_mode: str | None = None
    add_dirs: tuple[str, ...] = ()
    settings_file: str | None = None


def split_tool_list(values: Sequence[str]) -> tuple[str, ...]:
    """``--allowedTools "Bash(git log:*)" Read,Edit``: rules separated by
    commas or spaces, except inside parentheses (a rule's own spaces)."""
    out: list[str] = []
    for value in values:
        depth, start = 0, 0
        for i, ch in enumerate(value):
            if ch == "(" and (i == 0 or value[i - 1] != "\\"):
                depth += 1
            elif ch == ")" and (i == 0 or value[i - 1] != "\\"):
                depth = max(0, depth - 1)
            elif depth == 0 and (ch == "," or ch.isspace()):
                out.append(value[start:i])
                start = i + 1
        out.append(value[start:])
    return tuple(p.strip() for p in out if p.strip())


def managed_files(dirs: Sequence[str] = MANAGED_DIRS) -> list[str]:
    files: list[str] = []
    for folder in dirs:
        files.append(os.path.join(folder, "managed-settings.json"))
        drop_in = os.path.join(folder, "managed-settings.d")
        try:
            names = sorted(n for n in os.listdir(drop_in)
                           if n.endswith(".json") and not n.startswith("."))
        except OSError:
            continue
        files.extend(os.path.join(drop_in, n) for n in names)
    return files


def discover(project: str, home: str, cli: CliPermissions,
             managed_dirs: Sequence[str] = MANAGED_DIRS) -> list[SettingsFile]:
    """Every source's settings, highest precedence first (policy … user)."""
    found: list[SettingsFile] = []

    def add(path: str, source: Source) -> None:
        got = read_settings(path, source, settings_root(path))
        if got is not None:
            found.append(_home_expanded(got, home))

    for folder in managed_dirs:
        # Fixed: the base file came first and so won every single value
        # over its drop-ins, and 10-a.json over 20-b.json. Drop-ins go on
        # top of managed-settings.json in name order, the later winning
        # (systemd's convention, and Claude Code's): the last is listed
        # first, since ``found`` runs from the highest precedence down.
        for path in reversed(managed_files([folder])):
            add(path, Source.POLICY)
    if cli.settings_file is not None:
        path = os.path.abspath(cli.settings_file)
        # Fixed: anchored at the file's own directory, so `--settings
        # .claude/settings.json` put `/secrets/**` at `.claude/secrets`
        # where the same file read as the project's covers `secrets`
        root = settings_root(path)
        got = read_settings(path, Source.FLAG, root)
        if got is not None and _writable_by_commands(path, (project, *cli.add_dirs)):
            # From a review: a `--settings` file in the project was rewritten
            # by a sandboxed command to bypassPermissions, and the next
            # session ran everything unasked.
            got = replace(got, repository=True, problems=(*got.problems, Problem(
                path, "--settings names a file inside the working directories, which commands "
                "may rewrite: it is read as a repository's settings (it may add rules and "
                "narrow the sandbox, not switch asking off)")))
        found.append(_home_expanded(got, home) if got is not None else SettingsFile(
            Source.FLAG, path, root,
            problems=(Problem(path, "--settings names a file that does not exist"),)))
    found.append(_home_expanded(cli_settings(cli, project), home))
    for name in (".claude/settings.local.json", ".shellgate/settings.local.json"):
        add(os.path.join(project, name), Source.LOCAL)
    for name in (".claude/settings.json", ".shellgate/settings.json"):
        add(os.path.join(project, name), Source.PROJECT)
    for name in (".claude/settings.json", ".config/shellgate/settings.json"):
        path = os.path.join(home, name)
        got = read_settings(path, Source.USER, settings_root(path))
        if (got is not None and os.path.realpath(path) != os.path.abspath(path)
                and _writable_by_commands(path, (project, *cli.add_dirs))):
            # (a home that is the workspace keeps its own .claude read-only
            # in the sandbox; a link leads where nothing keeps it)
            # From a review: ~/.claude/settings.json a link into the project
            # (a dotfiles checkout) took a hook a sandboxed `cat >` added, and
            # the next session ran it as the user's own
            got = replace(got, repository=True, problems=(*got.problems, Problem(
                path, "the user's settings lie inside the working directories, where commands "
                "may rewrite them: read as a repository's settings")))
        if got is not None:
            found.append(_home_expanded(got, home))
    return found


def _home_expanded(got: SettingsFile, home: str) -> SettingsFile:
    """``~`` in ``additionalDirectories`` is the session's home.

    Fixed: it was left for ``merge`` to expand with the process's ``$HOME``,
    so ``load_permissions(project, home=...)`` with another home put
    ``~/notes`` in the wrong place."""
    dirs = got.permissions.additional_directories
    if not any(d == "~" or d.startswith("~/") for d in dirs):
        return got
    expanded = tuple(home.rstrip("/") + d[1:] if d == "~" or d.startswith("~/") else d
                     for d in dirs)
    return replace(got, permissions=got.permissions.model_copy(
        update={"additional_directories": expanded}))


def _writable_by_commands(path: str, folders: Sequence[str]) -> bool:
    real = os.path.realpath(path)
    for folder in folders:
        top = os.path.realpath(folder)
        if inside(real, top):
            return True
    return False


def cli_settings(cli: CliPermissions, project: str) -> SettingsFile:
    """The flags as a settings "file" of their own (source cliArg)."""
    block = PermissionsBlock.model_validate({
        "allow": split_tool_list(cli.allowed_tools),
        "deny": split_tool_list(cli.disallowed_tools),
        "defaultMode": cli.permission_mode,
        "additionalDirectories": cli.add_dirs})
    return SettingsFile(Source.CLI_ARG, "the command line", project, block)


#: "always allow" writes its rule here (Claude Code's own local file)
LOCAL_SETTINGS = ".claude/settings.local.json"
