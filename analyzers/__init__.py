"""shellgate's analyzers: pure functions from text to facts.

No I/O, no subprocess, no clock. The only file ever read is static package
data (the sensitive-path list in ``profiles/``), once, at import. The public
face is :mod:`analyzers.bash`'s plus the error root.
"""

from __future__ import annotations

from .bash import (
    COMMAND_SUBSTITUTION_PATTERNS,
    MAX_COMMAND_CHARS,
    MAX_SUBCOMMANDS,
    MAX_SUGGESTED_RULES,
    SAFE_ENV_VARS,
    SENSITIVE_PATHS,
    ZSH_DANGEROUS_COMMANDS,
    Access,
    BashAnalysis,
    CheckId,
    Classification,
    ExitMeaning,
    Finding,
    HardLimit,
    OptionTable,
    ParseStatus,
    PathAccess,
    QuoteViews,
    SensitivePath,
    Subcommand,
    TreeRead,
    Verdict,
    WorkspaceFacts,
    analyze_bash,
    command_prefix,
    extract_quoted_content,
    interpret_exit_code,
    match_sensitive,
    option_tables,
    shell_join,
    tree_sitter_available,
)
from .errors import AnalyzerError, InvalidArgument

__all__ = [
    "COMMAND_SUBSTITUTION_PATTERNS",
    "MAX_COMMAND_CHARS",
    "MAX_SUBCOMMANDS",
    "MAX_SUGGESTED_RULES",
    "SAFE_ENV_VARS",
    "SENSITIVE_PATHS",
    "ZSH_DANGEROUS_COMMANDS",
    "Access",
    "AnalyzerError",
    "BashAnalysis",
    "CheckId",
    "Classification",
    "ExitMeaning",
    "Finding",
    "HardLimit",
    "InvalidArgument",
    "OptionTable",
    "ParseStatus",
    "PathAccess",
    "QuoteViews",
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
    "shell_join",
    "tree_sitter_available",
]
