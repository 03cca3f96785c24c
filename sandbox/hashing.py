"""The one digest the sandbox uses: BLAKE2b-256, from ``_blake2``.

Cache names, tripwire snapshots and state keys only need a collision-
resistant digest; ``hashlib.sha256`` gave that at the price of importing
``hashlib`` and OpenSSL's ``_hashlib`` (~3 ms of every cold ``shellgate
run``). BLAKE2b-256 is as strong, and its module is built into CPython.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover -- a Python built without it
    from hashlib import blake2b

__all__ = ["hex_digest"]


def hex_digest(data: bytes) -> str:
    """64 lowercase hex characters: the BLAKE2b-256 digest of ``data``."""
    return blake2b(data, digest_size=32).hexdigest()
