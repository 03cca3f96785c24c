"""A bounded memo for the analyzer's pure functions, without ``functools``.

``functools`` brings ``collections`` (and their own imports) into every
process that imports it: with the ``enum`` module (see values/choices.py)
3.5 ms of a cold ``shellgate check``, which imports neither otherwise.
:func:`memo` keeps what the analyzer used of ``functools.lru_cache``: a
result per argument tuple (keyword arguments too), at most ``maxsize`` of
them, the oldest quarter dropped when full (first in, first out: an entry
used often is made again once it falls out, which costs one call);
``__wrapped__``; ``cache_clear()``. Safe across threads: a lookup reads a
dict, an insertion holds a lock; two threads missing the same key both
compute it, and both results are equal (the functions are pure).
"""

from __future__ import annotations

from _thread import allocate_lock
from itertools import islice

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Generic, ParamSpec, TypeVar

    _P = ParamSpec("_P")
    _R = TypeVar("_R")

    class Memoized(Generic[_P, _R]):
        __wrapped__: Callable[_P, _R]

        def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...

        def cache_clear(self) -> None: ...

__all__ = ["Results", "memo"]


def memo(maxsize: int) -> Callable[[Callable[_P, _R]], Memoized[_P, _R]]:
    """Memoize a pure function of hashable arguments."""

    def decorate(function: Callable[_P, _R]) -> Memoized[_P, _R]:
        cache: dict[Any, Any] = {}
        lock = allocate_lock()
        drop = max(1, maxsize // 4)

        def memoized(*args: Any, **kwargs: Any) -> Any:
            key = (args, tuple(kwargs.items())) if kwargs else args
            try:
                return cache[key]
            except KeyError:
                pass
            value = function(*args, **kwargs)
            with lock:
                if len(cache) >= maxsize:
                    for old in list(islice(cache, drop)):
                        del cache[old]
                cache[key] = value
            return value

        def cache_clear() -> None:
            with lock:
                cache.clear()

        memoized.__wrapped__ = function  # type: ignore[attr-defined]
        memoized.cache_clear = cache_clear  # type: ignore[attr-defined]
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(memoized, name, getattr(function, name, None))
        return memoized  # type: ignore[return-value]

    return decorate


class Results:
    """Finished results by key, bounded by their total weight (the caller
    says what one weighs: an analysis of one `ls` is small, one of a
    thousand-command line is not) and by their number; the oldest go
    first. A lookup reads a dict; an insertion holds a lock. Keeps what
    :func:`memo` cannot: a cap on memory whatever the results' sizes (a
    stream of distinct 100,000-character command lines must not grow the
    process without bound)."""

    def __init__(self, budget: int, entries: int) -> None:
        self._store: dict[Any, tuple[Any, int]] = {}
        self._budget = budget
        self._entries = entries
        self._total = 0
        self._lock = allocate_lock()

    def get(self, key: Any) -> Any:
        """The result kept for ``key``, or ``None``."""
        kept = self._store.get(key)
        return None if kept is None else kept[0]

    def put(self, key: Any, value: Any, weight: int) -> None:
        """Keep ``value`` unless it alone weighs more than the budget."""
        if weight > self._budget:
            return
        with self._lock:
            old = self._store.pop(key, None)
            if old is not None:
                self._total -= old[1]
            while self._store and (self._total + weight > self._budget
                                   or len(self._store) >= self._entries):
                oldest = next(iter(self._store))
                self._total -= self._store.pop(oldest)[1]
            self._store[key] = (value, weight)
            self._total += weight

    def clear(self) -> None:
        with self._lock:
            self._store.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._store)
