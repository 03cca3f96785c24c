"""Runs processes under a sandbox policy (filled in by the sandbox layer)."""

__all__: list[str] = []
