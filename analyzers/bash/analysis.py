"""``analyze_bash``: one command line in, one frozen verdict out.

Order of judgement (first match decides):

1. **deny** — a hard limit (``rm -rf /``, ``mkfs``, ``dd of=/dev/sda``) or a
   sensitive path (``~/.ssh``, ``/proc/*/environ`` …) anywhere in the
   command, including inside substitutions, control flow and ``bash -c``
   payloads. No rule or mode may turn these into an allow.
2. **allow** — only when the parse is fully static, no security check fired,
   there are at most 50 subcommands, every subcommand is a known reader with
   known-safe options, and every path lies inside the working directory (or
   an extra read directory).
3. **ask** — everything else, with the first reason that blocked an allow.
"""

from __future__ import annotations

import posixpath

from regexes import fnmatchcase
from values import field, replace, valueclass

from ..errors import InvalidArgument
from .checks import CheckInput, Finding, run_checks
from .classify import classify_command, classify_pipeline
from .commands import command_facts, find_prints_only_paths, glob_problem, option_glob_trees
from .destructive import HardLimit, destructive_warnings, hard_limits
from .ir import ParseResult, ParseStatus, SimpleCommand
from .legacy import parse_legacy
from .memo import Results, memo
from .parser import parse_tree_sitter, tree_sitter_available
from .paths import Access, PathAccess, is_inside, judge_path, resolve, spell
from .prefixes import MAX_SUGGESTED_RULES, suggest_rule
from .quoting import extract_quoted_content
from .result import BashAnalysis, Subcommand, Verdict
from .sandbox_views import sandbox_view
from .sensitive import sensitive_anywhere, sensitive_below
from .workspace import (
    UNRESOLVED,
    TreeRead,
    WorkspaceFacts,
    dotenv_reached,
    file_links_reached,
    links_followed,
)
from .wrappers import SAFE_ENV_VARS, Unwrapped, base_name, strip_wrappers

#: Above this many subcommands nothing is analyzed one by one and nothing is
#: allowed (a 60-part `&&` chain with `rm` at the end is the known give-up).
MAX_SUBCOMMANDS = 50
#: Commands longer than this are not parsed at all (bounded time per call).
MAX_COMMAND_CHARS = 100_000
#: `bash -c "bash -c '...'"` nesting analyzed at most this deep.
MAX_SHELL_NESTING = 8

#: Bare assignments that change how the shell itself behaves.
_SHELL_SPECIAL_VARS = frozenset({"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy"})


@valueclass(frozen=False, slots=False)
class _Acc:
    """Everything gathered while walking one command line and its payloads."""

    subcommands: list[Subcommand] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    hard_limits: list[HardLimit] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    legacy: bool = False
    #: what the caller found around the command (``None``: nobody looked)
    workspace: WorkspaceFacts | None = None


def analyze_bash(
    command: str,
    cwd: str,
    *,
    extra_read_dirs: tuple[str, ...] | list[str] = (),
    home: str | None = None,
    use_tree_sitter: bool = True,
    workspace: WorkspaceFacts | None = None,
) -> BashAnalysis:
    """Analyze one bash command line that would run in ``cwd``.

    ``home`` is the home directory the command will see (``~``, ``$HOME``);
    when ``None`` it is symbolic: ``~`` paths are never inside the working
    directory and still match the sensitive list. ``use_tree_sitter=False``
    forces the legacy splitter (as when the grammar is unavailable).
    ``workspace``: what the caller found around ``cwd`` (dotenv files, the
    repository's program-running configuration; see :class:`WorkspaceFacts`).
    ``None`` means nobody looked: a command that reads the contents of a
    directory tree (``grep -r``, ``find -exec cat``) is taken to reach a
    dotenv file and needs a person.
    """
    if not isinstance(command, str):
        raise InvalidArgument("command must be a string")
    if not cwd.startswith("/"):
        raise InvalidArgument(f"cwd must be an absolute path, got {cwd!r}")
    extra = tuple(extra_read_dirs)
    ts = use_tree_sitter and tree_sitter_available()
    key = (command, cwd, extra, home, ts, workspace)
    try:
        kept: BashAnalysis | None = _RESULTS.get(key)
    except TypeError:  # an input that cannot be a key (not frozen): no memo
        return _analyze(command, cwd, extra, home, ts, workspace)
    if kept is None:
        kept = _analyze(command, cwd, extra, home, ts, workspace)
        _RESULTS.put(key, kept, _weight(kept))
    return kept


#: finished analyses, by every input of :func:`analyze_bash` (a stream of
#: agent commands repeats `git status`, `ls`, `npm test`; the gateway and
#: `check --jsonl` analyze a tree read twice): about 16 MB at most
_RESULTS = Results(budget=1 << 14, entries=4096)


