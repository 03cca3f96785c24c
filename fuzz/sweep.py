"""The oracle's sweep: every option of every installed tool, alone.

Hypothesis draws combinations; a single dangerous option that a table
wrongly allows (`locale -m` ran gzip) is found fastest by trying each one
once. The sweep puts the options whose help speaks of files, programs or
output first, shuffled by the run's seed within each tier, and each worker
takes its own share.
"""

from __future__ import annotations

import random

from .options import spellings
from .pieces import shell_word
from .strategies import Tools, value_kind

#: the value each kind of option is given: a canary for paths (a read shows
#: as an open in the fake HOME, a write as a change there), a program the
#: oracle sees run, harmless words otherwise
SWEEP_VALUES = {"path": "~/.ssh/id_rsa", "program": "id", "number": "1", "other": "x"}


def option_sweep(tools: Tools, seed: int) -> list[str]:
    """One command per option and spelling form: every option's first form
    (suspicious ones first), then every second form (detached values,
    abbreviations)."""
    tiers: tuple[list[str], list[str], list[str], list[str]] = ([], [], [], [])
    for program, tool in sorted(tools.items()):
        operand = "" if program[0] == "git" else " notes.txt"
        for option in tool.options:
            value = SWEEP_VALUES[value_kind(option)] if option.takes != "none" else ""
            for second, words in enumerate(spellings(option, tool, value)[:2]):
                text = " ".join([*program, *(shell_word(w) for w in words)]) + operand
                tiers[2 * second + (0 if option.suspicious else 1)].append(text)
    rng = random.Random(seed)  # noqa: S311 (reproducible order, not a secret)
    for tier in tiers:
        rng.shuffle(tier)
    return list(dict.fromkeys(tiers[0] + tiers[1] + tiers[2] + tiers[3]))
