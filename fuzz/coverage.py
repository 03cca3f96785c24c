"""Which productions of the bash grammar the generators have drawn: the
live display's "grammar coverage" (fuzz/strategies.py, fuzz/pieces.py)."""

from __future__ import annotations

from collections import Counter
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

#: production name -> times drawn, in this process
COVERAGE: Counter[str] = Counter()
#: every production a generator declares (declared at import)
PRODUCTIONS: list[str] = []


def declare(name: str) -> None:
    """Name a production before any strategy of it exists (those built
    while drawing, like a word's quotings)."""
    if name not in PRODUCTIONS:
        PRODUCTIONS.append(name)


def production(name: str, strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``strategy``, counted as production ``name`` each time it is drawn."""
    declare(name)

    def mark(value: T) -> T:
        COVERAGE[name] += 1
        return value

    return strategy.map(mark)
