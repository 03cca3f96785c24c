"""One call against the rules: which deny or ask rule names it, and what
allows it.

A call is seen through its tool's ``permission_matcher``: Bash's
subcommands (with the analysis behind them), a path with the access it
needs (the path as named and where it leads), a domain, or only the tool's
name. Edit and Write rules cover every path a tool writes; Read rules every
path a tool reads (Read, Glob, Grep).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from analyzers import ParseStatus
from regexes import regex
from values import valueclass

from ..context import ToolContext
from ..decisions import Decision, PermissionResult
from ..pathnames import inside
from ..tools import AnyTool
from ..tools.base import Subject
from ..tools.paths import agent_config_component
from .bash_rules import allow_views, command_matches, strict_views
from .guards import (
    GIT_CONTENT,
    expand,
    glob_base,
    may_hold,
    mentioned,
    runs_programs,
    spellings,
)
from .merge import PermissionSettings
from .modes import ACCEPT_EDITS_COMMANDS, Mode
from .path_rules import path_matches
from .rules import PATH_TOOLS, Behavior, Rule, domain_matches, tool_rule_matches

_READ_RULES = frozenset({"Read"})
_WRITE_RULES = PATH_TOOLS - _READ_RULES

#: the analyzer's reasons a prefix or wildcard rule may stand in for: the
#: command is unknown, or it writes — what the person allowed by naming it.
#: Any other reason is a known reader that an option or a script turns
#: into something else (find -exec, sed's e and w, awk's system, rg --pre,
#: git's %G placeholders, an option the tables do not know): `Bash(sed:*)`
#: was written for sed the reader, and only an exact rule covers the rest.
#: what a broad allow covers while deny or ask rules are in force: unknown
#: programs and plain writers (their paths are checked against the rules)
_BROAD_COVERS = regex(
    r"is not a known read-only|writes files|edits files in place|deletes files|"
    r"changes the stash")
_RULE_COVERS = regex(
    r"is not a known read-only|writes files|edits files in place|deletes files|"
    r"changes the stash|runs the command as another user|appends arguments read from stdin")


@valueclass(frozen=False, slots=False)
class Matcher:
    settings: PermissionSettings
    tool: AnyTool
    data: Any
    ctx: ToolContext

    def __post_init__(self) -> None:
        self.subject: Subject = (self.ctx.subject if self.ctx.subject is not None
                                 else self.tool.permission_matcher(self.data, self.ctx))
        session = self.ctx.session
        self.home = session.home
        self.cwd = session.workspace
        self.blocker = ""
        #: the allow came from something that covers any command (every
        #: Bash call, bypass, the sandbox's auto-allow, a hook)
        self.broad = False
        self._globs: dict[str, list[str] | None] = {}

    # -- deny and ask ----------------------------------------------------
    def strict(self, behavior: Behavior) -> tuple[Rule, str] | None:
        """The first deny (or ask) rule naming the call, and what it named."""
        for rule in self.settings.of(behavior):
            if tool_rule_matches(rule, self.tool.name):
                return rule, f"every {self.tool.name} call"
            what = self._content_match(rule, strict=True)
            if what is not None:
                return rule, what
        return None

    def _content_match(self, rule: Rule, *, strict: bool) -> str | None:
        s = self.subject
        if rule.content is None:
            return None
        if s.kind == "command" and rule.tool == self.tool.name == "Bash":
            for view in self._command_views(strict):
                if command_matches(rule.content, view):
                    return repr(view)
        elif s.kind == "command" and strict and rule.tool in PATH_TOOLS and s.analysis:
            # a Read deny holds for `cat secrets/k` as for Read itself, an
            # Edit deny for `> file` and `cp x file` (the sandbox hides what
            # it can; this names the rule where it cannot: a glob pattern)
            for sub in s.analysis.subcommands:
                for p in sub.paths:
                    kind_ok = p.access.value == "unknown" or \
                        (p.access.value == "read") == (rule.tool in _READ_RULES)
                    if kind_ok and not p.path.startswith("?/") and \
                            self._path(rule, p.path, fold=True):
                        return f"{p.path} (in {sub.text.strip()!r})"
        elif s.kind == "path" and rule.tool in PATH_TOOLS:
            if (s.access == "read") != (rule.tool in _READ_RULES):
                return None
            hits = [v for v in s.values if self._path(rule, v, fold=strict)]
            # a deny needs the link or its target; an allow needs both
            if hits and (strict or len(hits) == len(s.values)):
                return hits[0]
        elif s.kind == "domain" and rule.tool == self.tool.name:
            for host in s.values:
                if domain_matches(rule, host):
                    return host
        return None

    def _command_views(self, strict: bool) -> list[str]:
        analysis = self.subject.analysis
        subs = analysis.subcommands if analysis is not None else ()
        views = [v for sub in subs for v in (strict_views(sub) if strict else allow_views(sub))]
        return views or list(self.subject.values)

    def _path(self, rule: Rule, path: str, *, fold: bool) -> bool:
        assert rule.content is not None
        return path_matches(rule.content, path, root=rule.root, cwd=self.cwd, home=self.home,
                            fold_case=fold)

    def reach(self) -> tuple[Rule, str, Decision] | None:
        """A Read/Edit deny or ask rule a call may reach past its text: a
        shell glob's files (``cat conf/*``: deny when one matches), a tree
        searched below a root where the rule may match (``grep -r``, the
        Grep tool: ask), a directory moved or removed whole with such files
        inside (ask)."""
        for behavior in ("deny", "ask"):
            rules = tuple(r for r in self.settings.of(behavior)
                          if r.tool in PATH_TOOLS and r.content is not None)
            for rule in rules:
                found = self._reach(rule)
                if found is not None:
                    what, definite = found
                    decision = Decision.DENY if definite and behavior == "deny" else Decision.ASK
                    return rule, what, decision
        return None

    def _reach(self, rule: Rule) -> tuple[str, bool] | None:
        s = self.subject
        reads = rule.tool in _READ_RULES
        if s.kind == "path" and reads and s.access == "read" and self.tool.name == "Grep":
            if "/" not in (rule.content or "").rstrip("/"):
                return None  # a bare name: Grep leaves it out of the search itself
            for root in s.values:
                if may_hold(rule, root, cwd=self.cwd, home=self.home):
                    return f"files Grep searches below {root}", False
            return None
        if s.kind != "command" or s.analysis is None:
            return None  # Glob holds each file it finds to the rule (paths.read_right)
        for sub in s.analysis.subcommands:
            if reads:
                for tree in sub.trees:
                    if may_hold(rule, tree.root, cwd=self.cwd, home=self.home):
                        return f"files {sub.text.strip()!r} reads below {tree.root}", False
                if sub.argv[:1] == ("git",) and GIT_CONTENT.intersection(sub.argv[1:]) and \
                        may_hold(rule, self.ctx.session.cwd, cwd=self.cwd, home=self.home):
                    # `git log -p`, `git show`: a file's content from history,
                    # never named (from the second review)
                    return f"file contents {sub.text.strip()!r} prints from the repository", \
                        False
            for p in sub.paths:
                if p.path.startswith("?/") or ((p.access.value == "read") != reads
                                               and p.access.value != "unknown"):
                    continue
                if p.glob:
                    files = self._expand(p.path)
                    if files is None:
                        if may_hold(rule, glob_base(p.path), cwd=self.cwd, home=self.home):
                            return f"what {p.raw!r} expands to", False
                        continue
                    hit = next((f for f in files if self._path(rule, f, fold=True)), None)
                    if hit is not None:
                        return f"{hit} (from {p.raw!r} in {sub.text.strip()!r})", True
                elif (not reads or not sub.read_only) and os.path.isdir(p.path) and \
                        may_hold(rule, p.path, cwd=self.cwd, home=self.home):
                    # a whole directory moved, copied or archived (`cp -r
                    # conf out`, `tar cf - conf`) takes the files inside along
                    what = "changes" if not reads else "takes"
                    return f"files inside {p.path}, which {sub.text.strip()!r} {what}", False
        return None

    def agent_config(self) -> str | None:
        """A Bash command writing agent settings at any depth (what the file
        tools refuse: `printf … > sub/.claude/settings.local.json`)."""
        analysis = self.subject.analysis
        if self.subject.kind != "command" or analysis is None:
            return None
        for sub in analysis.subcommands:
            for p in sub.paths:
                if p.access.value != "read" and not p.path.startswith("?/"):
                    hit = agent_config_component(p.path)
                    if hit is not None:
                        return f"{p.path} (in {sub.text.strip()!r}) is inside {hit}"
        return None

    def _expand(self, pattern: str) -> list[str] | None:
        """A glob's files, listed once per call whatever the number of
        rules tried against them."""
        if pattern not in self._globs:
            self._globs[pattern] = expand(pattern)
        return self._globs[pattern]

    def mention(self) -> Rule | None:
        """A Bash deny or ask rule whose words the command holds, however
        quoted (see :mod:`.guards`): such a command is not allowed unasked."""
        rules = tuple(r for r in (*self.settings.of("deny"), *self.settings.of("ask"))
                      if r.tool == "Bash" and r.content is not None)
        if self.subject.kind != "command" or not rules:
            return None  # the common case: no words to look for, no work
        for text in spellings(getattr(self.data, "command", ""), self.subject.analysis):
            hit = mentioned(rules, text)
            if hit is not None:
                return hit
        return None

    def broad_guard(self) -> tuple[Rule, str] | None:
        """With deny or ask rules in force, what a broad allow (every Bash
        call, bypass mode, the sandbox's auto-allow, a hook) may not cover:
        a command holding a rule's words, or one that can run what no rule
        sees (a shell fed on stdin, an interpreter, a wrapper, a script,
        find -exec, xargs, sed's e) or whose effects the analyzer does not
        know. From the second review: `printf 'r\155 x' | bash` under
        `Bash` allowed and `Bash(rm:*)` denied removed x."""
        rules = tuple(r for r in (*self.settings.of("deny"), *self.settings.of("ask"))
                      if r.content is not None)
        if not rules or self.subject.kind != "command":
            return None
        hit = self.mention()
        if hit is not None:
            return hit, "the command holds the rule's words in a form the rule does not match"
        analysis = self.subject.analysis
        for sub in analysis.subcommands if analysis is not None else ():
            if sub.read_only or (not sub.argv and not sub.raw_argv):
                continue
            why = runs_programs(sub)
            if why is None and sub.reason and not sub.writes_by_redirection_only \
                    and not _BROAD_COVERS.search(sub.reason):
                why = sub.reason
            if why is not None:
                return rules[0], f"{sub.text.strip()!r}: {why}, which no rule can see into"
        return None

    def unprovable(self) -> str | None:
        """A Bash command whose parts are unknown cannot be shown not to
        match a deny or ask rule: with such rules in force, it goes to a
        person (``echo $(curl …)`` against ``Bash(curl:*)``)."""
        analysis = self.subject.analysis
        if self.subject.kind != "command" or analysis is None or analysis.rules_apply:
            return None
        if analysis.parse is ParseStatus.SIMPLE and not analysis.parse_reasons:
            return None
        if any(r.content is not None and (r.tool == "Bash" or r.tool in PATH_TOOLS)
               for r in (*self.settings.of("deny"), *self.settings.of("ask"))):
            return ("the command cannot be analyzed, so it cannot be shown to stay clear of the "
                    "deny and ask rules")
        return None

    # -- allow -----------------------------------------------------------
    def allowed(self, own: PermissionResult, mode: Mode) -> PermissionResult | None:
        """What allows the call, if anything (``None``: it is asked)."""
        for rule in self.settings.of("allow"):
            if tool_rule_matches(rule, self.tool.name):
                self.broad = True
                return PermissionResult(Decision.ALLOW, rule.source.label,
                                        f"{rule.text} allows every {self.tool.name} call",
                                        rule=rule.text)
        if self.subject.kind == "command" and self.subject.analysis is not None:
            return self._bash(own, mode)
        if own.decision is Decision.ALLOW and self.tool.is_read_only(self.data, self.ctx):
            return own
        content = self._first_content_allow()
        if content is not None:
            return PermissionResult(Decision.ALLOW, content.source.label,
                                    f"{content.text} allows {self.subject.values[0]}",
                                    rule=content.text)
        if (mode is Mode.ACCEPT_EDITS and own.decision is Decision.ALLOW
                and self.subject.kind == "path" and self.subject.access == "write"):
            return PermissionResult(Decision.ALLOW, "mode", "acceptEdits mode: a file edit "
                                    "inside the writable roots", rule="acceptEdits")
        return None

    def _first_content_allow(self) -> Rule | None:
        for rule in self.settings.of("allow"):
            if self._content_match(rule, strict=False) is not None:
                return rule
        return None

    def _bash(self, own: PermissionResult, mode: Mode) -> PermissionResult | None:
        """Every subcommand on its own: allowed by a rule, or a reader inside
        the working directories (or readable by a Read rule), or — in
        acceptEdits — mkdir/touch/mv/cp inside them; every redirection's
        target an Edit the rules or the mode allow."""
        analysis = self.subject.analysis
        if own.decision is Decision.ALLOW:
            return own
        sandboxed = self._sandbox_auto_allow()
        self.broad = sandboxed is not None  # when it is what allows
        if not own.rules_apply:
            self.blocker = own.reason
            return sandboxed
        used: list[str] = []
        for sub in analysis.subcommands:
            why = self._sub_ok(sub, mode, used)
            if why is not None:
                self.blocker = why
                return sandboxed
        self.broad = False
        rules = ", ".join(dict.fromkeys(used))
        source = next((r.source.label for r in self.settings.of("allow") if r.text in used),
                      "mode" if mode is Mode.ACCEPT_EDITS else "analyzer")
        return PermissionResult(Decision.ALLOW, source, "every subcommand is allowed"
                                + (f" ({rules})" if rules else ""), rule=rules or None)

    def _sub_ok(self, sub: Any, mode: Mode, used: list[str]) -> str | None:
        """Why this subcommand is not allowed (``None``: it is)."""
        if not sub.argv and not sub.raw_argv:
            return None  # an assignment alone, or a group's empty shell
        rule = next((r for r in self.settings.of("allow")
                     if r.tool == "Bash" and r.content is not None
                     and any(command_matches(r.content, v) for v in allow_views(sub))), None)
        edits = mode is Mode.ACCEPT_EDITS and sub.argv[:1] and \
            sub.argv[0] in ACCEPT_EDITS_COMMANDS and sub.transparent
        if (rule is not None and "*" in (rule.content or "") and sub.reason
                and not sub.writes_by_redirection_only and not _RULE_COVERS.search(sub.reason)):
            # `Bash(find:*)` allows searching, not what -exec runs: a reader
            # that an option turns into a runner of other programs (find
            # -exec, sed's e, awk's system, rg --pre, git's %G) is another
            # command than the one the rule names. An exact rule covers it.
            return (f"{rule.text} does not cover {sub.text.strip()!r}: {sub.reason}; only an "
                    "exact rule would")
        if rule is not None:
            used.append(rule.text)
        elif not (sub.read_only or sub.writes_by_redirection_only or edits):
            return f"no allow rule matches {sub.text.strip()!r}"
        for p in sub.paths:
            why = self._path_ok(p, mode, by_rule=rule is not None or bool(edits), used=used)
            if why is not None:
                return why
        return None

    def _path_ok(self, p: Any, mode: Mode, *, by_rule: bool, used: list[str]) -> str | None:
        inside = self._inside_working_dirs(p.path)
        if p.access.value == "read":
            if inside or p.path.startswith("?/"):
                return None if inside else f"{p.raw} is read from an unknown directory"
            rule = self._path_rule("Read", p.path)
            if rule is not None:
                used.append(rule.text)
                return None
            return f"{p.path} is read outside the working directories"
        rule = self._path_rule("Edit", p.path)
        if rule is not None:
            used.append(rule.text)
            return None
        if inside and mode is Mode.ACCEPT_EDITS:
            return None
        if inside and by_rule and not p.redirect:
            return None  # what the allowed command itself writes, inside
        what = "redirected to" if p.redirect else "written"
        return (f"{p.path} is {what} without an Edit rule allowing it"
                + ("" if inside else " (outside the working directories)"))

    def _path_rule(self, kind: str, path: str) -> Rule | None:
        tools = _READ_RULES if kind == "Read" else _WRITE_RULES
        for rule in self.settings.of("allow"):
            if rule.tool in tools and rule.content is not None and \
                    self._path(rule, path, fold=False):
                return rule
        return None

    def _inside_working_dirs(self, path: str) -> bool:
        dirs = (*self.ctx.session.allowed_dirs, *self.settings.additional_dirs)
        return any(inside(path, d) for d in dirs)

    def _sandbox_auto_allow(self) -> PermissionResult | None:
        """``sandbox.autoAllowBashIfSandboxed``: a command the sandbox holds
        runs without asking (deny and ask rules, hard limits and sensitive
        paths were already applied)."""
        sandbox = self.settings.sandbox
        if sandbox is None or not sandbox.enabled or sandbox.auto_allow_bash_if_sandboxed is False:
            return None
        return PermissionResult(Decision.ALLOW, "sandbox", "sandboxed: "
                                "sandbox.autoAllowBashIfSandboxed", rule="autoAllowBashIfSandboxed")

    def explain_ask(self, result: PermissionResult) -> PermissionResult:
        """An ask says which part no rule covers."""
        if self.blocker and self.blocker not in result.reason:
            return PermissionResult(result.decision, result.source,
                                    f"{result.reason} ({self.blocker})", rule=result.rule,
                                    check_ids=result.check_ids, hint=result.hint,
                                    suggestions=result.suggestions, warnings=result.warnings,
                                    needs_person=result.needs_person,
                                    rules_apply=result.rules_apply)
        return result


def path_rule_check(settings: PermissionSettings, cwd: str,
                    home: str) -> Callable[[str, str], tuple[str, str] | None]:
    """The Read/Edit deny rules as the file tools ask them (see
    ``SessionContext.rule_denied``): case folded, as a deny is."""
    rules = tuple(r for r in settings.of("deny") if r.tool in PATH_TOOLS and r.content)

    def check(path: str, access: str) -> tuple[str, str] | None:
        for rule in rules:
            if (access == "read") != (rule.tool in _READ_RULES):
                continue
            assert rule.content is not None
            if path_matches(rule.content, path, root=rule.root, cwd=cwd, home=home,
                            fold_case=True):
                return rule.text, rule.source.label
        return None

    return check
