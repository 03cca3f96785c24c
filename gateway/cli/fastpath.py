"""The plain forms of ``shellgate check`` and ``shellgate run``, read
without argparse.

``shellgate check 'git log'`` and ``shellgate run -- make`` are what a hook
or a script runs most, each as a new process, and argparse is ~5 ms of it:
its import, gettext's locale lookups, the parser's build and its own
regexes. The forms read here are ``check [--json] COMMAND...``, ``check
--jsonl [--cwd DIR]`` and ``run [--] ARGV...`` with every other option at
its default; anything else (other
options, ``-``, help, a mistake, a word argparse would refuse such as an
abbreviation of two options) goes to the real parser, which stays the one
definition of the command line. ``tests/gateway/test_cli_fastpath.py``
holds every form read here to the namespace argparse makes of it, over
every short combination of each verb's options, operands and mistakes (an
option added to the parser and not here fails it).
"""

from __future__ import annotations

from types import SimpleNamespace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["fast_parse"]

#: each verb's long options and their defaults (parser.py), as argparse
#: leaves them when none is given
_DEFAULTS: dict[str, dict[str, Any]] = {
    "check": {"cwd": None, "add_dir": [], "json": False, "jsonl": False},
    "run": {"cwd": None, "profile": None, "allow_write": [], "allow_domain": [],
            "git_read_only": False, "settings": None, "timeout": None, "memory": None,
            "tmp_size": None, "shm_size": None, "run_size": None, "max_processes": None},
}
#: where each verb's operands go
_OPERANDS = {"check": "command", "run": "argv"}


def _options(verb: str) -> tuple[str, ...]:
    return ("--help", *(f"--{name.replace('_', '-')}" for name in _DEFAULTS[verb]))


def _ambiguous(word: str, options: tuple[str, ...]) -> bool:
    """argparse refuses a word anywhere in the line, operands included, that
    abbreviates two of the verb's options (``check ls --js``)."""
    stem = word.partition("=")[0]
    return (word.startswith("--") and stem not in options
            and sum(option.startswith(stem) for option in options) > 1)


def _jsonl(rest: list[str], values: dict[str, Any]) -> SimpleNamespace | None:
    """``check --jsonl [--cwd DIR]``: a stream's plain form (a batch of
    commands judged by one process, where argparse is a tenth of the whole
    on a short stream)."""
    if rest and (len(rest) != 2 or rest[0] != "--cwd" or not rest[1]
                 or rest[1].startswith("-")):
        return None
    values["jsonl"] = True
    if rest:
        values["cwd"] = rest[1]
    return SimpleNamespace(verb="check", verb_module="check", command=[], **values)


def fast_parse(words: Sequence[str]) -> SimpleNamespace | None:
    """The parsed arguments of a plain ``check`` or ``run``, or None for the
    parser."""
    verb = words[0] if words else ""
    if len(words) < 2 or verb not in _DEFAULTS:
        return None
    rest = list(words[1:])
    values: dict[str, Any] = {name: (list(default) if isinstance(default, list) else default)
                              for name, default in _DEFAULTS[verb].items()}
    if verb == "check" and rest[0] == "--jsonl":
        return _jsonl(rest[1:], values)
    if verb == "check" and rest[0] == "--json":
        values["json"], rest = True, rest[1:]
    # `run -- ARGV` is run's plain form; check's `--` goes to the parser
    operands = rest[1:] if verb == "run" and rest[:1] == ["--"] else rest
    # after a `--`, argparse reads every word as an operand
    before_marker = rest[:rest.index("--")] if "--" in rest else rest
    options = _options(verb)
    if (not operands or not operands[0] or operands[0].startswith("-")
            or any(_ambiguous(word, options) for word in before_marker)):
        return None
    return SimpleNamespace(verb=verb, verb_module=verb, **{_OPERANDS[verb]: rest}, **values)
