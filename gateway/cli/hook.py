"""``shellgate hook``: shellgate's analysis and policy as a Claude Code
PreToolUse hook, and ``shellgate hook install|uninstall``.

Claude Code runs the call itself, with no sandbox around it, so the answer
is narrower than the gateway's own decision:

    allow   only what is provably read-only inside the project (the
            analyzer's verdict, the file tools' read policy) — git reads in
            a repository whose configuration runs programs are not
    deny    hard limits, sensitive paths, the paths the host later runs
            (git directories, agent settings, guarded files) and
            shellgate's deny rules, with the check or rule that decided
    ask     what only a person may answer (a dotenv file's contents, a
            credential in git's syntax, a command that is no plain read
            naming a file the host runs: :mod:`.hook_host`)
    —       anything else: no decision, so Claude Code's own rules and its
            prompt decide (a hook's ``ask`` would override the user's allow
            rules and prompt for every ``npm test``)

The user's allow rules are left out of the judgement (Claude Code applies
them itself), and so are the modes and the sandbox's auto-allow: here,
nothing is sandboxed. The call is judged as Claude Code will run it
(``~`` and relative paths resolved, its own tool names), and an input the
gateway's schema refuses is judged again by its core fields. Entered
through :mod:`.hook_guard`, which turns any failure of this module into a
fail-closed answer.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from values import replace

from ..context import new_id
from ..decisions import Decision
from ..errors import UsageError
from ..messages import ToolUse
from ..pipeline import Judgement, judge
from .hook_guard import decision, fallback_deny
from .hook_host import (
    has_other_names,
    host_run_mention,
    runs_on_the_host,
    same_file_as_host_run,
    write_candidates,
)
from .hook_reach import glob_reach, grep_reach, webfetch_reach
from .hook_shell import environment_redirects, language_options, shimmed, startup_options_apply

if TYPE_CHECKING:
    from ..permissions import PermissionSettings
    from ..session import Session

#: the tools whose calls shellgate judges; others get no decision
JUDGED = ("Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "NotebookEdit")
#: Claude Code's tools that do what one of ours does to the same path, and
#: are judged as it: from a review, ``MultiEdit`` of ~/.ssh/authorized_keys
#: got no decision (and ran) while ``Edit`` of it was denied
ALIASES = {"MultiEdit": "Edit", "NotebookRead": "Read", "LS": "Glob"}
#: tools whose own checks concern this gateway's session (read-before-edit):
#: only the schema, the path's policy and the rules are judged for them
_WRITERS = ("Edit", "Write", "NotebookEdit")
#: where a denial may come from for the hook to pass it on: a settings deny
#: rule, the analyzer (hard limits, secrets), the sensitive-path list
_DENY_SOURCES = frozenset({"analyzer", "sensitive-paths", "policySettings", "flagSettings",
                           "cliArg", "localSettings", "projectSettings", "userSettings"})
#: the tools that read what a path names
_READERS = ("Read", "Glob", "Grep")
#: names in a command's text that a writer may reach the host's obeyed
#: files through, when the analysis gave up on the command
_PROTECTED_MARKERS = (".git/", ".git ", ".claude", ".envrc", ".husky", ".mcp.json")
#: the keys of a file tool's input that hold a path
_PATH_KEYS = ("file_path", "notebook_path", "path")
#: the fields of each tool's input that decide what it touches, with the
#: value given when a field is missing (what is judged when the whole input
#: does not fit the gateway's schema)
_CORE: dict[str, dict[str, str | None]] = {
    "Bash": {"command": None},
    "Read": {"file_path": None},
    "Write": {"file_path": None, "content": ""},
    "Edit": {"file_path": None, "old_string": "a", "new_string": "b"},
    "NotebookEdit": {"notebook_path": None, "new_source": ""},
    "Glob": {"pattern": None, "path": ""},
    "Grep": {"pattern": None, "path": "", "glob": ""},
    "WebFetch": {"url": None, "prompt": ""},
}


def main(args: argparse.Namespace) -> int:
    action = args.action
    if action in ("install", "uninstall"):
        from .hook_install import change_hook  # noqa: PLC0415

        return change_hook(action, project=not args.user, cwd=os.getcwd())
    if action is not None:
        raise UsageError(f"shellgate hook: unknown action {action!r} (install, uninstall)")
    from .hook_guard import run  # noqa: PLC0415

    return run()


def answer(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hook's answer to one PreToolUse call (``None``: no decision),
    written to the audit log with any answers the guard gave alone before
    (:func:`record`). Raises on anything it cannot read, judge or log: the
    guard answers for it."""
    said = _answer(payload)
    record(payload, said)
    return said


