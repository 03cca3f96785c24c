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


def test_the_table_is_built_for_this_interpreter() -> None:
    # The checkout's table serves the interpreter `make setup` installs; on
    # another one every pattern is compiled by re (the next test's subject).
    assert SAME_ENGINE, (table.ENGINE, regexes.engine_key())
    assert len(table.ENTRIES) > 150


@pytest.mark.parametrize("key", ENTRIES, ids=[repr(k)[:60] for k in ENTRIES])
def test_each_entry_is_the_code_re_assembles_for_its_pattern(key: tuple[str | bytes, int]) -> None:
    pattern, flags = key
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


def _interpreters_of_this_minor() -> list[str]:
    """Other installed interpreters the table also serves (same major.minor:
    the engine's code format is fixed within one, _sre.MAGIC says so)."""
    found = []
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        if not os.path.exists(candidate):
            continue
        done = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                              capture_output=True, text=True, check=False, timeout=30)
        if done.stdout.strip() == str(sys.version_info[:2]):
            found.append(os.path.realpath(candidate))
    return sorted(set(found))


@pytest.mark.parametrize("python", _interpreters_of_this_minor())
def test_every_interpreter_the_table_serves_assembles_the_same_code(python: str) -> None:
    # The key is major.minor, not the patch release: a 3.11.2 reads the
    # table a 3.11.7 built. Held here for each one installed (the
    # unprivileged leg's system python3 among them).
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import regexes\n"
             "from regexes import build, table\n"
             "assert table.ENGINE == regexes.engine_key(), 'engine'\n"
             "bad = [k for k, e in table.ENTRIES.items() if build.assemble(*k) != e]\n"
             "print(len(table.ENTRIES), bad)")
    done = subprocess.run([python, "-c", probe, str(ROOT)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 1)[1].strip() == "[]", done.stdout
