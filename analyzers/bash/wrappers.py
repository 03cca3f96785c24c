"""Wrapper commands and environment assignments.

``timeout 5 nice -n 10 rm -rf /`` runs ``rm -rf /``: permission rules and
hard limits must judge what finally runs, so wrappers are peeled off one by
one, each with its own option grammar. A wrapper used with an option we do
not know stops the peeling and is reported as a problem (fail closed: the
command is then not read-only, and the unknown part is never skipped over).
"""

from __future__ import annotations

from regexes import regex
from values import valueclass

from .ir import Assignment

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

#: Assignments that only select a locale, a target platform, log verbosity or
#: colours. Stripped before rule matching so ``NODE_ENV=test npm test``
#: matches ``Bash(npm test:*)``. Anything else (``LD_PRELOAD``, ``PAGER``,
#: ``GIT_*``, ``PYTHONWARNINGS``, ``BROWSER``, ``NODE_OPTIONS``, ``PATH`` …)
#: changes what a program executes and makes the command not read-only.
# patterns the functions below use (module constants: see regexes/)
#: `-o`/`-O` options after which a payload still reads as analyzed: they
#: stop early, trace, or refuse to clobber. Every other one may change the
#: language (from a review: `bash -O dotglob -c 'cat *'` printed .env;
#: `-o physical` makes `..` climb out of a link's target; `-k` moves
#: assignments anywhere into the environment; `-O extglob`/`globstar`/
#: `nocaseglob`/`failglob` change what a glob matches)
_SHELL_OPTIONS_KEEPING_THE_LANGUAGE = frozenset({
    "errexit", "nounset", "pipefail", "xtrace", "verbose", "noclobber", "noexec",
})
_SHELL_C_FLAG_RE = regex(r"[-+][eux]*c[eux]*")
_SHELL_OPTION_FLAGS_RE = regex(r"[-+][euxv]+")


SAFE_ENV_VARS = frozenset(
    {
        # Go: build target and toolchain switches
        "GOEXPERIMENT",
        "GOOS",
        "GOARCH",
        "CGO_ENABLED",
        "GO111MODULE",
        # Rust: logging only
        "RUST_BACKTRACE",
        "RUST_LOG",
        # Node: the environment name (never NODE_OPTIONS)
        "NODE_ENV",
        # Python: output behaviour (never PYTHONPATH / PYTHONSTARTUP / PYTHONWARNINGS)
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        # pytest: plugin autoload off, debug tracing
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        "PYTEST_DEBUG",
        # locale and encoding
        "LANG",
        "LANGUAGE",
        "LC_ALL",
        "LC_CTYPE",
        "LC_TIME",
        "CHARSET",
        # terminal and colour
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "FORCE_COLOR",
        "TZ",
        # display formatting of ls/du/df
        "TIME_STYLE",
        "BLOCK_SIZE",
        "BLOCKSIZE",
    }
)
assert len(SAFE_ENV_VARS) == 26
#: safe variables whose value the C library may open as a file: `TZ=/path`
#: (or `TZ=:/path`) reads a time-zone file, a locale name with a slash a
#: locale directory. From a review: `TZ=/etc/shadow date` was allowed.
_FILE_NAMING_VARS = frozenset({"TZ", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_TIME"})


def _names_a_file(name: str, value: str) -> bool:
    if name not in _FILE_NAMING_VARS:
        return False
    value = value.lstrip(":")
    return value.startswith(("/", "~", ".")) or ".." in value or (
        name != "TZ" and "/" in value)

#: Directories whose binaries are trusted to be what their name says. A
#: command written as ``./cat`` or ``/tmp/cat`` is not ``cat``.
SYSTEM_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)

#: Wrappers whose prefix never makes a useful permission rule.
BARE_WRAPPERS = frozenset(
    {
        "timeout",
        "time",
        "nice",
        "nohup",
        "stdbuf",
        "command",
        "builtin",
        "noglob",
        "xargs",
        "env",
        "sudo",
        "doas",
        "su",
        "exec",
        "eval",
        "bash",
        "sh",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "watch",
        "ionice",
        "chrt",
        "taskset",
        "setsid",
        "unbuffer",
        "script",
        "strace",
        "ltrace",
    }
)

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "busybox-sh"})
#: shells that read a payload as POSIX sh: what bash alone gives a meaning
#: is read otherwise there (Debian's /bin/sh is dash)
POSIX_SHELLS = frozenset({"sh", "dash", "busybox-sh"})
#: Syntax only bash gives its meaning, seen anywhere in a POSIX shell's
#: payload (inside quotes too: a false alarm costs a question, a miss a
#: write). The payload is parsed as bash; dash parses these otherwise:
#:   sh -c '[[ a > b ]]'    `[[` is a command there, `> b` creates b
#:                          (found by `shellgate fuzz --mode deep --oracle`)
#:   sh -c '(( 1 > 2 ))'    two subshells, `> 2` creates 2
#:   sh -c 'ls &> out'      `ls &` then `> out`
#:   sh -c "cat <<< x"      a heredoc and a redirection
#:   sh -c "echo \$'a'"     `$` then a quoted 'a': bash's decoding is not sh's
_BASH_ONLY = regex(
    r"\[\[|\]\]|\(\(|\)\)|\$'|\$\"|<<<|&>|>&\s*[^\s\d-]|\|&|[<>]\(|;;&|;&"
    r"|\{[^}\s]*(?:,|\.\.)[^}\s]*\}|\bfunction\b|\bselect\b|\bcoproc\b|\[@\]|\[\*\]"
    r"|\$\{[!#]?\w+(?::[-=?+]?\d|/|\^|,|@|:\s|:\d)|\w=\(")