def _weight(analysis: BashAnalysis) -> int:
    """What an analysis costs to keep, roughly in kilobytes: its strings
    (twice: text and what is made of it) and ~200 bytes an object. From a
    review: counted in paths, `cat /<99k chars>/{1..256}` weighed 451 and
    sixty of them held 200 MB under a 16 MB budget."""
    size = 2 * len(analysis.command)
    for s in analysis.subcommands:
        size += 400 + len(s.text) + sum(map(len, s.argv)) + sum(map(len, s.raw_argv))
        size += sum(200 + len(p.path) + len(p.raw) for p in s.paths)
        size += sum(200 + len(t.root) for t in s.trees)
    return 1 + size // 1024


def _analyze(
    command: str,
    cwd: str,
    extra_read_dirs: tuple[str, ...],
    home: str | None,
    ts: bool,
    workspace: WorkspaceFacts | None,
) -> BashAnalysis:
    """:func:`analyze_bash` once its inputs are checked and not memoized."""
    cwd = posixpath.normpath(cwd)
    if cwd.startswith("//"):
        cwd = "/" + cwd.lstrip("/")
    home_s = posixpath.normpath(home) if home else "~"
    roots = (cwd, *(posixpath.normpath(d) for d in extra_read_dirs if d.startswith("/")))
    if not command.strip():
        return BashAnalysis(
            command, cwd, ParseStatus.SIMPLE, Verdict.ASK, "empty command", "nothing to run"
        )
    if len(command) > MAX_COMMAND_CHARS:
        return BashAnalysis(
            command,
            cwd,
            ParseStatus.TOO_COMPLEX,
            Verdict.ASK,
            f"command is {len(command)} characters, more than {MAX_COMMAND_CHARS} are not analyzed",
            "only an explicit approval can run it",
            parse_reasons=("command too long",),
        )
    acc = _Acc(workspace=workspace)
    status = _walk(command, (cwd,), home_s, roots, acc, depth=0, via=None, ts=ts)
    programs = workspace.repo_programs if workspace is not None else ()
    if programs:
        acc.subcommands = [_hostile_repository(s, programs) for s in acc.subcommands]
    secrets = workspace.config_secrets if workspace is not None else ()
    if secrets:
        acc.subcommands = [_secret_read(s, secrets, cwd) for s in acc.subcommands]
    return _decide(command, cwd, status, acc, home_s)


#: git invocations that read nothing of the work tree or its configuration's
#: programs: safe in a repository whose configuration runs programs (not
#: rev-parse: in a partial clone, `git rev-parse HEAD:file` fetches the
#: missing object through the remote's transport, which may be a command)
_GIT_CONFIG_FREE = frozenset({"--version", "version", "config", "help"})


def reads_with_git(analysis: BashAnalysis) -> bool:
    """Would git's configuration change this analysis? (Some subcommand is
    a git read it could make run a program or print a credential, or a
    read that may reach a configuration file.) The gateway asks git about
    the repository only then."""
    return any(_hostile_repository(s, ("?",)) is not s
               or _secret_read(s, _PROBE) is not s for s in analysis.subcommands)


#: git reads that print configuration values: `git config` in every form,
#: and the remotes' URLs (userinfo in a URL is a credential)
_URL_READS = frozenset({"remote", "ls-remote"})
_LISTINGS = frozenset({"list", "--list", "-l", "--get-regexp", "--get-urlmatch"})
#: git reads that print the content of the work tree's files (or of their
#: committed versions)
_CONTENT_READS = frozenset({"diff", "log", "show", "grep", "blame", "annotate", "whatchanged",
                            "format-patch", "cat-file", "archive", "stash", "range-diff"})
#: names of the files git's configuration lives in
GIT_CONFIG_NAMES = frozenset({"config", "config.worktree", ".gitconfig"})
#: secrets that ask whether a read could print any
_PROBE = (("?", "?", "?"),)
#: the scopes `--local` and `--worktree` read
_OWN_SCOPES = frozenset({"local", "worktree"})
#: the prefix of the scope the gateway gives a file an include names that
#: git does not read in the directory asked about (another branch's,
#: another gitdir's), before the including file's scope
_INACTIVE = "inactive:"
Secrets = tuple[tuple[str, str, str], ...]


def _secret_read(s: Subcommand, secrets: Secrets, cwd: str | None = None) -> Subcommand:
    """Attack (from a review): `git config --local --list`, `--get-regexp
    .`, `--get-urlmatch`, `git config http.proxy` and `cat .git/config`
    printed an `http.*.extraheader` token or a proxy password. A read that
    may print an entry holding a credential is a sensitive read: asked.
    ``secrets`` of :data:`_PROBE` asks whether a read could be one."""
    if not s.read_only:
        return s
    why = _prints_secret(s, secrets, cwd)
    if why is None:
        return s
    return replace(s, read_only=False, reason=why)


