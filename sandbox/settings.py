"""Claude Code's ``sandbox`` settings key, as read from settings files.

What comes from outside as JSON is read with pydantic (camelCase names,
unknown keys ignored as Claude Code ignores them); imported only where a
settings file is read, never by a plain `shellgate run`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import PolicyError


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


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "value"
    return f"{where}: {err.get('msg', 'invalid')}"
