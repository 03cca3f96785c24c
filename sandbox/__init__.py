"""shellgate's sandbox: run a process under a :class:`SandboxPolicy`.

Knows nothing of tools, agents or the analyzer. Linux: bubblewrap + seccomp
(+ a host-side proxy for domain-allowlisted network). macOS: sandbox-exec
with a generated SBPL profile. ``none``: no isolation, explicit only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .background import BackgroundProcess, start_background
from .errors import PolicyError, SandboxError, SandboxUnavailable
from .hostrun import HostFile, host_files
from .plan import FsPlan, build_plan
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
from .run import Backend, default_backend, run, sandbox_env
from .supervise import ExecResult, OutputCapture

# The proxy (asyncio) and the doctor are loaded on first use (PEP 562):
# `shellgate run` starts faster without them.
_LAZY = {
    "DomainProxy": "proxy",
    "ProxyEvent": "proxy",
    "Probe": "doctor",
    "repository_programs": "repos",
    "run_probes": "doctor",
    "sandbox_works": "doctor",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sandbox' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


if TYPE_CHECKING:
    from .doctor import Probe, run_probes, sandbox_works
    from .proxy import DomainProxy, ProxyEvent
    from .repos import repository_programs

__all__ = [
    "BUILTIN_PROFILES",
    "DEFAULT_PROFILE",
    "Backend",
    "BackgroundProcess",
    "DomainProxy",
    "EnvPolicy",
    "ExecResult",
    "FilesystemPolicy",
    "FsPlan",
    "HostFile",
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
    "host_files",
    "load_profile",
    "parse_settings",
    "repository_programs",
    "run",
    "run_probes",
    "sandbox_env",
    "sandbox_works",
    "start_background",
    "validate_domain_pattern",
]