def _prints_secret(s: Subcommand, secrets: Secrets, cwd: str | None) -> str | None:
    # git could not say (a repository of another owner, a FIFO include):
    # every read that could print the configuration asks, as for the probe
    unknown = secrets == _PROBE or any(k == "<unknown>" for _, k, _ in secrets)
    files = {f for f, _, _ in secrets}
    if s.argv and s.argv[0] == "git":
        args = s.argv[1:]
        sub = next((a for a in args if not a.startswith("-")), "")
        rest = args[args.index(sub) + 1:] if sub else ()
        found = _git_prints(sub, rest, secrets, cwd) if not unknown else (
            f"git could not say what its configuration holds ({_first(secrets)})"
            if sub in ("config", *_URL_READS) else None)
        if found is not None:
            return found
    for p in s.paths:
        # any file holding one (an included `creds.inc` too), by name or
        # by a glob that may match it (`cat .git/c*`)
        hit = next((f for f in files if p.path == f or (p.glob and fnmatchcase(f, p.path))),
                   None)
        if hit is not None or (unknown and (p.glob or posixpath.basename(p.path)
                                            in GIT_CONFIG_NAMES or "/.git/" in p.path)):
            return f"{p.path} holds credentials ({_first(secrets)})"
    for tree in s.trees:
        root = tree.root.rstrip("/") + "/"
        if unknown or any(f.startswith(root) for f in files):
            return f"reading the files below {tree.root} reaches git configuration holding " \
                   f"credentials ({_first(secrets)})"
    return None


def _git_prints(sub: str, rest: tuple[str, ...], secrets: Secrets,
                cwd: str | None = None) -> str | None:
    """Would `git SUB REST` print one of ``secrets``?"""
    # a file an include names that git does not read here is printed by
    # no listing or remote read, only by reading the file itself
    active = tuple(e for e in secrets if not e[2].startswith(_INACTIVE))
    if sub in ("config", *_URL_READS):
        return _config_prints(sub, rest, active)
    if sub in _CONTENT_READS:
        # a file of the work tree that the configuration includes is
        # content git prints too (from a review: `git diff`, `git log -p`
        # and `git grep` printed the token of a tracked `conf/creds.inc`;
        # one included only on another branch is printed all the same)
        tree_files = tuple(e for e in secrets if "/.git/" not in e[0] and (
            e[2].removeprefix(_INACTIVE) in _OWN_SCOPES
            or (cwd is not None and is_inside(e[0], cwd))))
        if tree_files:
            return f"{tree_files[0][0]} holds git credentials ({_first(tree_files)}) and " \
                   f"git {sub} may print its content"
    return None


def _config_prints(sub: str, rest: tuple[str, ...], secrets: Secrets) -> str | None:
    """Would `git config REST` or a remote read print one of ``secrets``?"""
    if sub == "config":
        if "--local" in rest or "--worktree" in rest:
            secrets = tuple(e for e in secrets if e[2] in _OWN_SCOPES)
        keys = {_norm_key(k) for _, k, _ in secrets}
        listing = any(a in _LISTINGS or a.startswith("--get-regexp") for a in rest)
        named = {_norm_key(a) for a in rest if not a.startswith("-")}
        if secrets and ((listing and "--name-only" not in rest) or named & keys):
            return f"git configuration here holds credentials ({_first(secrets)}) and " \
                   f"git config {' '.join(rest)} may print them"
    if sub in _URL_READS:
        urls = tuple(e for e in secrets if _norm_key(e[1]).endswith(("url", "insteadof")))
        if urls:
            return f"a remote's URL here carries credentials ({_first(urls)}); git {sub} prints it"
    return None


def _norm_key(key: str) -> str:
    """git's own case: section and variable lower-cased, a subsection as
    written."""
    section, _, rest = key.partition(".")
    middle, _, name = rest.rpartition(".")
    return f"{section.lower()}.{middle + '.' if middle else ''}{name.lower()}"


def _first(secrets: Secrets) -> str:
    where, key, _ = secrets[0]
    return f"{key} in {where}"


def _hostile_repository(s: Subcommand, programs: tuple[str, ...]) -> Subcommand:
    """Attack (from a review): `git status`, `git diff` and friends refresh
    the index and run `core.fsmonitor`, clean filters, textconv,
    `diff.external` and the pager from the repository's configuration. In
    the sandbox that configuration is protected; under `shellgate hook`
    (the command runs unsandboxed) a cloned repository's config runs."""
    if not s.read_only or not s.argv or s.argv[0] != "git":
        return s
    sub = next((a for a in s.argv[1:] if not a.startswith("-")), "")
    if sub in _GIT_CONFIG_FREE or s.argv[1:] == ("--version",):
        return s
    return replace(
        s, read_only=False,
        reason=f"the repository's configuration runs programs ({programs[0]}), and git {sub} "
               "may run them")


@valueclass
class _Read:
    """What one command line is before it is judged: its parse, each
    command's unwrapped argv and the security checks' findings, none of
    which depends on the workspace facts or on anything but the inputs of
    :func:`_read`."""

    parse: ParseResult
    unwrapped: tuple[Unwrapped, ...]
    findings: tuple[Finding, ...]


