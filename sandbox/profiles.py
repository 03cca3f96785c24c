"""Named sandbox profiles and Claude Code's ``sandbox`` settings on top.

A profile is a TOML file: the built-in ones live in ``profiles/``
(``read-only``, ``workspace-write`` — the default — and ``networked``); any
other path to a TOML file with the same tables works too. Settings in Claude
Code's shape (the ``sandbox`` key of settings.json) merge on top: lists add
to the profile's lists, they never remove from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import profiles as profile_data

from .errors import PolicyError
from .policy import EnvPolicy, FilesystemPolicy, Limits, NetworkPolicy, SandboxPolicy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .settings import LimitsSettings, SandboxSettings

BUILTIN_PROFILES = ("read-only", "workspace-write", "networked")
DEFAULT_PROFILE = "workspace-write"


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
        import tomllib  # noqa: PLC0415 -- a user's profile; the built-in ones are precompiled

        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise PolicyError(f"cannot read profile {str(path)!r}: {exc}") from None
        name = path.stem
    return _from_mapping(name, data)


def _from_mapping(name: str, data: Mapping[str, Any]) -> SandboxPolicy:
    try:
        return SandboxPolicy(
            profile=name,
            filesystem=FilesystemPolicy.model_validate(data.get("filesystem", {})),
            network=NetworkPolicy.model_validate(data.get("network", {})),
            env=EnvPolicy.model_validate(data.get("env", {})),
            limits=Limits.model_validate(data.get("limits", {})),
        )
    except (PolicyError, TypeError) as exc:
        raise PolicyError(f"invalid profile {name!r}: {exc}") from None


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
    except PolicyError as exc:
        raise PolicyError(f"invalid sandbox settings: {exc}") from None


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
