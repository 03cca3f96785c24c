"""What a sandboxed process may do: the :class:`SandboxPolicy` and its parts.

All models are frozen pydantic models: a policy is a value, built once from a
profile plus settings, then handed to :func:`sandbox.run`. Paths may start
with ``~`` (the caller's home) and are resolved when the sandbox is built;
the working directory is added by ``run`` (``workspace`` says how).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .errors import PolicyError
from .sizes import parse_memory, parse_size

#: Environment variables that pass into the sandbox unless removed. Anything
#: else is dropped; ``LC_*`` is a pattern.
DEFAULT_ENV_ALLOW: tuple[str, ...] = (
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "EDITOR",
    "PAGER",
    "COLUMNS",
    "LINES",
    "CI",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
)

#: Names that look like secrets never pass through a pattern, only when named
#: exactly in ``EnvPolicy.pass_through``.
SECRET_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET",
    "*_SECRET_*",
    "*SECRET_KEY*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_CREDENTIALS",
    "*_PRIVATE_KEY",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GH_*",
    "GITHUB_*",
    "NPM_TOKEN",
    "ANTHROPIC_*",
    "OPENAI_*",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "KUBECONFIG",
    "DOCKER_*",
    "VAULT_*",
)


@functools.lru_cache(maxsize=32)
def _patterns_re(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled regex for a tuple of shell-style patterns."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or "(?!)")


_SECRET_RE = _patterns_re(SECRET_PATTERNS)

_DOMAIN_RE = re.compile(
    r"^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*"
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FilesystemPolicy(_Frozen):
    """Writes are allowed only below ``allow_write`` (plus the workspace when
    ``workspace == "write"`` and a private ``/tmp``); ``deny_write`` always
    wins over ``allow_write``; ``deny_read`` hides paths entirely."""

    workspace: Literal["write", "read"] = "write"
    private_tmp: bool = True
    #: "read-only": every git directory in the writable roots is wholly
    #: read-only (no commits from the sandbox; nothing in .git can be planted)
    git: Literal["write", "read-only"] = "write"
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()


def validate_domain_pattern(pattern: str) -> str:
    """Normalize a domain pattern; refuse over-broad ones.

    ``example.com`` matches that host; ``*.example.com`` matches its
    subdomains. ``*``, ``*.com`` and anything without a dot after the
    wildcard would open the whole internet (or a whole TLD) and are refused.
    """
    p = pattern.strip().lower().rstrip(".")
    if not p or p == "*" or not _DOMAIN_RE.match(p):
        raise PolicyError(f"invalid domain pattern {pattern!r}")
    if p.startswith("*.") and "." not in p[2:]:
        raise PolicyError(f"domain pattern {pattern!r} is too broad (a whole top-level domain)")
    return p


def domain_matches(host: str, pattern: str) -> bool:
    host = host.lower().rstrip(".")
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


class NetworkPolicy(_Frozen):
    """``none`` unless ``allowed_domains`` is non-empty; then every connection
    goes through the host-side proxy, which checks ``denied_domains`` first,
    then ``allowed_domains``."""

    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    #: allow socket(AF_UNIX) inside the sandbox (host sockets stay reachable
    #: only if a writable or visible path exposes them)
    allow_unix_sockets: bool = False
    #: let allowed names resolve to private/LAN addresses (an internal
    #: registry); loopback and the host's own addresses stay refused
    allow_private_addresses: bool = False

    @field_validator("allowed_domains", "denied_domains")
    @classmethod
    def _check_domains(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(validate_domain_pattern(d) for d in value))

    @property
    def mode(self) -> Literal["none", "allowlist"]:
        return "allowlist" if self.allowed_domains else "none"

    def decide(self, host: str) -> tuple[bool, str]:
        """(allowed, why) for a connection to ``host``."""
        for d in self.denied_domains:
            if domain_matches(host, d):
                return False, f"denied by sandbox.network.deniedDomains entry {d!r}"
        for d in self.allowed_domains:
            if domain_matches(host, d):
                return True, f"allowed by sandbox.network.allowedDomains entry {d!r}"
        return False, "not in sandbox.network.allowedDomains"


class EnvPolicy(_Frozen):
    """Which variables of the caller's environment pass in, and what is set."""

    allow: tuple[str, ...] = DEFAULT_ENV_ALLOW
    #: exact names that pass even if they look like secrets
    pass_through: tuple[str, ...] = ()
    set: dict[str, str] = Field(default_factory=dict)

    def filter(self, environ: dict[str, str]) -> dict[str, str]:
        secret, allowed = _SECRET_RE, _patterns_re(self.allow)
        out: dict[str, str] = {}
        for name, value in environ.items():
            if name in self.pass_through or (not secret.match(name) and allowed.match(name)):
                out[name] = value
        out.update(self.set)
        return out


class Limits(_Frozen):
    """Resource limits; ``None`` means no limit of that kind. Sizes accept
    ``512M``, ``2GiB`` or bytes (see :mod:`sandbox.sizes`)."""

    wall_timeout: float = Field(default=600.0, gt=0)
    cpu_seconds: int | None = Field(default=None, gt=0)
    #: RLIMIT_AS: breaks the address-space reservations of V8, the JVM and
    #: sanitizers; ``memory`` is the limit to use
    address_space_bytes: int | None = Field(default=None, gt=0)
    open_files: int | None = Field(default=4096, gt=0)
    file_size_bytes: int | None = Field(default=None, gt=0)
    max_processes: int | None = Field(default=1024, gt=0)
    max_output_bytes: int = Field(default=1_048_576, gt=0)
    #: the whole process tree's memory (a cgroup; else RLIMIT_DATA per
    #: process): ``auto`` is half of RAM, ``off`` none, or a size / ``NN%``
    memory: int | None = Field(default="auto", validate_default=True)
    #: size caps of the sandbox's private tmpfs mounts
    tmp_size: int = Field(default=2 << 30)
    shm_size: int = Field(default=256 << 20)
    run_size: int = Field(default=16 << 20)

    @field_validator("memory", mode="before")
    @classmethod
    def _memory(cls, value: object) -> int | None:
        return parse_memory(value)

    @field_validator("tmp_size", "shm_size", "run_size", mode="before")
    @classmethod
    def _sizes(cls, value: object, info: ValidationInfo) -> int:
        return parse_size(value, what=str(info.field_name))


class SandboxPolicy(_Frozen):
    """Everything the sandbox needs to know about one kind of run."""

    profile: str = "workspace-write"
    filesystem: FilesystemPolicy = FilesystemPolicy()
    network: NetworkPolicy = NetworkPolicy()
    env: EnvPolicy = EnvPolicy()
    limits: Limits = Limits()
