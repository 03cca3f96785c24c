"""Read/Edit rules against paths, gitignore-style.

Where a pattern is anchored:

    //etc/hosts      the absolute path /etc/hosts
    ~/.aws/**        below the home directory
    /src/**          below the directory holding the rule's settings
                     (``<project>/.claude/settings.json`` → ``<project>``)
    ./build, a/b     below the session's working directory
    .env, *.pem      a bare name: at any depth, anywhere

``*`` stays inside one path component, ``**`` crosses them, ``?`` is one
character, ``[abc]`` a class. As in gitignore, a pattern that matches a
directory covers everything inside it: ``Read(secrets)`` denies
``secrets/key.txt``.
"""

from __future__ import annotations

import functools
import posixpath
import re

from regexes import regex

#: characters that make a component a glob
_GLOB = regex(r"(?<!\\)[*?\[]")


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: str, root: str, cwd: str, home: str,
                    fold_case: bool) -> re.Pattern[str]:
    """The regex a path (absolute, normalized) must fully match."""
    flags = re.DOTALL | (re.I if fold_case else 0)
    anchored = _anchor(pattern, root, cwd, home)
    if anchored is None:
        # a bare name (`.env`, `*.pem`): at any depth, anywhere
        return re.compile("(?:.*/)?" + _glob(pattern.rstrip("/")), flags)
    return re.compile(_glob(_normalize(anchored)), flags)


def _anchor(pattern: str, root: str, cwd: str, home: str) -> str | None:
    """The pattern as an absolute pattern, or ``None`` for a bare name.

    Fixed: ``//`` alone was stripped to ``/`` and anchored at the settings
    root, so ``Edit(//)`` (every path) covered only the project; ``./`` and
    ``.`` were stripped to the bare name ``.`` and matched nothing, so
    ``Read(./)`` denied nothing (tests/gateway/permissions/test_path_rules.py).
    """
    if pattern.startswith("//"):
        return "/" + pattern.lstrip("/")
    body = pattern.rstrip("/") or "/"
    if body == "~" or body.startswith("~/"):
        return home.rstrip("/") + body[1:]
    if body.startswith("/"):
        return root.rstrip("/") + body
    if body in (".", "..") or body.startswith(("./", "../")) or "/" in body:
        return cwd.rstrip("/") + "/" + body
    return None


def _normalize(path: str) -> str:
    """``..`` and ``.`` collapsed in the literal part before any glob (and
    a trailing ``/`` dropped: a directory's pattern covers what is in it)."""
    path = path.rstrip("/") or "/"
    hit = _GLOB.search(path)
    if hit is None:
        return posixpath.normpath(path)
    cut = path.rfind("/", 0, hit.start())
    head, tail = path[:cut], path[cut:]
    return (posixpath.normpath(head) if head else "") + tail


def _glob(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                after = pattern[i + 2:i + 3]
                if at_start and after == "/":
                    out.append("(?:.*/)?")  # `**/`: any number of directories, none too
                    i += 3
                    continue
                if at_start and after == "" and i > 0:
                    out.pop()  # `dir/**`: dir itself and all below
                    out.append("(?:/.*)?")
                    i += 2
                    continue
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            got = _char_class(pattern, i)
            if got is None:
                out.append(re.escape(ch))
            else:
                out.append(got[0])
                i = got[1]
                continue
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


_POSIX_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9",
                  "upper": "A-Z", "lower": "a-z", "space": " \\t\\n\\r\\f\\v",
                  "xdigit": "0-9A-Fa-f", "punct": re.escape("!\"#$%&'()*+,-.:;<=>?@[\\]^_`{|}~"),
                  "blank": " \\t"}


def _char_class(pattern: str, start: int) -> tuple[str, int] | None:
    """``[...]`` at ``start`` as a regex class and the index after it, or
    ``None`` when it is not one (the ``[`` is then a literal).

    Fixed: the class was pasted into the regex as written, so a range the
    wrong way round (``Read([z-a])``) or ``[!]a]`` raised ``re.error`` on
    every path the rule was matched against, ``[[:alpha:]]`` was a nested
    set, and a negated class (``a[!x]b``) matched the ``/`` between two
    components. As in gitignore a class is one character of one component.
    """
    i, n = start + 1, len(pattern)
    negate = i < n and pattern[i] in "!^"
    if negate:
        i += 1
    parts: list[str] = []
    first = True
    while i < n:
        ch = pattern[i]
        if ch == "]" and not first:
            body = "".join(parts)
            regex = f"[^/{body}]" if negate else f"(?!/)[{body}]"
            return regex, i + 1
        first = False
        if ch == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            name = pattern[i + 2:end] if end >= 0 else ""
            if name not in _POSIX_CLASSES:
                return None
            parts.append(_POSIX_CLASSES[name])
            i = end + 2
            continue
        if ch == "\\" and i + 1 < n:
            i += 1
            ch = pattern[i]
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            high = pattern[i + 2]
            if ord(high) < ord(ch):
                return None
            parts.append(f"{re.escape(ch)}-{re.escape(high)}")
            i += 3
            continue
        parts.append(re.escape(ch))
        i += 1
    return None


def path_matches(pattern: str, path: str, *, root: str, cwd: str, home: str,
                 fold_case: bool = False) -> bool:
    """Does ``pattern`` match ``path`` or a directory holding it?"""
    regex = compile_pattern(pattern, root, cwd, home, fold_case)
    current = posixpath.normpath(path)
    while True:
        if regex.fullmatch(current):
            return True
        parent = posixpath.dirname(current)
        if parent == current:
            return False
        current = parent


def literal_prefix(pattern: str, *, root: str, cwd: str, home: str) -> str | None:
    """The path a pattern names when it has no glob but a trailing ``/**``
    (``Read(./secrets/**)`` → ``<cwd>/secrets``): what the sandbox can hide
    as a whole. ``None`` for a bare name, a glob inside, or ``/`` itself."""
    anchored = _anchor(pattern, root, cwd, home)
    if anchored is None:
        return None
    anchored = anchored.rstrip("/")
    if anchored.endswith("/**"):
        anchored = anchored[:-3]
    if _GLOB.search(anchored) or "\\" in anchored:
        return None
    anchored = posixpath.normpath(anchored or "/")
    return None if anchored == "/" else anchored


def anchor(pattern: str, *, root: str, cwd: str, home: str) -> str | None:
    """The pattern as an absolute (normalized) pattern; ``None`` for a bare
    name, which matches at any depth."""
    anchored = _anchor(pattern, root, cwd, home)
    return None if anchored is None else _normalize(anchored)
