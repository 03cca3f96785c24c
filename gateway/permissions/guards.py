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
from typing import Any

from ..pathnames import inside
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


def spellings(command: str, analysis: Any) -> tuple[str, ...]:
    """The command's text as written, with its quoting taken out (``r''m``
    and ``r\\m`` are rm to bash), and its words as the analyzer read them
    (``$'\x72m'`` decoded): what :func:`mentions` looks in. From the
    second review: `setsid r''m x` passed a check of the raw text."""
    unquoted = re.sub(r"\\(.)", r"\1", command.replace("''", "").replace('""', ""))
    unquoted = unquoted.replace("'", "").replace('"', "")
    words = [" ".join((*s.raw_argv, *s.argv)) for s in getattr(analysis, "subcommands", ())]
    return (command, unquoted, *words)


#: programs that run other programs or code they are given (a shell, an
#: interpreter, a wrapper the analyzer does not take apart, a build tool
#: running the project's scripts): a deny rule naming a command cannot see
#: what they run (`printf 'r\155 x' | bash`, `python3 -c "…chr(114)…"`,
#: `setsid rm`, `make clean`)
RUNNERS = frozenset({
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "toybox",
    "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "deno",
    "bun", "php", "lua", "luajit", "tclsh", "wish", "expect", "osascript", "pwsh", "Rscript",
    "julia", "awk", "gawk", "mawk", "nawk", "sed", "env", "xargs", "find", "parallel",
    "setsid", "coproc", "taskset", "ionice", "chrt", "prlimit", "flock", "nohup", "nice",
    "timeout", "stdbuf", "script", "watch", "unshare", "chroot", "numactl", "fakeroot", "strace",
    "ltrace", "gdb", "valgrind", "sudo", "doas", "su", "runuser", "systemd-run", "at", "batch",
    "ssh", "tmux", "screen", "dbus-launch", "source", ".", "eval", "exec", "command", "builtin",
    "trap", "make", "gmake", "cmake", "ninja", "npm", "npx", "yarn", "pnpm", "bunx", "just",
    "rake", "gradle", "mvn", "cargo", "go", "tox", "nox", "invoke", "vim", "vi", "nvim",
    "emacs", "man", "tar", "zip", "rsync", "ssh-agent", "docker", "podman",
})

#: of those, the ones that run the project's own scripts (a repository's
#: `Bash(npm test:*)` is what a team's shared settings are for); the rest
#: run whatever code their arguments hold, and a repository's rule for one
#: is a rule for everything
BUILD_TOOLS = frozenset({"make", "gmake", "cmake", "ninja", "npm", "yarn", "pnpm", "just",
                         "rake", "gradle", "mvn", "cargo", "go", "tox", "nox", "invoke"})
CODE_RUNNERS = RUNNERS - BUILD_TOOLS

#: git subcommands that print what files hold (from history or the work
#: tree) without naming them: a Read deny rule must see them as a search
GIT_CONTENT = frozenset({"show", "diff", "grep", "blame", "annotate", "cat-file", "archive",
                         "format-patch", "whatchanged", "log", "reflog", "stash", "difftool",
                         "range-diff", "bundle", "fast-export"})


def runs_programs(sub: Any) -> str | None:
    """Why this subcommand may run a program its words do not name
    (``None``: it runs only itself)."""
    for argv in (sub.raw_argv, sub.argv):
        if not argv:
            continue
        name = argv[0]
        if re.search(r"[*?\[]", name):
            return f"{name!r} is a glob: the program is whatever it expands to"
        if "/" in name and not name.startswith(("/usr/", "/bin/", "/sbin/")):
            return f"{name!r} is a script or program of the project"
        if os.path.basename(name) in RUNNERS:
            return f"{os.path.basename(name)} runs other programs"
    return None


def _any_case(pattern: str) -> str:
    """The glob matching in either case (``a[b]`` → ``[aA][bB]``): bash's
    ``shopt -s nocaseglob`` expands ``[k].[P]EM`` to ``key.pem`` (from the
    second review), so a deny rule is matched against both readings. Only
    components holding a glob change; bash matches the others as written."""
    return "/".join(_component_any_case(c) if re.search(r"[*?\[]", c) else c
                    for c in pattern.split("/"))


def _component_any_case(pattern: str) -> str:
    out: list[str] = []
    in_class = False
    for ch in pattern:
        if ch == "[" and not in_class:
            in_class = True
            out.append(ch)
        elif ch == "]" and in_class:
            in_class = False
            out.append(ch)
        elif ch.isalpha() and ch.lower() != ch.upper():
            both = ch.lower() + ch.upper()
            out.append(both if in_class else f"[{both}]")
        else:
            out.append(ch)
    return "".join(out)


def expand(pattern: str) -> list[str] | None:
    """A path glob's files as bash could list them, in any case (``None``:
    too many)."""
    found: list[str] = []
    for path in glob.iglob(_any_case(pattern)):
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
    return inside(literal, root) or inside(root, literal)



def glob_base(pattern: str) -> str:
    """The directory a path glob starts from (``/ws/conf/*.txt`` → ``/ws/conf``)."""
    hit = re.search(r"[*?\[]", pattern)
    return os.path.dirname(pattern[:hit.start()]) if hit else pattern
