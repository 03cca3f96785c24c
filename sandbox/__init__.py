"""shellgate's sandbox: run a process under a :class:`SandboxPolicy`.

Knows nothing of tools, agents or the analyzer. Linux: bubblewrap + seccomp
(+ a host-side proxy for domain-allowlisted network). macOS: sandbox-exec
with a generated SBPL profile. ``none``: no isolation, explicit only.
"""

from __future__ import annotations

from .doctor import Probe, run_probes, sandbox_works
from .errors import PolicyError, SandboxError, SandboxUnavailable
from .plan import HOME_WRITE_DENY, MANDATORY_WRITE_DENY, FsPlan, build_plan
from .policy import (
    EnvPolicy,
    FilesystemPolicy,
    Limits,
    NetworkPolicy,
    SandboxPolicy,
    domain_matches,
    validate_domain_pattern,
)
from .profiles import (
    BUILTIN_PROFILES,
    DEFAULT_PROFILE,
    SandboxSettings,
    apply_settings,
    load_profile,
    parse_settings,
)
from .proxy import DomainProxy, ProxyEvent
from .run import Backend, BackgroundProcess, default_backend, run, sandbox_env, start_background
from .supervise import ExecResult, OutputCapture

__all__ = [
    "BUILTIN_PROFILES",
    "DEFAULT_PROFILE",
    "HOME_WRITE_DENY",
    "MANDATORY_WRITE_DENY",
    "Backend",
    "BackgroundProcess",
    "DomainProxy",
    "EnvPolicy",
    "ExecResult",
    "FilesystemPolicy",
    "FsPlan",
    "Limits",
    "NetworkPolicy",
    "OutputCapture",
    "PolicyError",
    "Probe",
    "ProxyEvent",
    "SandboxError",
    "SandboxPolicy",
    "SandboxSettings",
    "SandboxUnavailable",
    "apply_settings",
    "build_plan",
    "default_backend",
    "domain_matches",
    "load_profile",
    "parse_settings",
    "run",
    "run_probes",
    "sandbox_env",
    "sandbox_works",
    "start_background",
    "validate_domain_pattern",
]