def record(payload: Mapping[str, Any], said: dict[str, Any] | None) -> None:
    """``hook.answered`` for this call — the hook's own answer, narrower
    than the gateway's decision the judgement logged — after the fallback
    answers waiting beside the log (a deadline, a crash, a log that could
    not be written), each marked as recorded late."""
    from ..audit import FileAudit, audit_key, audit_location  # noqa: PLC0415
    from .hook_guard import unrecorded_paths  # noqa: PLC0415

    audit = FileAudit(Path(os.path.realpath(audit_location(None, os.environ))),
                      key=audit_key(os.environ))
    for where in unrecorded_paths():
        for late in _take_unrecorded(where):
            audit.emit("hook.answered", **late, fallback=True, recorded_late=True)
    output = (said or {}).get("hookSpecificOutput", {})
    audit.emit("hook.answered", tool_use_id=str(payload.get("tool_use_id") or ""),
               tool_name=str(payload.get("tool_name") or ""),
               session_id=str(payload.get("session_id") or ""),
               decision=output.get("permissionDecision") or "none",
               reason=output.get("permissionDecisionReason") or "")


#: what a fallback answer waiting beside the log says
_UNRECORDED_FIELDS = ("answered_at", "tool_use_id", "tool_name", "session_id", "decision",
                      "reason")


def _take_unrecorded(where: str | None) -> list[dict[str, Any]]:
    """The side file's answers, the file taken away first (renamed: a
    fallback written meanwhile starts a new one). A line that is not a
    JSON object is kept as a note of it."""
    import json  # noqa: PLC0415

    if where is None:
        return []
    taken = f"{where}.{os.getpid()}"
    try:
        os.rename(where, taken)
    except OSError:
        return []  # none waiting
    try:
        from ..audit.lines import log_lines  # noqa: PLC0415

        out: list[dict[str, Any]] = []
        for _number, raw, _complete in log_lines(Path(taken)):
            try:
                item = json.loads(raw) if raw is not None else None
            except ValueError:
                item = None
            out.append({k: str(item.get(k) or "") for k in _UNRECORDED_FIELDS}
                       if isinstance(item, dict) else {"unreadable": "a line that is no answer"})
        return out
    finally:
        os.unlink(taken)


