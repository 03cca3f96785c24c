"""Named sandbox profiles and Claude Code's ``sandbox`` settings on top.

A profile is a TOML file: the built-in ones live in ``profiles/``
(``read-only``, ``workspace-write`` — the default — and ``networked``); any
other path to a TOML file with the same tables works too. Settings in Claude
Code's shape (the ``sandbox`` key of settings.json) merge on top: lists add
to the profile's lists, they never remove from them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import profiles as profile_data

from .errors import PolicyError
from .policy import EnvPolicy, FilesystemPolicy, Limits, NetworkPolicy, SandboxPolicy

BUILTIN_PROFILES = ("read-only", "workspace-write", "networked")
DEFAULT_PROFILE = "workspace-write"


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class FilesystemSettings(_Settings):
    allow_write: tuple[str, ...] = Field(default=(), alias="allowWrite")
    deny_write: tuple[str, ...] = Field(default=(), alias="denyWrite")
    deny_read: tuple[str, ...] = Field(default=(), alias="denyRead")
    #: shellgate's own: globs of the files the gateway's file tools may
    #: write a secret into (a credentials file kept out of version
    #: control); commands are not scanned, so the sandbox only carries it
    allow_secret_writes: tuple[str, ...] = Field(default=(), alias="allowSecretWrites")


class NetworkSettings(_Settings):
    allowed_domains: tuple[str, ...] = Field(default=(), alias="allowedDomains")
    denied_domains: tuple[str, ...] = Field(default=(), alias="deniedDomains")
    allow_unix_sockets: bool | tuple[str, ...] = Field(default=False, alias="allowUnixSockets")


class LimitsSettings(_Settings):
    """shellgate's own ``sandbox.limits`` key. Settings can be a project's
    file (``.claude/settings.json`` in a cloned repository), so they only
    ever lower a limit: a repository cannot lift the host's protection."""

    memory: str | int | None = None
    tmp_size: str | int | None = Field(default=None, alias="tmpSize")
    shm_size: str | int | None = Field(default=None, alias="shmSize")
    run_size: str | int | None = Field(default=None, alias="runSize")
    max_processes: int | None = Field(default=None, alias="maxProcesses", gt=0)


class SandboxSettings(_Settings):
    """Claude Code's ``sandbox`` settings key (camelCase names accepted).

    ``excluded_commands`` and ``allow_unsandboxed_commands`` are decisions
    for the caller (which commands may run outside the sandbox); the sandbox
    only carries them.
    """

    enabled: bool | None = None
    auto_allow_bash_if_sandboxed: bool | None = Field(
        default=None, alias="autoAllowBashIfSandboxed"
    )
    excluded_commands: tuple[str, ...] = Field(default=(), alias="excludedCommands")
    allow_unsandboxed_commands: bool | None = Field(default=None, alias="allowUnsandboxedCommands")
    filesystem: FilesystemSettings = FilesystemSettings()
    network: NetworkSettings = NetworkSettings()
    limits: LimitsSettings = LimitsSettings()


def parse_settings(data: object) -> SandboxSettings:
    """Validate a ``sandbox`` settings value; a one-line PolicyError if bad."""
    try:
        return SandboxSettings.model_validate(data if data is not None else {})
    except ValidationError as exc:
        raise PolicyError(f"invalid sandbox settings: {_first_error(exc)}") from None


def load_profile(name_or_path: str | None = None) -> SandboxPolicy:
    """Load a built-in profile by name, or a profile TOML file by path."""
    name = name_or_path or DEFAULT_PROFILE
    if name in BUILTIN_PROFILES:
        data = profile_data.read_toml(f"{name}.toml")
    else:
        path = Path(name).expanduser()
        if not path.is_file():
            raise PolicyError(
                f"unknown profile {name!r}: use one of {', '.join(BUILTIN_PROFILES)} or a "
                "path to a TOML file"
            )
        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise PolicyError(f"cannot read profile {str(path)!r}: {exc}") from None
        name = path.stem
    return _from_mapping(name, data)


def _from_mapping(name: str, data: dict[str, Any]) -> SandboxPolicy:
    try:
        return SandboxPolicy(
            profile=name,
            filesystem=FilesystemPolicy(**data.get("filesystem", {})),
            network=NetworkPolicy(**data.get("network", {})),
            env=EnvPolicy(**data.get("env", {})),
            limits=Limits(**data.get("limits", {})),
        )
    except (ValidationError, TypeError) as exc:
        msg = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise PolicyError(f"invalid profile {name!r}: {msg}") from None


def apply_settings(policy: SandboxPolicy, settings: SandboxSettings) -> SandboxPolicy:
    """The policy with the settings' lists added (never removed)."""
    fs, net = settings.filesystem, settings.network
    unix = bool(net.allow_unix_sockets)
    try:
        return policy.model_copy(
            update={
                "limits": _lower(policy.limits, settings.limits),
                "filesystem": policy.filesystem.model_copy(
                    update={
                        "allow_write": policy.filesystem.allow_write + fs.allow_write,
                        "deny_write": policy.filesystem.deny_write + fs.deny_write,
                        "deny_read": policy.filesystem.deny_read + fs.deny_read,
                    }
                ),
                "network": NetworkPolicy(
                    allowed_domains=policy.network.allowed_domains + net.allowed_domains,
                    denied_domains=policy.network.denied_domains + net.denied_domains,
                    allow_unix_sockets=policy.network.allow_unix_sockets or unix,
                    allow_private_addresses=policy.network.allow_private_addresses,
                ),
            }
        )
    except ValidationError as exc:
        raise PolicyError(f"invalid sandbox settings: {_first_error(exc)}") from None


def _lower(limits: Limits, wanted: LimitsSettings) -> Limits:
    """``limits`` with each value the settings give taken where it is lower."""
    given = {k: v for k, v in wanted.model_dump().items() if v is not None}
    if not given:
        return limits
    asked = Limits.model_validate({**limits.model_dump(), **given})
    current = limits.model_dump()
    lowered = {}
    for key in given:
        old, new = current[key], getattr(asked, key)
        if new is not None and (old is None or new < old):
            lowered[key] = new
    return limits.model_copy(update=lowered)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "value"
    return f"{where}: {err.get('msg', 'invalid')}"