@memo(64)
def _read(
    command: str, home: str, cwd: str | None, ts: bool,
    variables: tuple[tuple[str, str], ...] | None,
) -> _Read:
    """Memoized: the gateway analyzes a command twice when it reads a whole
    tree (once to learn that, again with the dotenv walk's facts), and an
    agent repeats its commands; every value here is frozen, and a change of
    any input (the cwd, the home, a payload's positional variables) is a
    new entry."""
    parse = (parse_tree_sitter if ts else parse_legacy)(
        command, home=home, cwd=cwd, variables=dict(variables) if variables is not None else None)
    unwrapped = tuple(strip_wrappers(cmd.argv, cmd.assignments) for cmd in parse.commands)
    text = parse.text or command
    findings = run_checks(CheckInput(
        text=text, original=command, views=extract_quoted_content(text), parse=parse,
        argvs=tuple(u.argv for u in unwrapped)))
    return _Read(parse, unwrapped, tuple(findings))


def _walk(
    command: str,
    cwds: tuple[str | None, ...],
    home: str,
    roots: tuple[str, ...],
    acc: _Acc,
    *,
    depth: int,
    via: str | None,
    ts: bool,
    variables: dict[str, str] | None = None,
) -> ParseStatus:
    read = _read(command, home, cwds[0] if len(cwds) == 1 else None, ts,
                 tuple(variables.items()) if variables is not None else None)
    parse = read.parse
    acc.reasons.extend(parse.reasons)
    if parse.status is ParseStatus.PARSE_UNAVAILABLE:
        acc.legacy = True
    worst = parse.status
    state: list[tuple[tuple[int, ...], tuple[str | None, ...]]] = [((), cwds)]
    argvs: list[tuple[str, ...]] = []
    commands = parse.commands
    for index, cmd in enumerate(commands):
        here = _cwds_for(cmd, state)
        unwrapped = read.unwrapped[index]
        argvs.append(unwrapped.argv)
        payload_ok = True
        if unwrapped.shell_payload is not None:
            if depth + 1 > MAX_SHELL_NESTING:
                acc.reasons.append("shell payloads nested too deeply")
                worst = ParseStatus.TOO_COMPLEX
                payload_ok = False
            else:
                before = len(acc.subcommands), len(acc.findings), len(acc.reasons)
                nested_status = _walk(
                    unwrapped.shell_payload,
                    here,
                    home,
                    roots,
                    acc,
                    depth=depth + 1,
                    via=" ".join(unwrapped.wrappers),
                    ts=ts,
                    variables=_positional_variables(unwrapped),
                )
                if nested_status is ParseStatus.TOO_COMPLEX:
                    worst = ParseStatus.TOO_COMPLEX
                payload_ok = (
                    len(acc.findings) == before[1]
                    and len(acc.reasons) == before[2]
                    and all(s.read_only for s in acc.subcommands[before[0] :])
                )
                # `eval 'cd ..'` moves this shell (a `bash -c` child does
                # not): what follows runs somewhere unknown (from a review)
                moves = [s.cd for s in acc.subcommands[before[0]:] if s.cd is not None]
                if "eval" in unwrapped.wrappers and moves:
                    targets = [c for m in moves for c in _cd_target(m, here, home)]
                    _enter(state, cmd.scope, tuple(dict.fromkeys((*here, *targets, None))))
        stdin_find = (
            argvs[index - 1]
            if unwrapped.null_separated
            and _piped_from_alone(commands, index)
            and argvs[index - 1][:1] == ("find",)
            and find_prints_only_paths(argvs[index - 1])
            else None
        )
        sub = _subcommand(cmd, unwrapped, here, home, roots, via, payload_ok, stdin_find,
                          acc.workspace)
        acc.subcommands.append(sub)
        redirect_targets = tuple(
            r.target.value
            for r in cmd.redirects
            if r.is_output and r.target is not None and r.target.value is not None
        )
        acc.hard_limits.extend(
            hard_limits(
                (base_name(unwrapped.argv[0]), *unwrapped.argv[1:]) if unwrapped.argv else (),
                here,
                home,
                redirect_targets,
            )
        )
        if sub.cd is not None and not cmd.nested:
            # the commands of a later `<(…)` come first in the list and run
            # beside it (`&`): the cd still holds for the command reading
            # them (from a review: `cd sub; grep -r K <(true) inner` was
            # judged in the old directory)
            later = [c for c in commands[index + 1:] if c.substituted == cmd.substituted]
            nxt = later[0].op if later else None
            if nxt not in ("&", "|", "|&"):
                new = _cd_target(sub.cd, here, home)
                if _enter(state, cmd.scope, tuple(dict.fromkeys((*here, *new)))):
                    acc.reasons.append(f"more than {MAX_CWDS} directories it may run in")
                    worst = ParseStatus.TOO_COMPLEX
    acc.findings.extend(read.findings)
    return worst


