"""What a sandboxed process may do: the :class:`SandboxPolicy` and its parts.

All parts are frozen values, checked when made (a policy is a value,
built once from a profile plus settings, then handed to :func:`sandbox.run`).
Not pydantic: every `shellgate run` is a new process, and importing pydantic
and building these models cost it 80 ms of a 250 ms start; what comes from
outside as JSON (the settings files) is still read with pydantic, where it
is read. The parts keep the three pydantic calls their users make:
``model_validate``, ``model_copy(update=…)`` (checked again) and
``model_dump``. Paths may start
with ``~`` (the caller's home) and are resolved when the sandbox is built;
the working directory is added by ``run`` (``workspace`` says how).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping

from regexes import regex
from values import field, fields, replace, valueclass

from .errors import PolicyError
from .sizes import parse_memory, parse_size

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, Self

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
    return regex("|".join(fnmatch.translate(p) for p in patterns) or "(?!)")


_SECRET_RE = _patterns_re(SECRET_PATTERNS)
_patterns_re(DEFAULT_ENV_ALLOW)  # at import: from the build-time table (regexes/)

_DOMAIN_RE = regex(
    r"^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*"
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
)


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # a frozen value, made once in __post_init__


def _strings(value: object, what: str) -> tuple[str, ...]:
    """A list or tuple of strings, as a tuple (a lone string is refused: it
    would be read as its characters)."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise PolicyError(f"{what}: expected a list of strings, got {value!r}")


def _flag(value: object, what: str) -> bool:
    if isinstance(value, bool):
        return value
    raise PolicyError(f"{what}: expected true or false, got {value!r}")


def _choice(value: object, choices: tuple[str, ...], what: str) -> Any:
    if isinstance(value, str) and value in choices:
        return value
    raise PolicyError(f"{what}: expected one of {', '.join(choices)}, got {value!r}")


def _positive(value: object, what: str, *, kind: type = int, optional: bool = True) -> Any:
    """A number above 0 (``None`` too when ``optional``); an int for a float
    field, never a bool."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
        raise PolicyError(f"{what}: expected a {'number' if kind is float else 'whole number'}"
                          f"{' or none' if optional else ''}, got {value!r}")
    try:
        number = kind(value)
    except OverflowError:  # a huge integer for a float field
        raise PolicyError(f"{what}: {value!r} is too large") from None
    # NaN passes `<= 0` (from a review: `wall_timeout = nan` was taken, and
    # the run failed later, inside the sandbox's start)
    if not number > 0 or number == float("inf"):
        raise PolicyError(f"{what}: must be a finite number greater than 0, got {value!r}")
    return number


class _Frozen:
    """The pydantic calls the policy's users make, for frozen values."""

    @classmethod
    def model_validate(cls, data: object) -> Self:
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise PolicyError(f"{cls.__name__}: expected a table, got {data!r}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in data if k not in names)
        if unknown:
            raise PolicyError(f"{unknown[0]}: not a key of {cls.__name__} "
                              f"(one of {', '.join(sorted(names))})")
        return cls(**data)

    def model_copy(self, update: Mapping[str, object] | None = None) -> Self:
        return replace(self, **(update or {}))

    def model_dump(self, **_options: Any) -> dict[str, Any]:
        """The fields as plain values (pydantic's options, such as the audit
        log's ``mode="json"``, are accepted: the values are JSON's already)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.model_dump() if isinstance(value, _Frozen) else (
                dict(value) if isinstance(value, dict) else value)
        return out


@valueclass(slots=False)
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

    def __post_init__(self) -> None:
        _set(self, "workspace", _choice(self.workspace, ("write", "read"), "workspace"))
        _set(self, "private_tmp", _flag(self.private_tmp, "private_tmp"))
        _set(self, "git", _choice(self.git, ("write", "read-only"), "git"))
        for name in ("allow_write", "deny_write", "deny_read"):
            _set(self, name, _strings(getattr(self, name), name))


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


@valueclass(slots=False)
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

    def __post_init__(self) -> None:
        for name in ("allowed_domains", "denied_domains"):
            patterns = _strings(getattr(self, name), name)
            _set(self, name, tuple(dict.fromkeys(validate_domain_pattern(d) for d in patterns)))
        for name in ("allow_unix_sockets", "allow_private_addresses"):
            _set(self, name, _flag(getattr(self, name), name))

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


@valueclass(slots=False)
class EnvPolicy(_Frozen):
    """Which variables of the caller's environment pass in, and what is set."""

    allow: tuple[str, ...] = DEFAULT_ENV_ALLOW
    #: exact names that pass even if they look like secrets
    pass_through: tuple[str, ...] = ()
    set: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, "allow", _strings(self.allow, "allow"))
        _set(self, "pass_through", _strings(self.pass_through, "pass_through"))
        if not isinstance(self.set, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.set.items()):
            raise PolicyError(f"set: expected a table of strings, got {self.set!r}")
        _set(self, "set", dict(self.set))

    def filter(self, environ: dict[str, str]) -> dict[str, str]:
        secret, allowed = _SECRET_RE, _patterns_re(self.allow)
        out: dict[str, str] = {}
        for name, value in environ.items():
            if name in self.pass_through or (not secret.match(name) and allowed.match(name)):
                out[name] = value
        out.update(self.set)
        return out


