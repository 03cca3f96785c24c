"""Denial tracking: the same thing refused again and again tells the model
to stop asking for it and take another approach (the reference's
``DenialTrackingState``), instead of a loop of ask → deny → ask."""

from __future__ import annotations

import threading
from collections import Counter

#: after this many denials of one prefix the result says to change course
DENIALS_BEFORE_ADVICE = 3


class DenialTracker:
    """Counts denials per key (a command prefix, a tool and path) in a row;
    an allow of the same key starts the count again."""

    def __init__(self, threshold: int = DENIALS_BEFORE_ADVICE) -> None:
        self.threshold = threshold
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def denied(self, key: str) -> int:
        with self._lock:
            self._counts[key] += 1
            return self._counts[key]

    def allowed(self, key: str) -> None:
        with self._lock:
            self._counts.pop(key, None)

    def advice(self, key: str, count: int) -> str:
        if count < self.threshold:
            return ""
        return (f"This has been denied {count} times ({key}). Do not ask for it again: take "
                "another approach, or ask the user how to proceed.")


def denial_key(tool_name: str, values: tuple[str, ...]) -> str:
    """What repeated denials are counted by: a command's first two words
    (``git push``), else the tool and its first subject."""
    if tool_name == "Bash" and values:
        words = values[0].split()
        return f"Bash({' '.join(words[:2])})" if words else "Bash"
    if values:
        return f"{tool_name}({values[0]})"
    return tool_name
