"""Hypothesis's example database for `shellgate fuzz --database`.

A directory (one machine, or many over a shared filesystem) or Redis
(``redis://host:port/db``: a fleet). Failing examples are saved under a key
per property, the same on every machine, so each machine replays what any
of them found. Without ``--database`` the database is a directory in the
user's cache (``$XDG_CACHE_HOME/shellgate/fuzz``).
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from .errors import FuzzError


def default_directory() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "shellgate" / "fuzz"


def open_database(spec: str | None) -> ExampleDatabase:
    """The database ``spec`` names (checked: reachable, writable)."""
    if spec and spec.startswith(("redis://", "rediss://", "unix://")):
        return _redis(spec)
    path = Path(spec) if spec else default_directory()
    try:
        path.mkdir(parents=True, exist_ok=True)
        # a probe of this process's own: workers open the database at once
        probe = path / f".shellgate-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise FuzzError(f"cannot use {path} as the example database: "
                        f"{exc.strerror or exc}") from None
    return DirectoryBasedExampleDatabase(str(path))


def _redis(url: str) -> ExampleDatabase:
    try:
        # the fleet extra: imported only when a Redis database is asked for
        import redis  # noqa: PLC0415
        from hypothesis.extra.redis import RedisExampleDatabase  # noqa: PLC0415
    except ImportError:
        raise FuzzError("a Redis database needs the redis package: "
                        "pip install 'shellgate[fleet]'") from None
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=10)
        client.ping()
    except (redis.RedisError, ValueError, OSError) as exc:
        raise FuzzError(f"cannot reach the Redis database {url}: "
                        f"{' '.join(str(exc).split())[:200]}") from None
    return RedisExampleDatabase(client, key_prefix=b"shellgate-fuzz:")
