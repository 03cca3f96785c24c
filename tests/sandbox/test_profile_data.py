"""The shipped data files, precompiled: what a new process reads instead of
parsing TOML must be exactly the TOML, and a stale copy must never count."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import profiles
from profiles import build, compiled

HERE = Path(profiles.__file__).resolve().parent
NAMES = sorted(p.name for p in HERE.glob("*.toml"))


def test_the_compiled_module_is_made_from_the_toml_files_as_they_are() -> None:
    # fails when a TOML file was edited and `python -m profiles.build` not run
    assert (HERE / "compiled.py").read_text("utf-8") == build.render()
    assert sorted(compiled.DATA) == NAMES


def _thawed(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


@pytest.mark.parametrize("name", NAMES)
def test_each_data_file_reads_as_its_toml(name: str) -> None:
    assert _thawed(profiles.read_toml(name)) == tomllib.loads((HERE / name).read_text("utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_no_reader_can_change_what_the_next_one_reads(name: str) -> None:
    """Attack (from a review): one caller clearing the shared sensitive-path
    list left every later sandbox of the process hiding nothing."""
    data = profiles.read_toml(name)
    key = next(iter(data))
    with pytest.raises(TypeError):
        data[key] = None  # type: ignore[index]
    for value in data.values():
        if isinstance(value, tuple):
            assert not hasattr(value, "clear")


def test_a_stale_compiled_entry_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "sensitive-paths.toml"
    monkeypatch.setitem(compiled.DATA, name, ("0" * 32, {"paths": []}))
    monkeypatch.setattr(profiles, "_PARSED", {})
    got = profiles.read_toml(name)
    assert got["paths"] and _thawed(got) == tomllib.loads((HERE / name).read_text("utf-8"))


@pytest.mark.parametrize("name", ["../pyproject.toml", ".hidden", "sub/x.toml"])
def test_only_the_packages_own_files_are_read(name: str) -> None:
    with pytest.raises(ValueError, match="not a data file"):
        profiles.read_toml(name)
