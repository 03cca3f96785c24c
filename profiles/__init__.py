"""Data shared by the analyzer and the sandbox: sandbox profiles (TOML), the
sensitive-path list, seccomp lists. No code lives here; readers use
:func:`importlib.resources.files` on this package."""

__all__: list[str] = []
