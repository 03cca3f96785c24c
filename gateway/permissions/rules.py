"""Claude Code's permission rule grammar: ``Tool`` or ``Tool(content)``.

    Bash                       every Bash call
    Bash(npm run test)         exactly that command
    Bash(npm run:*)            the legacy prefix form (``:*`` only at the end)
    Bash(git * --oneline)      ``*`` anywhere; ``Bash(ls *)`` keeps the word
                               boundary (``ls``, ``ls -la``, not ``lsof``)
    Read(./secrets/**)         gitignore-style paths: ``//abs``, ``~/home``,
    Edit(//etc/**)             ``/relative-to-the-settings-file``, ``./rel``;
    Edit(*.lock)               a bare name matches at any depth
    WebFetch(domain:x.com)     a domain; ``*.x.com`` its subdomains
    mcp__server, mcp__server__*, mcp__server__tool

A rule that cannot be read is reported with its file and line and skipped.
"""

from __future__ import annotations

from typing import Literal

from regexes import regex
from values import valueclass

from .settings import Problem, Source

Behavior = Literal["allow", "ask", "deny"]

#: tools whose rules take a path (Edit rules cover every tool that changes
#: a file; Read rules every tool that reads one: Glob and Grep too)
PATH_TOOLS = frozenset({"Read", "Edit", "Write", "NotebookEdit", "MultiEdit"})
CONTENT_TOOLS = PATH_TOOLS | {"Bash", "WebFetch"}
KNOWN_TOOLS = CONTENT_TOOLS | {"Glob", "Grep", "WebSearch", "TodoWrite", "Agent", "Task",
                               "NotebookRead", "LS", "KillShell", "BashOutput",
                               "ExitPlanMode", "AskUserQuestion", "ToolSearch", "Skill",
                               "SlashCommand", "EnterPlanMode", "TaskOutput", "TaskStop"}

_NAME = regex(r"[A-Za-z][A-Za-z0-9_-]*")
_MCP = regex(r"mcp__[A-Za-z0-9_-]+(?:__(?:[A-Za-z0-9_.-]+|\*))?")
_DOMAIN = regex(r"(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?")


@valueclass
class Rule:
    """One rule with where it came from (named on every decision it makes)."""

    tool: str
    content: str | None
    behavior: Behavior
    source: Source
    #: the file and line (``.claude/settings.json:7``), or ``the command line``
    origin: str
    #: where ``/pattern`` is anchored for this rule's file
    root: str = "/"

    @property
    def text(self) -> str:
        if self.content is None:
            return self.tool
        escaped = self.content.replace("(", "\\(").replace(")", "\\)")
        return f"{self.tool}({escaped})"

    def describe(self) -> str:
        """``Bash(rm:*)`` from projectSettings (.claude/settings.json:4)."""
        return f"{self.text} from {self.source.label} ({self.origin})"


def parse_rule(text: object, behavior: Behavior, source: Source, origin: str,
               root: str = "/") -> Rule | Problem:
    """A rule, or the one-line problem that makes it unreadable."""
    if not isinstance(text, str):
        return Problem(origin, f"a {behavior} rule must be a string, not {type(text).__name__}")
    raw = text.strip()
    if not raw:
        return Problem(origin, f"an empty {behavior} rule is skipped")
    if _MCP.fullmatch(raw):
        return Rule(raw, None, behavior, source, origin, root)
    open_at = raw.find("(")
    if open_at < 0:
        if not _NAME.fullmatch(raw):
            return Problem(origin, f"{raw!r} is not a rule (Tool or Tool(content)); skipped")
        return Rule(raw, None, behavior, source, origin, root)
    name = raw[:open_at]
    # Fixed: any unescaped `)` after the `(` was taken as the close, so
    # `Bash(a) b\)` — whose last `)` is escaped — read as `a) b\`
    if not raw.endswith(")") or _escaped(raw, len(raw) - 1):
        return Problem(origin, f"{raw!r}: the '(' is never closed; skipped")
    if not _NAME.fullmatch(name):
        return Problem(origin, f"{raw!r}: {name!r} is not a tool name; skipped")
    content = raw[open_at + 1:-1].replace("\\(", "(").replace("\\)", ")")
    if content.strip() in ("", "*"):
        # Claude Code reads `Bash()` and `Bash(*)` as the whole tool
        return Rule(name, None, behavior, source, origin, root)
    if name not in CONTENT_TOOLS and name in KNOWN_TOOLS:
        return Problem(origin, f"{raw!r}: {name} rules take no (content); write {name} "
                       "for the whole tool; skipped")
    if name not in CONTENT_TOOLS:
        return Problem(origin, f"{raw!r}: no tool is named {name!r} (rules with content: "
                       "Bash, Read, Edit, Write, WebFetch); skipped")
    if name == "WebFetch":
        if not content.startswith("domain:") or not _DOMAIN.fullmatch(content[7:]):
            return Problem(origin, f"{raw!r}: WebFetch rules are WebFetch(domain:example.com) "
                           "or WebFetch(domain:*.example.com); skipped")
        content = "domain:" + content[7:].lower().rstrip(".")
    return Rule(name, content, behavior, source, origin, root)


def _escaped(text: str, at: int) -> bool:
    """Is ``text[at]`` escaped (an odd run of backslashes before it)?"""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def unknown_tool(rule: Rule) -> Problem | None:
    """A rule naming no tool shellgate knows (kept: an upstream tool may
    come to carry the name) — said, since a misspelt deny protects nothing."""
    if rule.tool in KNOWN_TOOLS or rule.tool.startswith("mcp__"):
        return None
    return Problem(rule.origin, f"{rule.text}: no tool is named {rule.tool!r} (tools: Bash, "
                   "Read, Edit, Write, Glob, Grep, WebFetch, mcp__server__tool); the rule is "
                   "kept but matches nothing until such a tool exists")


def tool_rule_matches(rule: Rule, tool_name: str) -> bool:
    """Does a whole-tool rule (no content) name this tool?"""
    if rule.content is not None:
        return False
    if rule.tool == tool_name:
        return True
    if rule.tool.startswith("mcp__") and tool_name.startswith("mcp__"):
        server = rule.tool.removesuffix("__*")
        # `mcp__server` and `mcp__server__*` cover every tool of that server
        return "__" not in server[5:] and tool_name.startswith(server + "__")
    return False


def domain_matches(rule: Rule, host: str) -> bool:
    """``domain:example.com`` is that host; ``domain:*.example.com`` its
    subdomains (not the apex, as in Claude Code's sandbox domains)."""
    if rule.content is None or not rule.content.startswith("domain:"):
        return False
    want, host = rule.content[7:], host.lower().rstrip(".")
    if want.startswith("*."):
        return host.endswith(want[1:])
    return host == want
