"""Where a deny (or ask) rule could still be reached by a call its text does
not match — so the call goes to a person instead of being allowed unasked.

* **Mentions.** A Bash deny rule names a program; bash has more ways to run
  one than any list of wrappers knows (``coproc rm x``, ``setsid rm x``,
  ``git -C . push``, ``trap 'rm x' EXIT``, ``env -S 'rm x'``). A command
  whose text holds the rule's words, in order, as words, is never allowed
  unasked by a rule, a mode, a hook or the sandbox's auto-allow — only a
  command the analyzer proved read-only is (it cannot run anything else).
* **Globs.** ``cat conf/*`` against ``Read(./conf/*.txt)``: the glob is
  expanded as bash would (no dotfiles), each file matched.
* **Trees.** ``grep -r KEY .`` or the Grep tool against ``Read(*.pem)``: a
  search below a directory where the rule may match.
"""

from __future__ import annotations

import functools
import glob
import os
import re

from .path_rules import anchor, path_matches
from .rules import Rule

#: a glob expanding to more files than this is judged as a tree read
MAX_GLOB_FILES = 2000

#: characters a word may hold around a program name and still be it
#: (`/bin/rm` is rm, `rm.txt` and `perm` are not)
_WORDISH = r"[\w.+-]"


def rule_words(content: str) -> tuple[str, ...]:
    """The literal words a Bash rule starts with (``git push:*`` → git,
    push; ``git * main`` → git); none when it starts with a wildcard."""
    text = content[:-2] if content.endswith(":*") else content
    star = re.search(r"(?<!\\)\*", text)
    head = text[:star.start()] if star else text
    words = head.split()
    if star and words and not head.endswith((" ", "\t")):
        words = words[:-1]  # `ls*`: the last word is only a prefix
    return tuple(w.replace("\\*", "*") for w in words)


@functools.lru_cache(maxsize=1024)
def _mention_regex(words: tuple[str, ...]) -> re.Pattern[str]:
    parts = [f"(?<!{_WORDISH}){re.escape(w)}(?!{_WORDISH})" for w in words]
    return re.compile(".*?".join(parts), re.DOTALL)


def mentions(content: str, command: str) -> bool:
    """Does the command's text hold the rule's words, in order, as words?"""
    words = rule_words(content)
    return bool(words) and _mention_regex(words).search(command) is not None


def mentioned(rules: tuple[Rule, ...], command: str) -> Rule | None:
    for rule in rules:
        if rule.tool == "Bash" and rule.content is not None and mentions(rule.content, command):
            return rule
    return None


def expand(pattern: str) -> list[str] | None:
    """A path glob's files as bash would list them (``None``: too many)."""
    found: list[str] = []
    for path in glob.iglob(pattern):
        found.append(os.path.normpath(path))
        if len(found) > MAX_GLOB_FILES:
            return None
    return found


def may_hold(rule: Rule, root: str, *, cwd: str, home: str) -> bool:
    """Could the rule's pattern match something at or below ``root``?"""
    assert rule.content is not None
    anchored = anchor(rule.content, root=rule.root, cwd=cwd, home=home)
    if anchored is None:
        return True  # a bare name matches at any depth
    if path_matches(rule.content, root, root=rule.root, cwd=cwd, home=home, fold_case=True):
        return True
    hit = re.search(r"(?<!\\)[*?\[]", anchored)
    literal = anchored if hit is None else anchored[:anchored.rfind("/", 0, hit.start())]
    literal = literal.rstrip("/") or "/"
    # one inside the other: the rule's fixed part below the search's root,
    # or the root inside what the rule's fixed part leads to
    return _within(literal, root) or _within(root, literal)


def _within(path: str, folder: str) -> bool:
    return folder in (path, "/") or path.startswith(folder.rstrip("/") + "/")


def glob_base(pattern: str) -> str:
    """The directory a path glob starts from (``/ws/conf/*.txt`` → ``/ws/conf``)."""
    hit = re.search(r"[*?\[]", pattern)
    return os.path.dirname(pattern[:hit.start()]) if hit else pattern
