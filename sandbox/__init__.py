"""shellgate's sandbox: run a process under a :class:`SandboxPolicy`.

Knows nothing of tools, agents or the analyzer. Linux: bubblewrap + seccomp
(+ a host-side proxy for domain-allowlisted network). macOS: sandbox-exec
with a generated SBPL profile. ``none``: no isolation, explicit only.
"""

from __future__ import annotations

import sys

from .errors import PolicyError, RunFailed, RunInterrupted, SandboxError, SandboxUnavailable

# Everything else is loaded on first use (PEP 562): `shellgate check` reads a
# repository's configuration through `repository_programs` without paying
# for pydantic, psutil and the launcher (about 180 ms).
_LAZY = {
    "BackgroundProcess": "background",
    "start_background": "background",
    "HostFile": "hostrun",
    "host_files": "hostrun",
    "FsPlan": "plan",
    "PathRight": "plan",
    "build_plan": "plan",
    "empty_views": "plan",
    "EnvPolicy": "policy",
    "FilesystemPolicy": "policy",
    "Limits": "policy",
    "NetworkPolicy": "policy",
    "SandboxPolicy": "policy",
    "domain_matches": "policy",
    "validate_domain_pattern": "policy",
    "BUILTIN_PROFILES": "profiles",
    "DEFAULT_PROFILE": "profiles",
    "SandboxSettings": "settings",
    "apply_settings": "profiles",
    "load_profile": "profiles",
    "parse_settings": "settings",
    "Backend": "runner",
    "default_backend": "runner",
    "rehearse": "runner",
    "run": "runner",
    "sandbox_env": "runner",
    "ExecResult": "supervise",
    "TERMINAL_RESET": "report",
    "report_lines": "report",
    "shown": "report",
    "OutputCapture": "supervise",
    "DomainProxy": "proxy",
    "ProxyEvent": "proxy",
    "Probe": "doctor",
    "run_probes": "doctor",
    "sandbox_works": "doctor",
    "repository_programs": "gitprograms",
    "config_secrets": "gitsecrets",
    "file_secrets": "gitsecrets",
    "repositories_secrets": "gitsecrets",
    "may_include": "gitconfig",
    "repository_gitdirs": "gitconfig",
    "resolve_gitdir": "gitconfig",
    "runtime_dir": "guards",
    "config_dir": "owndirs",
    "own_dirs": "owndirs",
    "state_dir": "owndirs",
    "DotenvBelow": "dotenv_scan",
    "dotenv_below": "dotenv_scan",
    "stop_idle_threads": "linux.watch",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sandbox' has no attribute {name!r}")
    # __import__, not importlib: importlib's package imports warnings
    qualified = f"{__name__}.{module}"
    __import__(qualified)
    value = getattr(sys.modules[qualified], name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


TYPE_CHECKING = False
if TYPE_CHECKING:
    from .background import BackgroundProcess, start_background
    from .doctor import Probe, run_probes, sandbox_works
    from .dotenv_scan import DotenvBelow, dotenv_below
    from .gitconfig import may_include, repository_gitdirs, resolve_gitdir
    from .gitprograms import repository_programs
    from .gitsecrets import config_secrets, file_secrets, repositories_secrets
    from .guards import runtime_dir
    from .hostrun import HostFile, host_files
    from .linux.watch import stop_idle_threads
    from .owndirs import config_dir, own_dirs, state_dir
    from .plan import FsPlan, PathRight, build_plan, empty_views
    from .policy import (
        EnvPolicy,
        FilesystemPolicy,
        Limits,
        NetworkPolicy,
        SandboxPolicy,
        domain_matches,
        validate_domain_pattern,
    )
    from .profiles import BUILTIN_PROFILES, DEFAULT_PROFILE, apply_settings, load_profile
    from .proxy import DomainProxy, ProxyEvent
    from .report import TERMINAL_RESET, report_lines, shown
    from .runner import Backend, default_backend, rehearse, run, sandbox_env
    from .settings import SandboxSettings, parse_settings
    from .supervise import ExecResult, OutputCapture

__all__ = [
    "BUILTIN_PROFILES",
    "DEFAULT_PROFILE",
    "TERMINAL_RESET",
    "Backend",
    "BackgroundProcess",
    "DomainProxy",
    "DotenvBelow",
    "EnvPolicy",
    "ExecResult",
    "FilesystemPolicy",
    "FsPlan",
    "HostFile",
    "Limits",
    "NetworkPolicy",
    "OutputCapture",
    "PathRight",
    "PolicyError",
    "Probe",
    "ProxyEvent",
    "RunFailed",
    "RunInterrupted",
    "SandboxError",
    "SandboxPolicy",
    "SandboxSettings",
    "SandboxUnavailable",
    "apply_settings",
    "build_plan",
    "config_dir",
    "config_secrets",
    "default_backend",
    "domain_matches",
    "dotenv_below",
    "empty_views",
    "file_secrets",
    "host_files",
    "load_profile",
    "may_include",
    "own_dirs",
    "parse_settings",
    "rehearse",
    "report_lines",
    "repositories_secrets",
    "repository_gitdirs",
    "repository_programs",
    "resolve_gitdir",
    "run",
    "run_probes",
    "runtime_dir",
    "sandbox_env",
    "sandbox_works",
    "shown",
    "start_background",
    "state_dir",
    "stop_idle_threads",
    "validate_domain_pattern",
]