_DURATION_RE = regex(r"^\d+(?:\.\d+)?[smhd]?$")
_NAME_RE = regex(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = regex(r"^[+-]?\d+$")
MAX_WRAPPERS = 16


@valueclass
class Unwrapped:
    """What actually runs once wrappers and assignments are peeled off."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    unsafe_env: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    #: xargs: more arguments (flags, paths) come from stdin at run time
    stdin_args: bool = False
    #: ... split at NUL bytes only and appended as they are (``xargs -0``
    #: without -I, -d, -a, -E)
    null_separated: bool = False
    #: ``bash -c PAYLOAD`` / ``eval ...``: the payload to analyze recursively
    shell_payload: str | None = None
    #: ``bash -c PAYLOAD NAME ARG...``: ``$0``, ``$1``... of the payload
    positional: tuple[str, ...] = ()
    #: files a wrapper itself reads (``xargs -a FILE``)
    reads: tuple[str, ...] = ()
    #: sudo/doas/su: runs as another user
    privileged: bool = False
    #: why the command cannot be read-only because of how it is wrapped
    problem: str | None = None

    @property
    def transparent(self) -> bool:
        """Only wrappers that change nothing about what the command may do
        (so a rule for the inner command is a fair rule for this one)."""
        return not self.unsafe_env and set(self.wrappers) <= TRANSPARENT_WRAPPERS


#: Wrappers that only change scheduling, timing or buffering.
TRANSPARENT_WRAPPERS = frozenset(
    {"timeout", "time", "nice", "nohup", "stdbuf", "command", "builtin", "noglob", "nocorrect"}
)


def command_name(word: str) -> str:
    """The name to look up in allowlists: bare names as is, system paths by
    basename, any other path unchanged (so it matches nothing)."""
    if "/" not in word:
        return word
    head, _, base = word.rpartition("/")
    return base if head in SYSTEM_BIN_DIRS else word


def base_name(word: str) -> str:
    """Basename for hard limits: ``/tmp/x/rm`` is judged as ``rm`` there."""
    return word.rpartition("/")[2]


@valueclass
class _Peel:
    """One wrapper peeled: what remains to run and what the wrapper adds."""

    rest: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    problem: str | None = None
    payload: str | None = None
    positional: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    null_separated: bool = False


if TYPE_CHECKING:
    _StepFn = Callable[[tuple[str, ...]], "_Peel | None"]
#: wrappers that append or substitute words read at run time
_RUNTIME_BUILDERS = frozenset({"xargs", "parallel"})


def strip_wrappers(argv: tuple[str, ...], assignments: tuple[Assignment, ...] = ()) -> Unwrapped:
    """Peel wrappers off ``argv`` until the command that really runs.

    Wrappers are recognized by name only when they are the real thing: a
    bare name or one in a system bin directory. ``./timeout 5 ls`` runs a
    local program called timeout, not ``ls``.
    """
    env: list[tuple[str, str]] = [
        (a.name, a.value.value if a.value.value is not None else "") for a in assignments
    ]
    wrappers: list[str] = []
    reads: list[str] = []
    problem: str | None = None
    payload: str | None = None
    positional: tuple[str, ...] = ()
    null_separated = False
    rest = tuple(argv)
    for _ in range(MAX_WRAPPERS):
        if not rest:
            break
        name = command_name(rest[0])
        step = _STRIPPERS.get(name)
        peel = step(rest) if step is not None else None
        if peel is None:  # not a wrapper (or not used as one: `command -v x`)
            break
        wrappers.append(name)
        env.extend(peel.env)
        reads.extend(peel.reads)
        null_separated = null_separated or peel.null_separated
        if name in ("sudo", "doas", "su"):
            problem = problem or f"{name} runs the command as another user"
        if name == "eval":
            problem = problem or "eval re-parses its arguments as shell code"
        problem = problem or peel.problem
        if peel.payload is not None:
            problem = problem or _dialect_problem(name, peel.payload)
            builder = next((w for w in wrappers[:-1] if w in _RUNTIME_BUILDERS), None)
            if builder is not None:
                # From a review: `xargs -I{} sh -c {}` runs whatever arrives
                # on stdin; `xargs sh -c 'cat "$1"' _` binds $1 to words the
                # analysis never sees. The payload it can read is not the
                # program that runs.
                problem = problem or (f"a shell started by {builder} runs words that arrive at "
                                      "run time")
            payload, positional, rest = peel.payload, peel.positional, ()
            break
        if peel.rest == rest:
            break  # an option we do not understand: stop peeling here
        rest = peel.rest
    else:
        problem = problem or "too many nested wrappers"
    if rest:
        rest = (command_name(rest[0]), *rest[1:])
    return Unwrapped(
        argv=rest,
        env=tuple(env),
        unsafe_env=tuple(n for n, v in env if n not in SAFE_ENV_VARS or _names_a_file(n, v)),
        wrappers=tuple(wrappers),
        stdin_args="xargs" in wrappers,
        null_separated=null_separated and wrappers.count("xargs") == 1,
        shell_payload=payload,
        positional=positional,
        reads=tuple(reads),
        privileged=bool({"sudo", "doas", "su"} & set(wrappers)),
        problem=problem,
    )


def skip_options(
    argv: tuple[str, ...],
    flags: frozenset[str],
    valued: frozenset[str],
    *,
    first_positional: re.Pattern[str] | None = None,
    values: dict[str, str] | None = None,
    optional: frozenset[str] = frozenset(),
) -> tuple[int, str | None]:
    """Skip a wrapper's options. Returns (index of the wrapped command,
    problem). ``valued`` options take an argument (attached or next word);
    ``optional`` ones take one only attached (``-e``, ``-eEOF``,
    ``--eof=EOF``), never the next word; their values are stored in
    ``values`` when given."""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a.startswith("--"):
            key, eq, attached = a.partition("=")
            if key in flags:
                i += 1
                continue
            if key in optional:
                if values is not None:
                    values[key] = attached
                i += 1
                continue
            if key in valued:
                value = attached if eq else (argv[i + 1] if i + 1 < len(argv) else "")
                if values is not None:
                    values[key] = value
                i += 1 if eq else 2
                continue
            return i, f"unknown option {a!r} for {argv[0]}"
        j = 1  # short cluster: -abc, -n5, -n 5
        while j < len(a):
            opt = "-" + a[j]
            if opt in flags:
                j += 1
                continue
            if opt in optional:
                if values is not None:
                    values[opt] = a[j + 1 :]
                break  # the rest of the cluster is its value
            if opt in valued:
                if j + 1 == len(a):
                    value = argv[i + 1] if i + 1 < len(argv) else ""
                    i += 1  # the value is the next word
                else:
                    value = a[j + 1 :]
                if values is not None:
                    values[opt] = value
                break
            return i, f"unknown option {a!r} for {argv[0]}"
        i += 1
    if first_positional is not None:
        if i >= len(argv) or not first_positional.match(argv[i]):
            return i, f"{argv[0]}: expected a duration"
        i += 1
    return i, None


def _simple(
    flags: set[str] | None = None,
    valued: set[str] | None = None,
    positional: re.Pattern[str] | None = None,
) -> _StepFn:
    fl = frozenset(flags or ())
    va = frozenset(valued or ())

    def step(argv: tuple[str, ...]) -> _Peel | None:
        i, problem = skip_options(argv, fl, va, first_positional=positional)
        return _Peel(argv, problem=problem) if problem else _Peel(argv[i:])

    return step


def _nohup(argv: tuple[str, ...]) -> _Peel | None:
    """``nohup CMD`` with a terminal for output appends it to ``nohup.out``
    in the directory, or ``~/nohup.out`` — a file of its own choosing,
    through whatever link is planted there (`nohup.out -> ~/.bashrc`
    appends the command's output to the host's shell startup). A write,
    never read-only."""
    i, problem = skip_options(argv, frozenset(), frozenset())
    if problem:
        return _Peel(argv, problem=problem)
    return _Peel(argv[i:], problem="nohup may append the output to nohup.out (here or in the "
                                   "home), wherever a link there leads")


def _nice(argv: tuple[str, ...]) -> _Peel | None:
    if len(argv) > 1 and _INT_RE.match(argv[1]):  # `nice -10 cmd`
        return _Peel(argv[2:])
    i, problem = skip_options(argv, frozenset(), frozenset({"-n", "--adjustment"}))
    return _Peel(argv, problem=problem) if problem else _Peel(argv[i:])


def _command(argv: tuple[str, ...]) -> _Peel | None:
    # `command -v x` / `command -V x` look a name up; they run nothing.
    if len(argv) > 1 and argv[1] in ("-v", "-V", "-pv", "-pV"):
        return None
    i, problem = skip_options(argv, frozenset({"-p"}), frozenset())
    return _Peel(argv, problem=problem) if problem else _Peel(argv[i:])


def _env(argv: tuple[str, ...]) -> _Peel | None:
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-i", "--ignore-environment", "-0", "--null", "-"):
            i += 1
        elif a in ("-u", "--unset"):
            i += 2
        elif a.startswith(("--unset=", "-u")) and len(a) > 2:
            i += 1
        elif a == "--":
            i += 1
            break
        elif a.startswith("-"):
            # -S splits a string into a new command line; -C changes directory.
            return _Peel(argv, problem=f"env option {a!r} is not analyzed")
        else:
            break
    env: list[tuple[str, str]] = []
    while i < len(argv) and "=" in argv[i] and _NAME_RE.match(argv[i].split("=", 1)[0]):
        name, _, value = argv[i].partition("=")
        env.append((name, value))
        i += 1
    if i >= len(argv):
        return None  # bare `env` prints the environment: a command of its own
    return _Peel(argv[i:], env=tuple(env))


_XARGS_FLAGS = frozenset(
    "-0 --null -r --no-run-if-empty -t --verbose -x --exit -p --interactive --open-tty -o".split()
)
_XARGS_VALUED = frozenset(
    "-n --max-args -L -P --max-procs -d --delimiter -s --max-chars -I -E -a --arg-file "
    "--process-slot-var".split()
)
#: GNU xargs: these take their value only attached (`-e`, `-eEND`, `--eof=END`);
#: the next word is the next option or the command. From a review: read as
#: taking the next word, `xargs -e --arg-file=~/.ssh/id_rsa echo` hid the file
#: xargs reads. Checked against the installed xargs by
#: tests/analyzers/test_option_tables.py.
_XARGS_OPTIONAL = frozenset("-e --eof -i --replace -l --max-lines".split())


def _xargs(argv: tuple[str, ...]) -> _Peel | None:
    values: dict[str, str] = {}
    i, problem = skip_options(argv, _XARGS_FLAGS, _XARGS_VALUED, values=values,
                          optional=_XARGS_OPTIONAL)
    if problem:
        return _Peel(argv, problem=problem)
    # `xargs -a FILE` reads its arguments from FILE: `xargs -a ~/.ssh/id_rsa echo`
    # prints the key.
    reads = tuple(v for k, v in values.items() if k in ("-a", "--arg-file") and v)
    return _Peel(argv[i:] or ("echo",), reads=reads, null_separated=_null_separated(argv[1:i]))


#: xargs options that stop the words from being appended exactly as they
#: arrive: -I/-i/--replace put them inside other words, -d/-E/-e/--eof
#: change where they split or stop, -a reads them from a file
_XARGS_RESHAPING = ("-I", "-i", "--replace", "-d", "--delimiter", "-E", "-e", "--eof", "-a",
                    "--arg-file", "--process-slot-var")


def _null_separated(options: tuple[str, ...]) -> bool:
    """``xargs -0`` (or ``--null``) with nothing that reshapes the words.
    A short-option cluster naming any reshaping letter counts as reshaping."""
    if not ({"-0", "--null"} & set(options)):
        return False
    for tok in options:
        if tok.startswith(_XARGS_RESHAPING):
            return False
        if tok.startswith("-") and not tok.startswith("--") and set(tok[1:]) & set("IiadEe"):
            return False
    return True


def _dialect_problem(shell: str, payload: str) -> str | None:
    """Why ``shell``'s reading of ``payload`` may not be the bash parse the
    analysis judged: zsh, ksh and mksh are other languages (zsh's glob
    qualifiers run code: `zsh -c 'ls *(e:"touch x":)'`); a POSIX shell
    reads bash-only syntax otherwise (see ``_BASH_ONLY``)."""
    if shell in ("bash", "eval", "su"):
        return None
    if shell in POSIX_SHELLS:
        hit = _BASH_ONLY.search(payload)
        if hit is None:
            return None
        return (f"{shell} -c: the payload uses {hit.group()!r}, which only bash reads the way "
                f"it was analyzed ({shell} is a POSIX shell)")
    if shell in SHELLS:
        return f"{shell} -c: {shell}'s language is not bash's; its payload cannot be judged"
    return None


def _shell(argv: tuple[str, ...]) -> _Peel | None:
    """``bash -c PAYLOAD [NAME ARG...]``: the payload is analyzed as a command
    line with ``$0``, ``$1``... bound to the words after it."""
    i = 1
    has_c = False
    changed: list[str] = []
    while i < len(argv):
        a = argv[i]
        if a == "--":
            # options end: the next word is a script *file*, even `-c`
            # (from a review: `bash -- -c ls` runs a file named `-c`)
            return None
        if a in ("--noprofile", "--norc"):
            i += 1
            continue
        if a == "--posix":
            changed.append(a)
            i += 1
            continue
        if a in ("-o", "+o", "-O", "+O"):
            name = argv[i + 1] if i + 1 < len(argv) else ""
            if name not in _SHELL_OPTIONS_KEEPING_THE_LANGUAGE:
                changed.append(f"{a} {name}")
            i += 2
            continue
        if _SHELL_C_FLAG_RE.fullmatch(a):
            has_c = True
            i += 1
            break
        if _SHELL_OPTION_FLAGS_RE.fullmatch(a):
            i += 1
            continue
        break
    if not has_c or i >= len(argv):
        return None  # a script file, a login or interactive shell: not a wrapper
    problem = (f"{argv[0]} {' '.join(changed)}: the option changes how the payload reads "
               "(globs, paths, what runs), so the analysis of it does not hold"
               if changed else None)
    return _Peel((), payload=argv[i], positional=argv[i + 1 :], problem=problem)


def _eval(argv: tuple[str, ...]) -> _Peel | None:
    # The payload is analyzed (hard limits, sensitive paths) but eval itself
    # is never read-only: it is the canonical way to smuggle code past review.
    if len(argv) < 2:
        return None
    return _Peel((), payload=" ".join(argv[1:]))


_SUDO_FLAGS = frozenset(
    "-E -H -n -k -K -b -P -S -A --preserve-env --non-interactive --set-home --stdin".split()
)
_SUDO_VALUED = frozenset("-u --user -g --group -C -p --prompt -h -D --chdir -r -t -U -T".split())


def _sudo(argv: tuple[str, ...]) -> _Peel | None:
    i, problem = skip_options(argv, _SUDO_FLAGS, _SUDO_VALUED)
    if problem or i >= len(argv):
        return None
    return _Peel(argv[i:])


def _su(argv: tuple[str, ...]) -> _Peel | None:
    for j, a in enumerate(argv[1:-1], start=1):
        if a in ("-c", "--command"):
            return _Peel((), payload=argv[j + 1])
    return None


def _exec(argv: tuple[str, ...]) -> _Peel | None:
    i, problem = skip_options(argv, frozenset({"-c", "-l"}), frozenset({"-a"}))
    if problem or i >= len(argv):
        return None
    return _Peel(argv[i:], problem="exec replaces the shell")


_STRIPPERS: dict[str, _StepFn] = {
    "timeout": _simple(
        {"--preserve-status", "--foreground", "-v", "--verbose"},
        {"-k", "--kill-after", "-s", "--signal"},
        _DURATION_RE,
    ),
    "time": _simple({"-p"}),
    "nice": _nice,
    "nohup": _nohup,
    "stdbuf": _simple(set(), {"-i", "-o", "-e", "--input", "--output", "--error"}),
    "command": _command,
    "builtin": _simple(),
    "noglob": _simple(),
    "nocorrect": _simple(),
    "xargs": _xargs,
    "env": _env,
    "sudo": _sudo,
    "doas": _sudo,
    "su": _su,
    "exec": _exec,
    "eval": _eval,
    **dict.fromkeys(SHELLS, _shell),
}
