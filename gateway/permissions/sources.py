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
from collections.abc import Mapping, Sequence

from values import replace, valueclass

from ..pathnames import (
    LOCAL_FILES,
    MANAGED_DIRS,
    PROJECT_FILES,
    USER_FILES,
    answers_file,
    inside,
    managed_files,
)
from .settings import PermissionsBlock, Problem, SettingsFile, Source, read_settings, settings_root


@valueclass
class CliPermissions:
    """What the command line says about permissions (the cliArg source)."""

    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    permission_mode: str | None = None
    add_dirs: tuple[str, ...] = ()
    settings_file: str | None = None
    #: paths the command line makes writable for sandboxed commands
    #: (`shellgate run --allow-write`): a settings file there is a
    #: repository's, as one in the workspace is
    writable_roots: tuple[str, ...] = ()


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


def discover(project: str, home: str, cli: CliPermissions,
             managed_dirs: Sequence[str] = MANAGED_DIRS,
             granted: Sequence[str] = (),
             env: Mapping[str, str] | None = None) -> list[SettingsFile]:
    """Every source's settings, highest precedence first (policy … user).
    ``granted``: the writable roots the settings themselves grant
    (``sandbox.filesystem.allowWrite``, resolved), where a file is a
    repository's as much as in the workspace. ``env`` says where the state
    directory is, which keeps the "always" answers given for the project
    (the process's own environment by default)."""
    found: list[SettingsFile] = []
    roots = (project, *cli.add_dirs, *cli.writable_roots, *granted)
    own = _own_scope_files(home, managed_dirs)

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
        path = os.path.abspath(cli.settings_file)  # compared with `own` as named
        # Fixed: anchored at the file's own directory, so `--settings
        # .claude/settings.json` put `/secrets/**` at `.claude/secrets`
        # where the same file read as the project's covers `secrets`
        root = settings_root(path)
        got = read_settings(path, Source.FLAG, root)
        if got is not None and path not in own and _writable_by_commands(path, roots):
            # From a review: a `--settings` file in the project was rewritten
            # by a sandboxed command to bypassPermissions, and the next
            # session ran everything unasked; `shellgate run --settings
            # .claude/settings.json` in a cloned repository took its
            # `allowWrite: ["~"]` and `allowUnixSockets` (the ssh agent).
            # Whatever flag names it, such a file is a repository's.
            got = replace(got, repository=True, problems=(*got.problems, Problem(
                path, "--settings names a file where sandboxed commands may write (the "
                "working directories or a writable root): it is read as a repository's "
                "settings (it may add rules and narrow the sandbox, not widen it or switch "
                "asking off)")))
        found.append(_home_expanded(got, home) if got is not None else SettingsFile(
            Source.FLAG, path, root,
            problems=(Problem(path, "--settings names a file that does not exist"),)))
    found.append(_home_expanded(cli_settings(cli, project), home))
    # With the home as the project (`--cwd ~`), ~/.claude/settings.json is
    # also the project's file: it is read once, as the user's.
    for name in LOCAL_FILES:
        if os.path.join(project, name) not in own:
            add(os.path.join(project, name), Source.LOCAL)
    for name in PROJECT_FILES:
        if os.path.join(project, name) not in own:
            add(os.path.join(project, name), Source.PROJECT)
    for name in USER_FILES:
        path = os.path.join(home, name)
        got = read_settings(path, Source.USER, settings_root(path))
        if (got is not None and os.path.realpath(path) != os.path.abspath(path)
                and _writable_by_commands(path, roots)):
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
    path = answers_file(project, env if env is not None else os.environ, home)
    got = read_settings(path, Source.USER, project)
    if got is not None and _writable_by_commands(path, roots):
        # the state directory put where commands write (XDG_STATE_HOME in
        # the workspace): a rule there may have been planted
        got = replace(got, repository=True, problems=(*got.problems, Problem(
            path, "the saved answers lie where sandboxed commands may write: read as a "
            "repository's settings")))
    if got is not None:
        found.append(got)
    return found


def _own_scope_files(home: str, managed_dirs: Sequence[str]) -> frozenset[str]:
    """The user's and the policy's own settings files, each where it is
    named and not a link: named by `--settings` they are still the user's
    or the policy's, even with the home as the workspace (`--cwd ~`) — the
    sandbox keeps them read-only wherever the workspace lies
    (``profiles/host-run-files.toml``)."""
    named = [*managed_files(managed_dirs), *(os.path.join(home, f) for f in USER_FILES)]
    return frozenset(p for p in map(os.path.abspath, named) if os.path.realpath(p) == p)


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
LOCAL_SETTINGS = LOCAL_FILES[0]
