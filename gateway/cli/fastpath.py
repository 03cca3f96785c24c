"""The common forms of ``shellgate check``, read without argparse.

``shellgate check 'git log'`` is the verb an agent's hook or a script runs
most, as a new process each time, and argparse is ~5 ms of it: its import,
gettext's locale lookups, the parser's build and its own regexes. The forms
read here are ``check [--json] COMMAND...`` whose first word of COMMAND is
not an option; anything else (other options, ``--``, ``-``, help, a
mistake) goes to the real parser, which stays the one definition of the
command line (a word argparse would refuse, an ambiguous abbreviation of
two options, goes there too). ``tests/gateway/test_cli_fastpath.py`` holds every form read
here to the namespace argparse makes of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

__all__ = ["fast_check"]

#: check's long options (parser.py): argparse refuses a word anywhere in the
#: line that abbreviates two of them (`--js`), even inside COMMAND
_OPTIONS = ("--cwd", "--add-dir", "--json", "--jsonl", "--help")


def _ambiguous(word: str) -> bool:
    stem = word.partition("=")[0]
    return (word.startswith("--") and stem not in _OPTIONS
            and sum(option.startswith(stem) for option in _OPTIONS) > 1)


def fast_check(words: Sequence[str]) -> SimpleNamespace | None:
    """The parsed arguments of a plain ``check``, or None for the parser."""
    if len(words) < 2 or words[0] != "check":
        return None
    rest = list(words[1:])
    as_json = rest[0] == "--json"
    if as_json:
        rest = rest[1:]
    if not rest or rest[0].startswith("-") or rest[0] == "" or any(map(_ambiguous, rest)):
        return None
    return SimpleNamespace(verb="check", verb_module="check", command=rest, cwd=None,
                           add_dir=[], json=as_json, jsonl=False)
