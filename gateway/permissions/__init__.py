"""Stage 4: settings from every source, Claude Code's rules and modes, and
the decider that puts them over the tool's own answer.

``load_permissions`` reads the sources (policy, flag, cliArg, local,
project, user) into one :class:`PermissionSettings`; :class:`RulesDecider`
decides each call with them (``DefaultDecider`` is the same chain with no
settings: read-only allows, anything else asks); an ``ask`` goes to the
session's approver — or, with nobody to answer, is denied."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..pathnames import MANAGED_DIRS
from .denials import DENIALS_BEFORE_ADVICE, DenialTracker
from .merge import PermissionSettings, merge
from .modes import MODE_NAMES, Mode, start_session_mode
from .path_rules import literal_prefix, path_matches
from .persist import save_allow_rule
from .rules import Rule, parse_rule, tool_rule_matches
from .sandboxing import grant_root, granted_roots, sandbox_policy
from .settings import Problem, SettingsFile, Source, parse_settings_text, read_settings
from .sources import CliPermissions, discover, split_tool_list

# The deciding half (the matchers, Bash rules, the decider) needs the tools
# and the analyzer; the loading half does not, and `shellgate run` reads
# settings in a cold process: those names load on first use (PEP 562).
_DECIDING = {
    "command_matches": "bash_rules",
    "DefaultDecider": "decider",
    "PermissionDecider": "decider",
    "RulesDecider": "decider",
    "path_rule_check": "match",
}


def __getattr__(name: str) -> object:
    module = _DECIDING.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    qualified = f"{__name__}.{module}"
    __import__(qualified)
    value = getattr(sys.modules[qualified], name)
    globals()[name] = value
    return value


TYPE_CHECKING = False
if TYPE_CHECKING:
    from .bash_rules import command_matches
    from .decider import DefaultDecider, PermissionDecider, RulesDecider
    from .match import path_rule_check


def load_permissions(project: str, home: str, cli: CliPermissions | None = None,
                     managed_dirs: Sequence[str] = MANAGED_DIRS) -> PermissionSettings:
    """Every source read and merged (never raises: mistakes are problems).
    The one settings loader of every verb: a file where sandboxed commands
    may write — the working directories, the command line's writable
    paths, and the writable roots the settings grant — is a repository's,
    whatever flag names it (the second pass: a `--settings` file granting
    write access to its own directory is judged with that grant)."""
    cli = cli or CliPermissions()
    merged = merge(discover(project, home, cli, managed_dirs))
    granted = granted_roots(merged, project, home)
    if not granted:
        return merged
    return merge(discover(project, home, cli, managed_dirs, granted))


__all__ = [
    "DENIALS_BEFORE_ADVICE",
    "MANAGED_DIRS",
    "MODE_NAMES",
    "CliPermissions",
    "DefaultDecider",
    "DenialTracker",
    "Mode",
    "PermissionDecider",
    "PermissionSettings",
    "Problem",
    "Rule",
    "RulesDecider",
    "SettingsFile",
    "Source",
    "command_matches",
    "discover",
    "grant_root",
    "granted_roots",
    "literal_prefix",
    "load_permissions",
    "merge",
    "parse_rule",
    "parse_settings_text",
    "path_matches",
    "path_rule_check",
    "read_settings",
    "sandbox_policy",
    "save_allow_rule",
    "split_tool_list",
    "start_session_mode",
    "tool_rule_matches",
]