def _walk_reaches(
    tree: TreeRead,
    root: str,
    cwd: str | None,
    cwds: tuple[str | None, ...],
    home: str,
    roots: tuple[str, ...],
    workspace: WorkspaceFacts | None,
    leads: list[str],
) -> tuple[list[PathAccess], str | None]:
    """What a walk of ``root`` (resolved from ``tree.root`` in ``cwd``)
    reaches that needs judging: dotenv files, sensitive entries below it
    (at the root as written and where a link leads), and why it cannot be
    allowed when it lists through a link to a directory."""
    climbs = _climbs_through_link(tree.root, cwd, home, workspace)
    why = None
    if UNRESOLVED in leads:
        why = f"where {tree.root} leads cannot be looked up (a directory on its way is not " \
              "searchable, or links loop)"
        leads = [p for p in leads if p != UNRESOLVED]
    if not tree.content and (climbs or links_followed(root, tree, workspace)):
        # a listing through a link lists wherever it leads (from a review:
        # `ls -aR up`, `find -L .` with up -> .. listed ~/.ssh)
        why = f"lists below {root} through a link to a directory"
    reached = [replace(p, raw=f"{_BELOW}{root}", below=True)
               for path in dotenv_reached(root, tree, None if climbs else workspace)
               for p in judge_path(path, Access.READ, cwds, home, roots)]
    # a link to a file below the root is read where it leads (`find sub
    # -exec cat {} +` with sub/k.txt -> ~/.ssh/id_rsa printed the key)
    reached.extend(replace(p, raw=f"{_BELOW}{root} (through {link})", below=True)
                   for link, target in file_links_reached(root, tree, workspace)
                   for p in judge_path(target, Access.READ, cwds, home, roots))
    # the walk starts where the root leads: that place is read (`grep -r K
    # l/..` with l -> . walks the project's parent)
    reached.extend(replace(p, raw=f"{tree.root} (through a link)")
                   for lead in leads for p in judge_path(lead, Access.READ, cwds, home, roots))
    for start in dict.fromkeys((root, *leads)):
        walk = replace(tree, root=start)
        # the entry itself is the judgement: no second match needed
        # (`find / -name x` reaches some 260 entries)
        reached.extend(PathAccess(f"{_BELOW}{root}", pattern, Access.READ, False, entry,
                                  glob=True, below=True)
                       for pattern, entry in sensitive_below(start, home)
                       if walk.enters(pattern, 1) or (walk.content and walk.reaches(pattern)))
    return reached, why


def _climbs_through_link(raw: str, cwd: str | None, home: str,
                         workspace: WorkspaceFacts | None) -> bool:
    """Does ``raw`` go up (``..``) out of a link to a directory? The kernel
    follows the link first: `grep -r K shared/..` with `shared ->
    /elsewhere/dir` walks /elsewhere (from a review), while the path read
    as text comes back to the project."""
    if workspace is None or not workspace.dir_links or ".." not in raw.split("/"):
        return False
    parts = raw.split("/")
    for k, part in enumerate(parts):
        if part == ".." and k > 0:
            before = resolve("/".join(parts[:k]) or "/", cwd, home)
            if before is not None and any(
                    before == link or before.startswith(link + "/")
                    for link in workspace.dir_links):
                return True
    return False


def _piped_from_alone(commands: tuple[SimpleCommand, ...], index: int) -> bool:
    """Is the command before ``commands[index]`` the whole left side of the
    pipe into it? Not in ``{ printf -- '-f/etc/shadow\\0'; find . -print0; }
    | xargs -0 grep x``, where the group's first command feeds the pipe too:
    each element of a pipeline has a scope of its own, shared by every
    command of a group."""
    if index == 0 or commands[index].op != "|" or commands[index].nested:
        return False
    cmd, prev = commands[index], commands[index - 1]
    return (
        not prev.nested
        # `{ printf -- '/etc/passwd\\0'; } 2< <(find . -print0) | xargs -0 cat`:
        # the find is a group's redirection, the printf feeds the pipe
        # (from a review)
        and not prev.substituted
        and not cmd.substituted
        and len(prev.scope) == len(cmd.scope)
        and prev.scope != cmd.scope
        and sum(1 for c in commands if c.scope == prev.scope) == 1
        # `… | xargs -0 cat < names`: the redirection, not the pipe, is
        # xargs's input (from a review: a file of NUL-separated names
        # printed /etc/passwd); `find … 2>&1 |` mixes in other text
        and all(r.is_output for r in cmd.redirects)
        and all(r.fd == 2 and not r.is_fd_dup for r in prev.redirects)
    )


def _positional_variables(unwrapped: Unwrapped) -> dict[str, str] | None:
    """``bash -c 'cat "$1"' name FILE``: ``$0`` is ``name``, ``$1`` is FILE,
    unset positional parameters are empty. ``eval`` keeps the caller's."""
    if "eval" in unwrapped.wrappers:
        return None
    words = unwrapped.positional or (unwrapped.wrappers[-1] if unwrapped.wrappers else "sh",)
    out = {str(i): "" for i in range(1, 10)}
    out.update({str(i): w for i, w in enumerate(words[:10])})
    return out


