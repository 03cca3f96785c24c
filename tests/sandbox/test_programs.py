"""sandbox/programs.py answers as shutil.which and tempfile.gettempdir do:
the bwrap, git and python3 a run starts, and the directory its private
state lives under, must be the ones the standard library would pick."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from sandbox.programs import temp_root, which


@pytest.fixture
def bins(tmp_path: Path) -> dict[str, Path]:
    """Directories holding, in turn: an executable `tool`, a non-executable
    `tool`, a directory named `tool`, a symlink to the executable, nothing."""
    made = {name: tmp_path / name for name in ("exe", "plain", "dir", "link", "empty")}
    for directory in made.values():
        directory.mkdir()
    (made["exe"] / "tool").write_text("#!/bin/sh\n")
    (made["exe"] / "tool").chmod(0o755)
    (made["plain"] / "tool").write_text("#!/bin/sh\n")
    (made["plain"] / "tool").chmod(0o644)
    (made["dir"] / "tool").mkdir()
    (made["link"] / "tool").symlink_to(made["exe"] / "tool")
    return made


PATHS = [
    ["exe"], ["plain", "exe"], ["dir", "exe"], ["empty", "link", "exe"], ["plain"],
    ["dir"], ["empty"], [], ["exe", "exe"], ["", "exe"], ["missing", "exe"],
]


@pytest.mark.parametrize("order", PATHS, ids=lambda order: ":".join(order) or "empty-PATH")
def test_which_finds_the_program_shutil_finds(bins: dict[str, Path], order: list[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [str(bins[name]) if name in bins else (name and str(bins["exe"].parent / name))
               for name in order]
    monkeypatch.setenv("PATH", os.pathsep.join(entries))
    monkeypatch.chdir(bins["empty"])
    assert which("tool") == shutil.which("tool")


@pytest.mark.parametrize("name", ["exe/tool", "plain/tool", "dir/tool", "link/tool",
                                  "empty/tool"])
def test_which_takes_a_name_with_a_directory_as_shutil_does(
        bins: dict[str, Path], name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(bins["exe"].parent)
    monkeypatch.setenv("PATH", str(bins["exe"]))
    assert which(name) == shutil.which(name)
    assert which(str(bins["exe"].parent / name)) == shutil.which(str(bins["exe"].parent / name))


def test_which_without_path_searches_the_system_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PATH", raising=False)
    assert which("sh") == shutil.which("sh") is not None


@pytest.mark.parametrize("env", [
    {}, {"TMPDIR": "{base}/t"}, {"TEMP": "{base}/t"}, {"TMP": "{base}/t"},
    {"TMPDIR": "{base}/missing", "TMP": "{base}/t"}, {"TMPDIR": "{base}/file"},
    {"TMPDIR": "{base}/readonly", "TEMP": "{base}/t"}, {"TMPDIR": "relative"},
    {"TMPDIR": ""},
])
def test_the_temporary_directory_is_tempfile_s(env: dict[str, str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "relative").mkdir()
    (tmp_path / "file").write_text("")
    (tmp_path / "readonly").mkdir(mode=0o555)
    monkeypatch.chdir(tmp_path)
    for variable in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in env.items():
        monkeypatch.setenv(variable, value.format(base=tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile's answer is cached
    try:
        assert temp_root() == tempfile.gettempdir()
    finally:
        tempfile.tempdir = None
