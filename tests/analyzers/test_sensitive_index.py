"""The sensitive list's component index.

`match_sensitive` asks only the entries a path's components lead to in a
trie, and compiles only their regexes. The index is allowed to offer too
many entries, never too few: an entry it misses is a secret read as an
ordinary file. So every path here is checked against *every* entry's own
regex, and the index must have offered each entry that matched. The
relative and ``**`` paths are the ones an earlier index lost (``**`` took
one component and stopped, so ``a/b/.env`` under ``**/.env`` was missed).
"""

from __future__ import annotations

import itertools
import random
import re

import pytest

from analyzers import SENSITIVE_PATHS, match_sensitive
from analyzers.bash.sensitive import _glob_overlaps, _literals, _pattern_rx, _table

HOMES = ["/home/user", "/root", "~", "/"]


def _components() -> list[str]:
    out = {"", ".", "..", "x", "home", "user", "proc", "1", "self", "task", "etc", "*", "**"}
    for entry in SENSITIVE_PATHS:
        for part in entry.pattern.split("/"):
            out |= {part, part.replace("*", "x"), part.replace("*", ""), part + "x"}
        out |= set(entry.exceptions)
    return sorted(out)


def _paths(count: int) -> list[str]:
    rnd = random.Random(7)
    comps = _components()
    starts = ["/", "~/", "", "/home/user/", "/root/", "/proc/", "./"]
    paths = {
        rnd.choice(starts) + "/".join(rnd.choice(comps) for _ in range(rnd.randint(1, 7)))
        for _ in range(count)
    }
    return sorted(paths)


def _entry_regexes(home: str) -> list[re.Pattern[str]]:
    return [re.compile(_pattern_rx(e.parts), re.DOTALL) for e in _table(home).entries]


@pytest.mark.parametrize("home", HOMES)
def test_the_index_offers_every_entry_whose_regex_matches(home: str) -> None:
    table, regexes = _table(home), _entry_regexes(home)
    missed = []
    for path in _paths(3000):
        offered = set(table.candidates(path))
        for index, rx in enumerate(regexes):
            if rx.match(path) and index not in offered:
                missed.append((path, table.entries[index].entry.pattern))
    assert missed == []


@pytest.mark.parametrize("home", HOMES)
def test_the_index_answers_what_the_first_matching_regex_answers(home: str) -> None:
    regexes = _entry_regexes(home)
    entries = _table(home).entries
    for path in _paths(1500):
        name = path.rsplit("/", 1)[-1]
        expected = next(
            (
                e.entry
                for e, rx in zip(entries, regexes, strict=True)
                if not (e.entry.exceptions and name in e.entry.exceptions) and rx.match(path)
            ),
            None,
        )
        assert match_sensitive.__wrapped__(path, home) == expected, path


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("*/cachex/.env", "**/.env"),
        ("a/b/c/.env", "**/.env"),
        (".env", "**/.env"),
        ("a/.env/b", "**/.env"),
        ("deep/er/.env.prod", "**/.env.*"),
        ("/srv/a/b/.env.x/Keychains/.env", "**/.env"),
        ("a/b/.env.example", None),
    ],
)
def test_a_dotenv_file_is_found_at_any_depth_of_a_relative_path(
    path: str, pattern: str | None
) -> None:
    entry = match_sensitive.__wrapped__(path, "/home/user")
    assert (entry.pattern if entry else None) == pattern


def test_an_analysis_that_names_no_secret_compiles_no_entry_regex() -> None:
    """The point of the index: a cold `cat README` must not compile the
    whole list (it was ~50 ms of every cold check)."""
    table = type(_table("/nonexistent-home"))("/nonexistent-home")
    for path in ("/nonexistent-home/project/README", "/usr/share/doc/x", "src/main.py"):
        assert not any(table.matches(i, path) for i in table.candidates(path))
    assert len(table._rx) <= 2, list(itertools.islice(table._rx, 5))


def _glob_paths(count: int) -> list[str]:
    rnd = random.Random(11)
    comps = [*_components(), "u*", "?", ".s*", "id*", "[a-z]*", ".*", "*.py", "sha*"]
    out = set()
    for _ in range(count):
        home = rnd.choice(["/home/user", "/root"])
        entry = rnd.choice(SENSITIVE_PATHS).pattern.replace("~", home)
        parts = [p if rnd.random() > 0.3 else rnd.choice(comps) for p in entry.split("/")]
        out.add("/".join(parts + [rnd.choice(comps) for _ in range(rnd.randint(0, 2))]))
        out.add("/" + "/".join(rnd.choice(comps) for _ in range(rnd.randint(1, 6))))
    return sorted(p for p in out if any(c in p for c in "*?["))


@pytest.mark.parametrize("home", ["/home/user", "~"])
def test_a_glob_is_asked_of_every_entry_it_could_overlap(home: str) -> None:
    """A glob path is laid over each entry (`cat ~/.s*/id_rsa`); entries
    whose fixed components differ from the glob's are left out before the
    search. Every entry the search says overlaps must be among those kept."""
    table = _table(home)
    missed = []
    for path in _glob_paths(2500):
        split = path.split("/")
        kept = set(table.sharing(_literals([p if "*" not in p and "?" not in p and "[" not in p
                                             else "*" for p in split]), set()))
        missed += [(path, e.entry.pattern) for index, e in enumerate(table.entries)
                   if index not in kept and _glob_overlaps(split, e.parts)]
    assert missed == []