def _path_candidates(word: str) -> list[str]:
    """Parts of an operand of an unknown command that may name a file:
    the word, the value after ``=``, and a curl-style ``@file``."""
    out = []
    for candidate in (word, word.split("=", 1)[1] if "=" in word else ""):
        part = candidate[1:] if candidate.startswith(("@", "<")) else candidate
        if part.startswith("-") or not part:
            continue
        if part.startswith(("/", "~", "./", "../")) or "/" in part or part in (".", ".."):
            out.append(part)
    return list(dict.fromkeys(out))


def _cwds_for(
    cmd: SimpleCommand, state: list[tuple[tuple[int, ...], tuple[str | None, ...]]]
) -> tuple[str | None, ...]:
    for scope, cwds in reversed(state):
        if cmd.scope[: len(scope)] == scope:
            return cwds
    return state[0][1]


#: working directories a command may run in, past which it is "unknown":
#: each `cd` may fail, so the candidates grow by one per cd, and every later
#: command is judged in each — `cd a; cd a; … ls` (4,000 of them, from the
#: fuzzer) took seconds, quadratic in the chain's length
MAX_CWDS = 32


def _enter(state: list[tuple[tuple[int, ...], tuple[str | None, ...]]],
           scope: tuple[int, ...], cwds: tuple[str | None, ...]) -> bool:
    """Record that commands in ``scope`` from here on run in ``cwds``; True
    when there were too many to follow. Then the command cannot be analyzed
    (a person decides), and the first candidates — the oldest: where it
    started, the first `cd`s' targets — are kept beside an unknown one, so
    that their hard limits and sensitive paths still deny (from two
    reviews: collapsing to the unknown directory alone, or to a chosen few,
    let `cd ..; cd x; … rm -rf *` past the hard limit for the home)."""
    overflow = len(cwds) > MAX_CWDS
    if overflow:
        cwds = (*[c for c in cwds if c is not None][:MAX_CWDS], None)
    if state and state[-1][0] == scope and len(state) > 1:
        state[-1] = (scope, cwds)  # the older entry is shadowed for good
    else:
        state.append((scope, cwds))
    return overflow


def _option_named(argv: tuple[str, ...], paths: list[PathAccess],
                  workspace: WorkspaceFacts | None) -> str | None:
    """A glob that starts a word before ``--`` and matches a file named like
    an option here becomes that option (from a review: with a file named
    `-r` beside a directory, `grep KEY *` read the directory's .env)."""
    if workspace is None or not workspace.option_globs:
        return None
    words = argv[1:argv.index("--")] if "--" in argv else argv[1:]
    for p in paths:
        if (p.glob and p.raw in words and p.raw[:1] in ("*", "?", "[")
                and p.path in workspace.option_globs):
            return f"glob {p.raw!r} matches a file named like an option here, which " \
                   f"{argv[0]} would take as one"
    return None


def _through_link(raw: str, leads_to: str, access: Access, cwds: tuple[str | None, ...],
                  home: str, roots: tuple[str, ...]) -> list[PathAccess]:
    """Where ``raw`` leads through a link, judged; a place the caller could
    not look up (an unsearchable directory on the way, a loop) is judged as
    an unknown place."""
    shown = f"{raw} (through a link)"
    if leads_to == UNRESOLVED:
        return [PathAccess(shown, f"?/{raw}", access, False, sensitive_anywhere(raw, home))]
    return [replace(q, raw=shown) for q in judge_path(leads_to, access, cwds, home, roots)]


def _cd_target(target: str, cwds: tuple[str | None, ...], home: str) -> tuple[str | None, ...]:
    if target in ("", "-"):
        return (None,)  # dynamic or $OLDPWD: unknown from here on
    if target.startswith("~") and not target.startswith("~/") and ".." in target.split("/"):
        return (None,)  # `cd ~name/..`: that user's real home is not in the text
    return tuple(resolve(target, c, home) for c in cwds)


