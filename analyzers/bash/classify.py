"""Display classification: is this command a search, a read or a listing?

Used to collapse output in a UI ("Searched…", "Read 3 files"). A pipeline or
list is classified as a whole: every part must be search/read/list;
semantic-neutral parts (``echo``, ``printf``, ``true``, ``false``, ``:``) are
skipped, so ``ls a && echo --- && ls b`` is still a listing.
"""

from __future__ import annotations

# the enum module costs a cold start 3.5 ms (values/choices.py); type
# checkers see it
TYPE_CHECKING = False
if TYPE_CHECKING:
    from enum import StrEnum
else:
    from values import StrEnum


class Classification(StrEnum):
    SEARCH = "search"
    READ = "read"
    LIST = "list"
    NEUTRAL = "semantic-neutral"
    SILENT = "silent"
    OTHER = "other"


SEARCH_COMMANDS = frozenset(
    {"find", "grep", "egrep", "fgrep", "rg", "ag", "ack", "locate", "which", "whereis"}
)
READ_COMMANDS = frozenset(
    {
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "wc",
        "stat",
        "file",
        "strings",
        "jq",
        "awk",
        "cut",
        "sort",
        "uniq",
        "tr",
    }
)
LIST_COMMANDS = frozenset({"ls", "tree", "du"})
NEUTRAL_COMMANDS = frozenset({"echo", "printf", "true", "false", ":"})
SILENT_COMMANDS = frozenset(
    {
        "mv",
        "cp",
        "rm",
        "mkdir",
        "rmdir",
        "chmod",
        "chown",
        "chgrp",
        "touch",
        "ln",
        "cd",
        "export",
        "unset",
        "wait",
    }
)


def classify_command(argv: tuple[str, ...]) -> Classification:
    if not argv:
        return Classification.NEUTRAL
    name = argv[0]
    if name in SEARCH_COMMANDS:
        return Classification.SEARCH
    if name in READ_COMMANDS:
        return Classification.READ
    if name in LIST_COMMANDS:
        return Classification.LIST
    if name in NEUTRAL_COMMANDS:
        return Classification.NEUTRAL
    if name in SILENT_COMMANDS:
        return Classification.SILENT
    return Classification.OTHER


def classify_pipeline(argvs: list[tuple[str, ...]]) -> Classification:
    """Whole-command classification from the effective argv of its parts.

    ``cd`` alone is silent, but next to other commands it is navigation and
    skipped like ``echo``: ``cd src && ls`` is still a listing.
    """
    parts = [classify_command(a) for a in argvs]
    meaningful = {p for p in parts if p is not Classification.NEUTRAL}
    if len(meaningful) > 1 or (meaningful and len(parts) > 1):
        meaningful = {
            p
            for a, p in zip(argvs, parts, strict=True)
            if p is not Classification.NEUTRAL and a[:1] != ("cd",)
        } or meaningful
    if not meaningful:
        return Classification.NEUTRAL
    if len(meaningful) == 1:
        return next(iter(meaningful))
    readish = {Classification.SEARCH, Classification.READ, Classification.LIST}
    if meaningful <= readish:
        # `grep x f | head` searches; `cat f | wc -l` reads; mixes read.
        return Classification.SEARCH if Classification.SEARCH in meaningful else Classification.READ
    return Classification.OTHER