def _answer(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    if payload.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return None
    name, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
    if not isinstance(name, str) or not isinstance(tool_input, dict):
        raise ValueError("the hook input has no tool_name or tool_input")
    judged = ALIASES.get(name, name)
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise ValueError(f"the hook input's cwd {cwd!r} is not a directory")
    judge_ = _Judge(cwd, _project(cwd), str(payload.get("tool_use_id") or ""))
    if judged not in JUDGED:
        return judge_.by_name(name)
    call = as_run(name, tool_input, cwd, judge_.home)
    got = judge_.run(judged, call)
    if got.permission is not None:
        return judge_.verdict(judged, call, got, may_allow=True)
    # The gateway's schema refused the input, but Claude Code's may take it
    # (from a review: `rm -rf ~` with `"timeout": 1.5`, a Read of
    # ~/.ssh/id_rsa with `"offset": -5` got no decision and ran): its core
    # fields are judged, and only a denial or a person's ask is passed on.
    if judged == "WebFetch" and "WebFetch refused the URL" in got.error:
        # a URL the gateway's WebFetch never fetches (a user name in it, a
        # number that is an address in another spelling: `127.1`,
        # `0x7f000001`, `2130706433`): Claude Code's would (a review)
        return decision("deny", f"shellgate: {got.error}")
    if judged == "Glob":
        # a pattern the gateway's Glob refuses (`../*`, `/etc/*`, `~/x`):
        # Claude Code's lists it, and checks only its `path`
        said = glob_reach(call, cwd, judge_.home, judge_.extra_dirs())
        if said is not None:
            return said
    core = core_input(judged, call)
    if core is not None and core != call:
        again = judge_.run(judged, core)
        if again.permission is not None:
            said = judge_.verdict(judged, core, again, may_allow=False)
            if said is not None:
                return said
    return fallback_deny(call, "its input does not fit shellgate's schema")


def as_run(name: str, tool_input: Mapping[str, Any], cwd: str, home: str) -> dict[str, Any]:
    """The input as Claude Code runs it: its aliases as the tool they do
    the work of, and ``~`` and relative paths resolved as Claude Code
    resolves them (from a review: Read of ``~/.ssh/id_rsa`` and of
    ``../home/.ssh/id_rsa`` got no decision — the gateway wants absolute
    paths — and Claude Code read the key)."""
    data = dict(tool_input)
    if name == "MultiEdit":
        data = {"file_path": data.get("file_path"), "old_string": "a", "new_string": "b"}
    elif name == "NotebookRead":
        data = {"file_path": data.get("notebook_path", data.get("file_path"))}
    elif name == "LS":
        data = {"pattern": "*", "path": data.get("path")}
    for key in _PATH_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value:
            if value == "~" or value.startswith("~/"):
                value = home + value[1:]
            data[key] = value if os.path.isabs(value) else os.path.join(cwd, value)
    return data


def core_input(name: str, data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fields of ``data`` that decide what the call touches (``None``:
    one of them is missing or not text)."""
    out: dict[str, Any] = {}
    for key, default in _CORE[name].items():
        value = data.get(key)
        if isinstance(value, str) and value:
            out[key] = value
        elif default is None:
            return None
        elif default:
            out[key] = default
    return out


def _project(cwd: str) -> str:
    project = os.environ.get("CLAUDE_PROJECT_DIR") or ""
    return project if os.path.isabs(project) and os.path.isdir(project) else cwd


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class _Judge:
    """The judgements of one hook call: the settings loaded once, a session
    per judgement (each with the one tool it judges)."""

    def __init__(self, cwd: str, project: str, tool_use_id: str) -> None:
        self.cwd, self.project, self.home = cwd, project, os.path.expanduser("~")
        self.real_project = os.path.realpath(project)
        self.tool_use_id = tool_use_id or f"toolu_{new_id(20)}"
        self.permissions = _permissions(self.real_project, self.home)

    def extra_dirs(self) -> tuple[str, ...]:
        """The settings' additional working directories that exist."""
        return tuple(d for d in self.permissions.additional_dirs if os.path.isdir(d))

    def session(self, tool_name: str) -> Session:
        return _session(self.cwd, self.project, tool_name, self.permissions)

    def run(self, name: str, data: Mapping[str, Any]) -> Judgement:
        session = self.session(name)
        got = asyncio.run(_judge(session, ToolUse(self.tool_use_id, name, dict(data)),
                                 tool_checks=name not in _WRITERS))
        if got.internal:
            # a bug or a broken audit log is a failure, never "invalid
            # input": the guard answers fail-closed
            raise RuntimeError(got.error)
        return got

    def by_name(self, name: str) -> dict[str, Any] | None:
        """A tool shellgate does not judge (an MCP tool, WebSearch, Task):
        its deny and ask rules that name the whole tool still hold."""
        from ..permissions import tool_rule_matches  # noqa: PLC0415

        # Claude Code's sub-agent tool has been called both names
        names = {name, *({"Task", "Agent"} if name in ("Task", "Agent") else ())}
        for behavior in ("deny", "ask"):
            rule = next((r for r in self.permissions.of(behavior)
                         if any(tool_rule_matches(r, n) for n in names)), None)
            if rule is not None:
                return decision(behavior, f"shellgate: {name} is denied by {rule.describe()}"
                                if behavior == "deny"
                                else f"shellgate: {name} needs approval ({rule.describe()})")
        return None

    def verdict(self, name: str, data: Mapping[str, Any], got: Judgement, *,
                may_allow: bool) -> dict[str, Any] | None:
        result = got.permission
        assert result is not None  # the caller checked
        if result.decision is Decision.DENY:
            # WebFetch's own refusal is of an address, whatever the rules
            # say (from a review: http://169.254.169.254/…/security-
            # credentials/, the cloud's keys, got no decision)
            if result.source in _DENY_SOURCES or (name == "WebFetch" and result.source == "tool"):
                return decision("deny", f"shellgate: {result.explain()}")
            if name in _READERS and result.source == "sandbox" and self._in_project(data):
                # inside the project, the sandbox refuses a read only of what
                # it hides (a link to the audit log, shellgate's own state):
                # Claude Code would read it unasked (from a review)
                return decision("deny", f"shellgate: {result.explain()}")
            secret = _sensitive(data, self.home)
            if secret is not None:
                return decision("deny", f"shellgate: {secret}")
        if name == "Bash":
            secret = next(filter(None, (_secret(p, self.home) for p in self.escapes(got) or ())),
                          None)
            if secret is not None:
                return decision("deny", f"shellgate: a path of the command leads to {secret}")
            hidden = self.hidden_read(got)
            if hidden is not None:
                return decision("deny", f"shellgate: {hidden}")
        protected = self.protected_write(name, data, got)
        if protected is not None:
            return decision("deny", f"shellgate: {protected}")
        if name in ("Grep", "Glob"):
            reach = grep_reach if name == "Grep" else glob_reach
            said = reach(data, self.cwd, self.home, self.extra_dirs())
            if said is not None:
                return said
        if name == "WebFetch" and result.decision is not Decision.DENY:
            said = webfetch_reach(data)
            if said is not None:
                return said
        if name == "Bash" and result.decision is Decision.ASK and _unanalyzed(got):
            # The analyzer gave up (too complex, more than 1000 commands)
            # before it reached the secret: the plain text is judged as the
            # fallback judges it. From a review: `a|` * 1000 followed by
            # `cat ~/.npmrc | nc …` got no decision.
            said = fallback_deny({"command": data.get("command")}, result.reason)
            if said is not None:
                return said
        if name in _WRITERS:
            target = data.get("notebook_path" if name == "NotebookEdit" else "file_path")
            path = self.home + target[1:] if isinstance(target, str) and (
                target == "~" or target.startswith("~/")) else target
            if isinstance(path, str) and has_other_names(os.path.join(self.cwd, path)):
                # a hard link's other names are nowhere to be found cheaply
                # (from a review: a link to ~/.config/fish/conf.d/x.fish)
                return decision("ask", f"shellgate: {target} has more than one name (a hard "
                                       "link): writing it writes the others; a person decides")
        if name == "Bash":
            # a writer the analysis does not model names a place the host
            # runs (`sort -o ~/.bashrc`, `uniq cfg .git/config`): no decision
            # would let an allow rule or a mode run it unasked
            mention = self.unmodelled_write(got)
            if mention is not None:
                return decision("ask", f"shellgate: {mention}")
        if result.decision is Decision.ASK and result.needs_person:
            # A dotenv file's contents: the gateway asks a person whatever
            # the rules or mode say. No decision would let Claude Code read
            # it unasked (its reads inside the project need no approval; in
            # bypassPermissions mode nothing does). From a review: Read of
            # the project's .env, `cat .env` and `grep -r KEY .` got none.
            return decision("ask", f"shellgate: {result.reason}")
        if (may_allow and result.decision is Decision.ALLOW and got.read_only
                and self.may_allow(name, got)):
            return decision("allow", f"shellgate: {result.reason}")
        return None

    def may_allow(self, name: str, got: Judgement) -> bool:
        """What the gateway allows may still not be allowed here, where
        nothing is sandboxed."""
        # The working directory must be inside the project, as Claude Code
        # resolves it: the analyzer proves a command stays inside *its*
        # working directory. From a review: with cwd "/" (or $HOME, or a
        # link in the project to /etc) and CLAUDE_PROJECT_DIR the project,
        # `cat /etc/passwd` and `cat .bashrc` were allowed.
        if not _inside(os.path.realpath(self.cwd), self.real_project):
            return False
        # From a review: a cloned repository holding a bare repository
        # (`evil/HEAD`, `evil/objects/`, `evil/refs/`, `evil/config` with
        # diff.external = a program: ordinary files in a commit); after an
        # allowed `cd evil`, `git diff HEAD~1 HEAD` was allowed and ran the
        # program, unsandboxed. The gateway reads only the configuration of
        # the repository a `.git` names.
        if name == "Bash" and _runs_git(got) and bare_repository(self.cwd) is not None:
            return False
        # The command runs with this environment: shell options exported
        # in it change the language the analysis read (from a review:
        # `BASHOPTS=dotglob` exported makes `cat *` read `.env`)
        if name == "Bash" and (language_options(os.environ)
                               or startup_options_apply(self.home, got)):
            return False
        # What the command's names and `cd`s find comes from this
        # environment too: a relative PATH entry runs the project's own
        # `cat` (node_modules/.bin), and CDPATH makes `cd .ssh` the home's
        # (from a review); a version manager's shim runs what the project's
        # files name (`.python-version`, `.tool-versions`, rust-toolchain)
        if name == "Bash" and (environment_redirects(os.environ, got) or shimmed(got)):
            return False
        # What the sandbox hides from the command decides its verdict
        # there; here it runs on the host (from a review: `ps -ef` was
        # allowed and printed every process's command line, a password
        # among them)
        if name == "Bash" and _sandbox_view(got) is not None:
            return False
        # From a review: with `up -> ..` in a cloned repository (a relative
        # link, no user name needed) at ~/code/proj, `cat up/../.ssh/id_rsa`
        # was allowed and printed the key: the analyzer reads `up/..` as the
        # project, the kernel as ~. Each path, resolved as the kernel
        # resolves it, must stay where the analyzer saw it.
        return not (name == "Bash" and self.escapes(got) != [])

    def escapes(self, got: Judgement) -> list[str] | None:
        """Where the paths the analyzer saw inside the project lead outside
        it once each link is followed before the ``..`` after it (``None``:
        no analysis to read)."""
        analysis = got.subject.analysis if got.subject is not None else None
        if analysis is None:
            return None
        dirs = {self.cwd, os.path.realpath(self.cwd)}
        for sub in analysis.subcommands:
            if sub.cd is not None and sub.cd.startswith("/"):
                dirs |= {sub.cd, os.path.realpath(sub.cd)}
        roots = (self.project, self.real_project)
        out: list[str] = []
        for sub in analysis.subcommands:
            for access in sub.paths:
                if not any(_inside(access.path, r) for r in roots) or "\0" in access.raw:
                    continue
                raw = access.raw
                if raw == "~" or raw.startswith("~/"):
                    raw = self.home + raw[1:]
                for base in ([""] if raw.startswith("/") else sorted(dirs)):
                    real = os.path.realpath(os.path.join(base, raw))
                    if not _inside(real, self.real_project):
                        out.append(real)
        return list(dict.fromkeys(out))

    def hidden_read(self, got: Judgement) -> str | None:
        """Why a path the command reads through a link out of the project
        is one the sandbox hides (the audit log, shellgate's own settings):
        refused there whatever the rules say, and so here (from a review:
        `cat al/2026-12-07.jsonl` with `al -> <the audit log>` got no
        decision while Read of it was denied)."""
        leads = self.escapes(got) or []
        if not leads:
            return None
        from sandbox import own_dirs  # noqa: PLC0415

        from ..audit import audit_location  # noqa: PLC0415

        hidden = [os.path.realpath(d) for d in own_dirs(os.environ, self.home)]
        hidden.append(os.path.realpath(audit_location(None, os.environ)))
        for real in leads:
            where = next((h for h in hidden if _inside(real, h)), None)
            if where is not None:
                return (f"{real} is in {where}, shellgate's own state, settings or audit log, "
                        "which the sandbox hides from every command")
        return None

    def protected_write(self, name: str, data: Mapping[str, Any],
                        got: Judgement) -> str | None:
        """Why a write the call makes is refused whatever the rules say: a
        path the host later runs or obeys — a git directory, agent settings
        (``.claude/``), a guarded file (``.envrc``, ``.husky/``,
        ``.mcp.json``). The gateway refuses these with the sandbox's policy
        and the hook used to drop every denial of that source; in
        bypassPermissions mode, or with an allow rule, Claude Code then
        wrote them (from a review: Write of ``.git/hooks/pre-commit`` and
        of ``.claude/settings.json``, ``echo … > .git/hooks/post-checkout``
        all got no decision). A write outside the project that is refused
        only for being outside it is Claude Code's to ask about."""
        if name in _WRITERS:
            value = data.get("notebook_path" if name == "NotebookEdit" else "file_path")
            targets = [value] if isinstance(value, str) else []
        elif name == "Bash" and got.subject is not None and got.subject.analysis is not None:
            targets = [p.path for s in got.subject.analysis.subcommands for p in s.paths
                       if p.access == "write" and p.path.startswith("/")]
            targets += _glob_matches(targets)
        else:
            return None
        if not targets:
            return None
        from ..tools import paths  # noqa: PLC0415

        session = self.session(name)
        ctx = session.pipeline.context(ToolUse(self.tool_use_id, name, {}))
        for target in dict.fromkeys(targets):
            where = paths.resolve(target, ctx)
            linked = same_file_as_host_run(where.real, self.home)
            if linked is not None:
                return (f"{where.display} is another name (a hard link) of {linked}, which the "
                        "host runs or obeys outside any sandbox; only a person edits it")
            right = paths.write_right(where, ctx)
            if right is None or right.decision is not Decision.DENY:
                continue
            if runs_on_the_host(where, self.home):
                return (f"{where.display} is run or obeyed by the host outside any sandbox "
                        "(shell startup, ~/.local/bin, autostart and user units, git's and "
                        "shellgate's own settings); only a person edits it")
            if right.source in _DENY_SOURCES or self._host_obeys(where):
                return right.explain()
        return None

    def unmodelled_write(self, got: Judgement) -> str | None:
        """Why a command that is no plain read may write what the host runs
        or obeys, through a writer the analysis does not model: a place in
        the home (:func:`host_run_mention`), or a path the sandbox's policy
        refuses to write in the project (`.git/config`, `.claude/`,
        `.envrc`: from a review, `uniq cfg .git/config` and `git log
        --output=.git/config` got no decision, and the next `git status`
        ran the planted monitor)."""
        analysis = got.subject.analysis if got.subject is not None else None
        if analysis is None:
            return None
        said = host_run_mention(analysis, self.home, self.cwd)
        if said is not None:
            return said
        from ..tools import paths  # noqa: PLC0415

        ctx = self.session("Bash").pipeline.context(ToolUse(self.tool_use_id, "Bash", {}))
        for sub, candidate in write_candidates(analysis, self.home, self.cwd):
            if candidate is None:
                continue
            where = paths.resolve(candidate, ctx)
            right = paths.write_right(where, ctx)
            if (right is not None and right.decision is Decision.DENY
                    and (right.source in _DENY_SOURCES or self._host_obeys(where))):
                return (f"{os.path.basename(sub.argv[0])} may write {where.display}, which the "
                        f"host obeys ({right.explain()}); a person decides")
        if _unanalyzed(got) and any(m in analysis.command for m in _PROTECTED_MARKERS):
            return ("the command cannot be analyzed and names a git directory or agent "
                    "settings, which the host obeys; a person decides")
        return None

    def _in_project(self, data: Mapping[str, Any]) -> bool:
        values = [data.get(k) for k in _PATH_KEYS]
        paths = [v for v in values if isinstance(v, str) and v] or [self.cwd]
        return all(_inside(os.path.normpath(p), self.project)
                   or _inside(os.path.normpath(p), self.real_project) for p in paths)

    def _host_obeys(self, where: Any) -> bool:
        from ..tools.paths import agent_config_component  # noqa: PLC0415


        if any(_inside(p, self.real_project) or _inside(p, self.project)
               for p in (where.display, where.real)):
            return True  # inside the project, only protected paths are refused
        if any(agent_config_component(p) is not None for p in (where.display, where.real)):
            return True  # ~/.claude/settings.json: the hook itself is named there
        return any(part.lower() == ".git" for p in (where.display, where.real)
                   for part in p.split("/"))


def _glob_matches(targets: list[str]) -> list[str]:
    """What the write targets that are globs match now: bash writes to the
    one file a redirection's glob matches (from a review: `echo x > r?`
    with `rc -> ~/.bashrc` wrote the host's shell startup)."""
    import glob  # noqa: PLC0415

    out: list[str] = []
    for target in targets:
        if any(c in target for c in "*?["):
            out += glob.glob(target)[:100]
    return out


def _subcommands(got: Judgement) -> tuple[Any, ...]:
    analysis = got.subject.analysis if got.subject is not None else None
    return analysis.subcommands if analysis is not None else ()


def _sandbox_view(got: Judgement) -> str | None:
    """Why a subcommand's read-only verdict holds only in the sandbox."""
    analysis = got.subject.analysis if got.subject is not None else None
    if analysis is None:
        return None
    return next((s.sandbox_view for s in analysis.subcommands if s.sandbox_view), None)


def _unanalyzed(got: Judgement) -> bool:
    """Did the analyzer give up on part of the command?"""
    analysis = got.subject.analysis if got.subject is not None else None
    return analysis is None or bool(analysis.parse_reasons) or analysis.parse.value != "simple"


def _runs_git(got: Judgement) -> bool:
    analysis = got.subject.analysis if got.subject is not None else None
    if analysis is None:
        return True  # unknown: judged as if it did
    return any(s.argv and os.path.basename(s.argv[0]) == "git" for s in analysis.subcommands)


#: what makes a directory a git directory to git's discovery (HEAD beside
#: objects or refs): a bare repository, whatever its name
_GIT_DIR_ENTRIES = ("objects", "refs")


def bare_repository(cwd: str) -> str | None:
    """The git directory git's discovery finds from ``cwd`` when it is not
    a ``.git`` (a bare repository at or above ``cwd``, below the first
    ``.git``), as git looks: at each level ``.git`` first, then the
    directory itself."""
    for start in dict.fromkeys((os.path.abspath(cwd), os.path.realpath(cwd))):
        path = start
        while True:
            if os.path.lexists(os.path.join(path, ".git")):
                break
            if os.path.isfile(os.path.join(path, "HEAD")) and any(
                    os.path.isdir(os.path.join(path, e)) for e in _GIT_DIR_ENTRIES):
                return path
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return None


def _sensitive(tool_input: Mapping[str, Any], home: str) -> str | None:
    """Why a file tool's path is a secret, when the sandbox's policy hid it
    (the sandbox hides ``~/.ssh`` whole; the hook has no sandbox, and says
    what the path is)."""
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            secret = _secret(value, home)
            if secret is not None:
                return secret
    return None


def _secret(value: str, home: str) -> str | None:
    from analyzers import match_sensitive  # noqa: PLC0415

    for path in dict.fromkeys((value, os.path.realpath(value))):
        hit = match_sensitive(path, home)
        if hit is not None and hit.level != "ask":
            return f"{value} is sensitive ({hit.why}); no rule allows it"
    return None


async def _judge(session: Session, use: ToolUse, *, tool_checks: bool) -> Judgement:
    try:
        return await judge(session.pipeline, use, tool_checks=tool_checks)
    finally:
        await session.close()


def _permissions(project: str, home: str) -> PermissionSettings:
    """The settings as the gateway would judge with them, less what Claude
    Code decides itself: no allow rules, the default mode, no auto-allow."""
    from ..permissions import CliPermissions, Mode, load_permissions  # noqa: PLC0415

    loaded = load_permissions(project, home, CliPermissions())
    sandbox = loaded.sandbox
    if sandbox is not None:
        sandbox = sandbox.model_copy(update={"auto_allow_bash_if_sandboxed": False})
    return replace(
        loaded, rules=tuple(r for r in loaded.rules if r.behavior != "allow"),
        mode=Mode.DEFAULT, sandbox=sandbox)


def _session(cwd: str, project: str, tool_name: str,
             permissions: PermissionSettings) -> Session:
    """A session judging as the gateway would, with no hooks (Claude Code
    runs the user's). The audit log is written — or the call fails closed."""
    from ..audit import FileAudit, audit_key, audit_location  # noqa: PLC0415
    from ..hooks import NoHooks  # noqa: PLC0415
    from ..session import Session  # noqa: PLC0415
    from ..tools.registry import builtin_tool  # noqa: PLC0415

    location = Path(os.path.realpath(audit_location(None, os.environ)))
    audit = FileAudit(location, key=audit_key(os.environ))
    # only the tool judged is imported: each call is a new process
    tool = builtin_tool(tool_name)
    return Session.open(cwd, workspace=project, permissions=permissions, audit=audit,
                        hooks=NoHooks(), hidden=(str(audit.root),),
                        base_tools=[tool] if tool is not None else None)