def _subcommand(
    cmd: SimpleCommand,
    unwrapped: Unwrapped,
    cwds: tuple[str | None, ...],
    home: str,
    roots: tuple[str, ...],
    via: str | None,
    payload_ok: bool,
    stdin_find: tuple[str, ...] | None = None,
    workspace: WorkspaceFacts | None = None,
) -> Subcommand:
    argv = unwrapped.argv
    globs = {w.value for w in cmd.words if w.glob and w.value is not None}
    reason: str | None = None
    paths: list[PathAccess] = []
    trees: list[TreeRead] = []

    # `diff <(ls a) <(ls b)`: the words are pipes from commands judged on
    # their own, not files
    pipes = {w.value for w in (*cmd.words, *(r.target for r in cmd.redirects if r.target))
             if w.pipe}

    judged: set[tuple[str, Access]] = set()

    # one path may lead to several places: a glob's files, each through its
    # own link (`cat gl/*` with gl/a -> /elsewhere/secret)
    real: dict[str, list[str]] = {}
    for link, leads in workspace.real_paths if workspace is not None else ():
        real.setdefault(link, []).append(leads)

    def add(raw: str, access: Access, *, redirect: bool = False) -> None:
        if raw == "" or (raw in pipes and access is not Access.WRITE) or (raw, access) in judged:
            return
        judged.add((raw, access))
        found = judge_path(raw, access, cwds, home, roots, glob=raw in globs)
        if redirect:
            # a rule allowing the command is not a rule allowing this file:
            # the gateway checks a redirection's target as an Edit of it
            found = [replace(p, redirect=True) for p in found]
        paths.extend(found)
        # the path a link leads to is judged too (`cat up/.ssh/id_rsa`, up -> ..)
        for p in found:
            for leads_to in real.get(p.spelled or p.path, ()):
                paths.extend(_through_link(raw, leads_to, access, cwds, home, roots))

    if any(w.value is None for w in cmd.words):
        reason = "a word's value is only known at run time"
    elif any(w.brace for w in cmd.words):
        reason = "brace expansion changes the argument list"
    elif cmd.nested:
        reason = "inside a substitution or control-flow body"
    reason = reason or unwrapped.problem
    cd: str | None = None
    for raw in unwrapped.reads:
        add(raw, Access.READ)
    # bash lists the directory a glob names, whatever the command: `echo
    # ~/.ssh/*` prints the names of the keys (from a review)
    for raw in sorted(g for g in globs if g in argv[1:]):
        add(raw, Access.READ)
    for word in unwrapped.positional:
        for raw in _path_candidates(word):
            add(raw, Access.UNKNOWN)
    if unwrapped.shell_payload is not None:
        if not payload_ok:
            reason = reason or "the shell payload is not read-only"
    elif not argv:
        reason = reason or _bare_assignment_problem(cmd)
    else:
        # `find . -print0 | xargs -0 grep x`: the words xargs appends are
        # paths below find's roots, judged with find (plain `find | xargs`
        # splits a planted `x -f/root/.ssh/id_rsa` into an option)
        facts = command_facts(argv, stdin_args=unwrapped.stdin_args, stdin_find=stdin_find)
        cd = facts.cd
        for tree in (*facts.trees, *option_glob_trees(argv, globs)):
            if tree.root in pipes:
                continue  # `diff <(ls a) <(ls b)` walks no directory
            for cwd in cwds:
                root = resolve(tree.root, cwd, home)
                if root is None:
                    reason = reason or f"reads every file below {tree.root}, wherever it is"
                    continue
                spelled = spell(tree.root, cwd, home)
                trees.append(replace(tree, root=root, spelled=spelled))
                # where the root leads as the kernel walks it (`grep -r K l/..`)
                reached, why = _walk_reaches(tree, root, cwd, cwds, home, roots, workspace,
                                             real.get(spelled or root, []))
                paths.extend(reached)
                reason = reason or why
        for raw in facts.reads:
            add(raw, Access.READ)
        for raw in facts.writes:
            add(raw, Access.WRITE)
        for word in facts.unknown:
            for raw in _path_candidates(word):
                add(raw, Access.UNKNOWN)
        if not facts.read_only:
            reason = reason or facts.reason
        reason = reason or glob_problem(argv, globs) or _option_named(argv, paths, workspace)
        if argv[0] == "git" and cwds != roots[:1]:
            # git finds its repository from the directory it runs in: after
            # `cd sub`, a repository planted there (bare or not) brings its own
            # config, whose diff.external / textconv / fsmonitor run programs.
            reason = reason or "git run outside the working directory may use another repository"
    if unwrapped.unsafe_env and (argv or unwrapped.shell_payload is not None):
        reason = reason or f"environment assignment {unwrapped.unsafe_env[0]}= changes what runs"
    before_redirects, dynamic = reason, False
    for r in cmd.redirects:
        target = r.target.value if r.target is not None else None
        if r.op.startswith("<<") or r.is_fd_dup or r.op in (">&-", "<&-"):
            continue
        if target is None:
            reason = reason or "redirection to a dynamic target"
            dynamic = True
            continue
        if r.is_output:
            if target in ("/dev/null", "/dev/stdout", "/dev/stderr"):
                continue
            add(target, Access.WRITE, redirect=True)
            reason = reason or f"output redirection to {target}"
        else:
            add(target, Access.READ)
    read_only = reason is None
    return Subcommand(
        text=cmd.text,
        argv=argv,
        raw_argv=cmd.argv,
        read_only=read_only,
        reason=reason,
        writes_by_redirection_only=not read_only and before_redirects is None and not dynamic,
        classification=classify_command(argv),
        paths=tuple(paths),
        warnings=tuple(destructive_warnings(argv)),
        env=unwrapped.env,
        wrappers=unwrapped.wrappers,
        nested=cmd.nested,
        via=via,
        op=cmd.op,
        cd=cd,
        transparent=unwrapped.transparent,
        trees=tuple(trees),
        sandbox_view=sandbox_view(argv),
    )