@valueclass(slots=False)
class Limits(_Frozen):
    """Resource limits; ``None`` means no limit of that kind. Sizes accept
    ``512M``, ``2GiB`` or bytes (see :mod:`sandbox.sizes`)."""

    wall_timeout: float = 600.0
    cpu_seconds: int | None = None
    #: RLIMIT_AS: breaks the address-space reservations of V8, the JVM and
    #: sanitizers; ``memory`` is the limit to use
    address_space_bytes: int | None = None
    open_files: int | None = 4096
    file_size_bytes: int | None = None
    max_processes: int | None = 1024
    max_output_bytes: int = 1_048_576
    #: the whole process tree's memory (a cgroup; else RLIMIT_DATA per
    #: process): ``auto`` is half of RAM, ``off`` none, or a size / ``NN%``
    #: (also given as such text: read into bytes when the limits are made)
    memory: int | None = "auto"  # type: ignore[assignment]
    #: size caps of the sandbox's private tmpfs mounts (``2G`` too)
    tmp_size: int = 2 << 30
    shm_size: int = 256 << 20
    run_size: int = 16 << 20

    def __post_init__(self) -> None:
        _set(self, "wall_timeout", _positive(self.wall_timeout, "wall_timeout", kind=float,
                                             optional=False))
        for name in ("cpu_seconds", "address_space_bytes", "open_files", "file_size_bytes",
                     "max_processes"):
            _set(self, name, _positive(getattr(self, name), name))
        _set(self, "max_output_bytes", _positive(self.max_output_bytes, "max_output_bytes",
                                                 optional=False))
        _set(self, "memory", parse_memory(self.memory))
        for name in ("tmp_size", "shm_size", "run_size"):
            _set(self, name, parse_size(getattr(self, name), what=name))


@valueclass(slots=False)
class SandboxPolicy(_Frozen):
    """Everything the sandbox needs to know about one kind of run."""

    profile: str = "workspace-write"
    filesystem: FilesystemPolicy = field(default_factory=FilesystemPolicy)
    network: NetworkPolicy = field(default_factory=NetworkPolicy)
    env: EnvPolicy = field(default_factory=EnvPolicy)
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        if not isinstance(self.profile, str):
            raise PolicyError(f"profile: expected a name, got {self.profile!r}")
        for name, kind in (("filesystem", FilesystemPolicy), ("network", NetworkPolicy),
                           ("env", EnvPolicy), ("limits", Limits)):
            _set(self, name, kind.model_validate(getattr(self, name)))
