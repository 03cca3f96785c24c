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

__all__ = ["memo"]


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