def _bare_assignment_problem(cmd: SimpleCommand) -> str | None:
    """`x=1` alone only sets a shell variable — unless the name is one the
    shell or its children act on (PATH, IFS, LD_PRELOAD, an exported GIT_DIR)."""
    for a in cmd.assignments:
        name = a.name
        if name in SAFE_ENV_VARS:
            continue
        if name.islower() and name not in _SHELL_SPECIAL_VARS:
            continue
        return f"assignment to {name} changes how later commands run"
    return None


#: the raw text of a path a command reaches by walking a tree (`grep -r`)
_BELOW = "below "


def _decide(command: str, cwd: str, status: ParseStatus, acc: _Acc, home: str) -> BashAnalysis:
    subs = tuple(acc.subcommands)
    findings = tuple(dict.fromkeys(acc.findings))
    limits = tuple(dict.fromkeys(acc.hard_limits))
    reasons = tuple(dict.fromkeys(acc.reasons))
    top = [s for s in subs if not s.nested]

    def conclude(
        verdict: Verdict,
        reason: str,
        hint: str,
        rules: tuple[str, ...] = (),
        *,
        rules_apply: bool = False,
    ) -> BashAnalysis:
        return BashAnalysis(
            command,
            cwd,
            status,
            verdict,
            reason,
            hint,
            parse_reasons=reasons,
            subcommands=subs,
            findings=findings,
            hard_limits=limits,
            classification=classify_pipeline([s.argv for s in top]),
            suggested_rules=rules,
            rules_apply=rules_apply,
        )

    if limits:
        return conclude(
            Verdict.DENY,
            f"hard limit: {limits[0]}",
            "no rule, mode or hook can allow this; run it yourself outside the agent if you "
            "really mean it",
        )
    for s in subs:
        for p in s.paths:
            if p.sensitive is not None and p.sensitive.level == "deny":
                return conclude(
                    Verdict.DENY,
                    f"{p.access.value} of sensitive path {p.path} ({p.sensitive.why})",
                    "built-in sensitive path list (profiles/sensitive-paths.toml); no rule can "
                    "allow it",
                )
    no_rules = "only an explicit approval can run it; permission rules do not apply"
    # A dotenv file holds secrets: reading one into the model's context needs
    # a person, inside the project too (`cat .env` was allowed before).
    needs_human = next((p for s in subs for p in s.paths if p.sensitive is not None), None)
    if needs_human is not None and needs_human.sensitive is not None:
        what = f"{needs_human.access.value} of {needs_human.path}"
        hint = ""
        if needs_human.raw.startswith(_BELOW):
            below = needs_human.raw[len(_BELOW):]
            what = (f"reads every file below {below}, where no search for dotenv files finished"
                    if "/**/" in needs_human.path
                    else f"reads every file below {below}, {needs_human.path} among them")
            hint = ("search where no dotenv file lies, or leave them out (grep --exclude='.env*', "
                    "rg -g '!.env*', find -name '*.py'; `--` before a glob, or ./*, keeps a "
                    "file named like an option from becoming one); ")
        return conclude(
            Verdict.ASK,
            f"{what} ({needs_human.sensitive.why}) needs a person's approval",
            hint +
            "built-in sensitive path list (profiles/sensitive-paths.toml), level \"ask\"; "
            + no_rules,
        )
    if status is ParseStatus.TOO_COMPLEX or reasons:
        why = reasons[0] if reasons else "the command cannot be analyzed statically"
        return conclude(Verdict.ASK, f"cannot be analyzed statically: {why}", no_rules)
    if findings:
        f = findings[0]
        return conclude(Verdict.ASK, f"security check {f.id} {f.name}: {f.message}", no_rules)
    if not subs:
        # Text that runs nothing the analyzer can name is not proven
        # harmless: the legacy splitter read a lone `!` (bash negates an
        # empty pipeline) as no command at all, and allowed it, where
        # tree-sitter sees a syntax error (found by the atheris harness).
        return conclude(Verdict.ASK, "no command was found in the text", no_rules)
    if len(top) > MAX_SUBCOMMANDS:
        return conclude(
            Verdict.ASK,
            f"{len(top)} subcommands: more than {MAX_SUBCOMMANDS} are never analyzed one by one",
            "split the command; " + no_rules,
        )
    rules = tuple(
        dict.fromkeys(
            suggest_rule(s.argv, s.text, prefix=s.transparent)
            for s in top
            if not s.read_only and s.via is None
        )
    )[:MAX_SUGGESTED_RULES]
    for s in subs:
        if not s.read_only:
            return conclude(
                Verdict.ASK,
                f"not read-only: {s.reason}",
                "approve it, or add an allow rule" + (f" such as {rules[0]}" if rules else ""),
                rules,
                rules_apply=True,
            )
    for s in subs:
        for p in s.paths:
            if not p.inside_cwd:
                return conclude(
                    Verdict.ASK,
                    f"{p.access.value} of {p.path} outside the working directory",
                    "approve it, or add the directory as an extra read directory",
                    rules,
                    rules_apply=True,
                )
    return conclude(
        Verdict.ALLOW,
        "read-only: every subcommand is a known reader and every path is inside the "
        "working directory",
        "",
        rules_apply=True,
    )
