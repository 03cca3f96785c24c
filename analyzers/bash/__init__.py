"""Static analysis of bash command lines.

Public face: :func:`analyze_bash` and the values it returns. Everything here
is pure: text in, facts out — no I/O, no subprocess, no clock.
"""

from __future__ import annotations

from .analysis import (
    GIT_CONFIG_NAMES,
    MAX_COMMAND_CHARS,
    MAX_SUBCOMMANDS,
    analyze_bash,
    reads_with_git,
)
from .checks import COMMAND_SUBSTITUTION_PATTERNS, ZSH_DANGEROUS_COMMANDS, CheckId, Finding
from .classify import Classification
from .commands import OptionTable, option_tables
from .destructive import HardLimit
from .ir import ParseStatus
from .memo import Results
from .parser import tree_sitter_available
from .paths import Access, PathAccess
from .prefixes import MAX_SUGGESTED_RULES, command_prefix
from .quoting import QuoteViews, extract_quoted_content, shell_join
from .result import BashAnalysis, Subcommand, Verdict
from .semantics import ExitMeaning, interpret_exit_code
from .sensitive import SENSITIVE_PATHS, SensitivePath, match_sensitive
from .workspace import UNRESOLVED, TreeRead, WorkspaceFacts
from .wrappers import SAFE_ENV_VARS

__all__ = [
    "COMMAND_SUBSTITUTION_PATTERNS",
    "GIT_CONFIG_NAMES",
    "MAX_COMMAND_CHARS",
    "MAX_SUBCOMMANDS",
    "MAX_SUGGESTED_RULES",
    "SAFE_ENV_VARS",
    "SENSITIVE_PATHS",
    "UNRESOLVED",
    "ZSH_DANGEROUS_COMMANDS",
    "Access",
    "BashAnalysis",
    "CheckId",
    "Classification",
    "ExitMeaning",
    "Finding",
    "HardLimit",
    "OptionTable",
    "ParseStatus",
    "PathAccess",
    "QuoteViews",
    "Results",
    "SensitivePath",
    "Subcommand",
    "TreeRead",
    "Verdict",
    "WorkspaceFacts",
    "analyze_bash",
    "command_prefix",
    "extract_quoted_content",
    "interpret_exit_code",
    "match_sensitive",
    "option_tables",
    "reads_with_git",
    "shell_join",
    "tree_sitter_available",
]
