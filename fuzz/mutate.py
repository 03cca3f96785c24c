"""The mutator: the corpus's attack commands, perturbed.

An attack the analyzer stops in one spelling is worth trying in every
other: the words re-quoted or split, a long option abbreviated, a value
attached or detached, a wrapper put in front, a redirection moved to the
front, the command handed to `bash -c`, a separator swapped, a space made
`${IFS}` or a line continuation. Each operation is a function of the text
and a drawn number, so hypothesis can shrink both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from hypothesis import strategies as st

from regexes import regex

from . import grammar as g
from .coverage import production
from .pieces import S, quiet, shell_word

_PLAIN_WORD = regex(r"(?<!\S)[A-Za-z0-9_./,:=@%+-]{2,}(?!\S)")
_LONG_OPTION = regex(r"(?<!\S)--([a-z][a-z0-9-]{3,})")
_ATTACHED = regex(r"(?<!\S)(--[a-z][a-z0-9-]+)=(\S+)")
_DETACHED = regex(r"(?<!\S)(-[a-zA-Z]) ([^\s-]\S*)")
_REDIRECTION = regex(r"\s+(\d?(?:>>|>|<))\s*([^\s;&|]+)")
_SEPARATOR = regex(r"\s*(;|&&|\|\||\n)\s*")
_COMMAND_START = regex(r"(^|;\s*|&&\s*|\|\|\s*|\|\s*|\n)(?=[A-Za-z])")


def _pick(matches: list[re.Match[str]], n: int) -> re.Match[str] | None:
    return matches[n % len(matches)] if matches else None


def _requote(text: str, n: int) -> str:
    m = _pick(list(_PLAIN_WORD.finditer(text)), n)
    if m is None:
        return text
    word = m.group(0)
    forms = (f"'{word}'", f'"{word}"', "\\" + "\\".join(word), f"{word[0]}''{word[1:]}",
             f"$'{word}'", f'{word[:1]}"{word[1:]}"')
    return text[: m.start()] + forms[n % len(forms)] + text[m.end():]


def _abbreviate(text: str, n: int) -> str:
    m = _pick(list(_LONG_OPTION.finditer(text)), n)
    if m is None:
        return text
    name = m.group(1)
    cut = 3 + n % max(1, len(name) - 3)
    return text[: m.start(1)] + name[:cut] + text[m.end(1):]


def _attach_or_detach(text: str, n: int) -> str:
    m = _pick(list(_ATTACHED.finditer(text)), n)
    if m is not None:
        return text[: m.start()] + f"{m.group(1)} {m.group(2)}" + text[m.end():]
    m = _pick(list(_DETACHED.finditer(text)), n)
    if m is not None:
        return text[: m.start()] + f"{m.group(1)}{m.group(2)}" + text[m.end():]
    return text


def _wrap(text: str, n: int) -> str:
    starts = list(_COMMAND_START.finditer(text))
    m = _pick(starts, n)
    if m is None:
        return g.WRAPPERS[n % len(g.WRAPPERS)] + text
    wrapper = g.WRAPPERS[n % len(g.WRAPPERS)]
    return text[: m.end()] + wrapper + text[m.end():]


def _move_redirection(text: str, n: int) -> str:
    m = _pick(list(_REDIRECTION.finditer(text)), n)
    if m is None:
        return text
    rest = text[: m.start()] + text[m.end():]
    return f"{m.group(1)}{m.group(2)} {rest}"


def _to_string_runner(text: str, n: int) -> str:
    return g.STRING_RUNNERS[n % len(g.STRING_RUNNERS)] + shell_word(text)


def _swap_separator(text: str, n: int) -> str:
    m = _pick(list(_SEPARATOR.finditer(text)), n)
    if m is None:
        return text
    new = ("; ", "\n", " && ", " || ", " & ")[n % 5]
    return text[: m.start()] + new + text[m.end():]


def _respace(text: str, n: int) -> str:
    spaces = [i for i, c in enumerate(text) if c == " "]
    if not spaces:
        return text
    at = spaces[n % len(spaces)]
    return text[:at] + ("${IFS}", "\t", "\\\n", "  ", "$IFS")[n % 5] + text[at + 1:]


def _salt(text: str, n: int) -> str:
    chars = g.UNICODE + g.CONTROL
    at = n % (len(text) + 1)
    return text[:at] + chars[n % len(chars)] + text[at:]


OPERATIONS: dict[str, Callable[[str, int], str]] = {
    "requote": _requote,
    "abbreviate": _abbreviate,
    "attach_or_detach": _attach_or_detach,
    "wrap": _wrap,
    "move_redirection": _move_redirection,
    "string_runner": _to_string_runner,
    "swap_separator": _swap_separator,
    "respace": _respace,
    "salt": _salt,
}


def apply(text: str, operations: Sequence[tuple[str, int]]) -> str:
    for name, n in operations:
        text = OPERATIONS[name](text, n)
    return text


def mutated(seeds: Sequence[str]) -> S[str]:
    """A seed with one to three operations applied."""
    if not seeds:
        return st.nothing()
    ops = st.lists(st.tuples(st.sampled_from(sorted(OPERATIONS)), st.integers(0, 1 << 16)),
                   min_size=1, max_size=3)
    return production("mutation", quiet(st.tuples(st.sampled_from(tuple(seeds)), ops).map(
        lambda t: apply(t[0], t[1]))))


#: the corpus files of a checkout the mutator starts from, beside the
#: catalogue in fuzz/grammar.py (an installed copy has only the catalogue)
_CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"


def attack_seeds(limit_chars: int = 400) -> tuple[str, ...]:
    """The attack commands of the checkout's corpus (those not expected to
    be allowed), and the catalogue of dangerous commands."""
    out: list[str] = list(g.DANGEROUS)
    for name in ("bash_attacks.jsonl", "review_families.jsonl"):
        path = _CORPUS / name
        if not path.is_file():
            continue
        for line in path.read_text("utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            command = entry.get("command") if isinstance(entry, dict) else None
            if (isinstance(command, str) and len(command) <= limit_chars
                    and entry.get("expected", "ask") != "allow"):
                out.append(command)
    return tuple(dict.fromkeys(out))


def benign_seeds() -> tuple[str, ...]:
    """The checkout's benign corpus (commands a developer runs all day)."""
    path = _CORPUS / "bash_benign.jsonl"
    if not path.is_file():
        return ()
    out = []
    for line in path.read_text("utf-8").splitlines():
        try:
            command = json.loads(line).get("command")
        except (ValueError, AttributeError):
            continue
        if isinstance(command, str):
            out.append(command)
    return tuple(out)
