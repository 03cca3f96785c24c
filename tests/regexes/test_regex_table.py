"""The build-time regex table: every entry is what ``re`` itself compiles,
the table is current, and it is never used by another engine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import regexes
from regexes import build, table

ROOT = Path(__file__).resolve().parents[2]
SAME_ENGINE = regexes.engine_key() == table.ENGINE
ENTRIES = sorted(table.ENTRIES, key=repr)


def test_the_table_serves_the_interpreter_it_was_built_for_and_no_other() -> None:
    # The checkout's table is built for the release `make setup` installs;
    # under any other, every pattern is compiled by re.
    assert len(table.ENTRIES) > 150
    assert (table.ENTRIES if SAME_ENGINE else {}) == regexes._ENTRIES


@pytest.mark.parametrize("key", ENTRIES, ids=[repr(k)[:60] for k in ENTRIES])
def test_each_entry_is_the_code_re_assembles_for_its_pattern(key: tuple[str | bytes, int]) -> None:
    pattern, flags = key
    if SAME_ENGINE:  # (another release's table is not used: its code is not ours to hold)
        assert table.ENTRIES[key] == build.assemble(pattern, flags)
    ours, theirs = regexes.regex(pattern, flags), re.compile(pattern, flags)
    assert (ours.pattern, ours.flags, ours.groups, ours.groupindex) == (
        theirs.pattern, theirs.flags, theirs.groups, theirs.groupindex)
    probe = pattern if isinstance(pattern, str) else pattern.decode("latin-1")
    for subject in (probe, probe * 2, probe[::-1], "", " -- ", "a\nb"):
        data = subject if isinstance(pattern, str) else subject.encode("latin-1")
        assert [m.span() for m in ours.finditer(data)] == [  # type: ignore[arg-type]
            m.span() for m in theirs.finditer(data)]  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_the_table_holds_every_pattern_the_packages_compile_at_import(seed: str) -> None:
    # Under two hash seeds: a pattern whose text depends on a set's order
    # would be a different key in each process (and miss the table).
    done = subprocess.run([sys.executable, "-m", "regexes.build", "--check"], cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_pattern_missing_from_the_table_is_compiled_by_re() -> None:
    fresh = r"shellgate-(?P<word>\w+)-not-in-any-table"
    assert (fresh, 0) not in table.ENTRIES
    found = regexes.regex(fresh).fullmatch("shellgate-x1-not-in-any-table")
    assert found is not None and found["word"] == "x1"


def test_a_table_built_for_another_engine_is_never_used(
        monkeypatch: pytest.MonkeyPatch) -> None:
    key = ENTRIES[0]
    other = (*table.ENGINE[:2], -1, *table.ENGINE[3:])
    monkeypatch.setattr(table, "ENGINE", other)
    assert regexes._entries() == {}
    monkeypatch.setattr(table, "ENGINE", regexes.engine_key())
    assert key in regexes._entries()


def test_a_malformed_entry_is_refused_by_the_engine_not_run() -> None:
    # What makes a corrupted table safe to load: _sre validates the code it
    # is given (a jump past the end here) instead of executing it.
    import _sre

    final_flags, code, groups, groupindex, indexgroup = table.ENTRIES[ENTRIES[0]]
    broken = list(code)
    broken[1] = 10_000  # the INFO block's skip, pointing outside the code
    with pytest.raises(RuntimeError):
        _sre.compile(ENTRIES[0][0], final_flags, broken, groups, groupindex, indexgroup)


def _other_releases_of_this_minor() -> list[str]:
    """Installed interpreters of the table's major.minor but another patch
    release (the unprivileged leg's system python3, here)."""
    found = []
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.path.exists(candidate):
            continue
        done = subprocess.run([candidate, "-c", "import sys; print(tuple(sys.version_info[:3]))"],
                              capture_output=True, text=True, check=False, timeout=30)
        release = done.stdout.strip()
        if release.startswith(str(sys.version_info[:2])[:-1]) and release != str(
                tuple(sys.version_info[:3])):
            found.append(os.path.realpath(candidate))
    return sorted(set(found))


@pytest.mark.parametrize("python", _other_releases_of_this_minor())
def test_another_patch_release_compiles_every_pattern_itself(python: str) -> None:
    # Patch releases assemble some patterns differently (3.11.2 and 3.11.7
    # give `(?:ab){2147483647}c` different minimum widths): the release is
    # part of the key, and another one never reads the table.
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import regexes\n"
             "p = regexes.regex(r'(?P<w>x+)y')\n"
             "print(len(regexes._ENTRIES), p.fullmatch('xxy')['w'])")
    done = subprocess.run([python, "-c", probe, str(ROOT)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "xx"]


def test_an_entry_of_the_wrong_shape_is_compiled_by_re(monkeypatch: pytest.MonkeyPatch) -> None:
    key = ENTRIES[0]
    final_flags, code, groups, groupindex, indexgroup = table.ENTRIES[key]
    broken = {key: (final_flags, code[:-2], groups, groupindex, indexgroup),
              (r"a(b)c", 0): (32, b"\1\2\3", 1, {}, (None, None)),
              (r"ab+", 0): ("not", "an", "entry")}
    monkeypatch.setattr(regexes, "_ENTRIES", broken)
    for pattern, flags in broken:
        ours = regexes.regex(pattern, flags)
        assert (ours.pattern, ours.groups) == (pattern, re.compile(pattern, flags).groups)
    assert regexes.regex(r"ab+").fullmatch("abbb")


def test_a_table_that_cannot_load_leaves_every_pattern_to_re(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    monkeypatch.setattr(regexes, "table", types.ModuleType("regexes.table"))  # no ENGINE
    assert regexes._entries() == {}
    monkeypatch.delattr(regexes, "table")
    monkeypatch.setitem(sys.modules, "regexes.table", None)  # type: ignore[arg-type]
    assert regexes._entries() == {}  # not importable
    monkeypatch.undo()
    assert regexes._entries() == (table.ENTRIES if SAME_ENGINE else {})


def test_flags_of_the_wrong_type_are_refused_as_re_refuses_them() -> None:
    with pytest.raises(TypeError):
        re.compile("a", "2")  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        regexes.regex("a", "2")  # type: ignore[arg-type]
    assert regexes.regex("a", re.IGNORECASE).flags == re.compile("a", re.IGNORECASE).flags


@pytest.mark.parametrize("name", ["ASCII", "DOTALL", "IGNORECASE", "MULTILINE", "VERBOSE"])
def test_the_flags_named_without_re_are_re_s_own(name: str) -> None:
    assert getattr(regexes, name) == getattr(re, name).value


@pytest.mark.parametrize(("name", "word"), [("Straße", "straße"), ("x.y", "X.Y")])
def test_a_pattern_compiled_with_a_named_flag_behaves_as_with_re_s(name: str, word: str) -> None:
    ours = regexes.regex(re.escape(name), regexes.IGNORECASE)
    assert bool(ours.fullmatch(word)) == bool(re.compile(re.escape(name), re.I).fullmatch(word))


@pytest.mark.parametrize(("name", "pattern", "matches"), [
    ("README.md", "*.md", True), (".env", "*", True), ("a/b", "a*", True),
    ("x.py", "*.[ch]", False), ("x.c", "*.[ch]", True), ("[x]", "[[]x]", True)])
def test_fnmatchcase_is_fnmatch_s(name: str, pattern: str, matches: bool) -> None:
    import fnmatch

    assert regexes.fnmatchcase(name, pattern) is matches is fnmatch.fnmatchcase(name, pattern)
