"""Stage 4: settings from every source, Claude Code's rules and modes, and
the decider that puts them over the tool's own answer.

``load_permissions`` reads the sources (policy, flag, cliArg, local,
project, user) into one :class:`PermissionSettings`; :class:`RulesDecider`
decides each call with them (``DefaultDecider`` is the same chain with no
settings: read-only allows, anything else asks); an ``ask`` goes to the
session's approver — or, with nobody to answer, is denied."""

from __future__ import annotations

from collections.abc import Sequence

from .bash_rules import command_matches
from .decider import DefaultDecider, PermissionDecider, RulesDecider
from .denials import DENIALS_BEFORE_ADVICE, DenialTracker
from .match import path_rule_check
from .merge import PermissionSettings, merge
from .modes import MODE_NAMES, Mode, start_session_mode
from .path_rules import literal_prefix, path_matches
from .persist import save_allow_rule
from .rules import Rule, parse_rule
from .settings import Problem, SettingsFile, Source, parse_settings_text, read_settings
from .sources import MANAGED_DIRS, CliPermissions, discover, split_tool_list


def load_permissions(project: str, home: str, cli: CliPermissions | None = None,
                     managed_dirs: Sequence[str] = MANAGED_DIRS) -> PermissionSettings:
    """Every source read and merged (never raises: mistakes are problems)."""
    return merge(discover(project, home, cli or CliPermissions(), managed_dirs))


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
    "literal_prefix",
    "load_permissions",
    "merge",
    "parse_rule",
    "parse_settings_text",
    "path_matches",
    "path_rule_check",
    "read_settings",
    "save_allow_rule",
    "split_tool_list",
    "start_session_mode",
]
