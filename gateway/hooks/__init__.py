"""Hooks: the user's programs the pipeline runs before and after a tool
(Claude Code's ``hooks`` settings key and protocol), and the seam through
which their answers reach the decider.

    config    the settings key: events, matchers, commands, timeouts
    runner    one hook on the host: JSON in, bounded output, tree killed
              at its timeout
    outcome   exit codes and JSON fields; several hooks combined
    engine    ConfiguredHooks: a session's hooks, run in parallel, audited
    protect   the files hooks run, kept from sandboxed commands and checked
              before each run
    trust     which workspaces may run their own repository's hooks
"""

from __future__ import annotations

from .config import EVENTS, SESSION_EVENTS, TOOL_EVENTS, HookCommand, matcher_matches, parse_hooks
from .engine import ConfiguredHooks
from .outcome import Combined, HookVerdict, combine, interpret
from .protect import Guard, Watch, guard_hooks, hook_files, named_paths
from .runner import HookRun, hook_env, run_hook
from .trust import TrustError, is_trusted, trust, trust_file, trusted_dirs
from .types import NO_OPINION, HookOutcome, Hooks, NoHooks, PostHookOutcome

__all__ = [
    "EVENTS",
    "NO_OPINION",
    "SESSION_EVENTS",
    "TOOL_EVENTS",
    "Combined",
    "ConfiguredHooks",
    "Guard",
    "HookCommand",
    "HookOutcome",
    "HookRun",
    "HookVerdict",
    "Hooks",
    "NoHooks",
    "PostHookOutcome",
    "TrustError",
    "Watch",
    "combine",
    "guard_hooks",
    "hook_env",
    "hook_files",
    "interpret",
    "is_trusted",
    "matcher_matches",
    "named_paths",
    "parse_hooks",
    "run_hook",
    "trust",
    "trust_file",
    "trusted_dirs",
]
