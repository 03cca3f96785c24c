"""Wrapper commands and environment assignments.

``timeout 5 nice -n 10 rm -rf /`` runs ``rm -rf /``: permission rules and
hard limits must judge what finally runs, so wrappers are peeled off one by
one, each with its own option grammar. A wrapper used with an option we do
not know stops the peeling and is reported as a problem (fail closed: the
command is then not read-only, and the unknown part is never skipped over).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .ir import Assignment

#: Assignments that only select a locale, a target platform, log verbosity or
#: colours. Stripped before rule matching so ``NODE_ENV=test npm test``
#: matches ``Bash(npm test:*)``. Anything else (``LD_PRELOAD``, ``PAGER``,
#: ``GIT_*``, ``PYTHONWARNINGS``, ``BROWSER``, ``NODE_OPTIONS``, ``PATH`` …)
#: changes what a program executes and makes the command not read-only.
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
_DURATION_RE = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = re.compile(r"^[+-]?\d+$")
MAX_WRAPPERS = 16


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """What actually runs once wrappers and assignments are peeled off."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    unsafe_env: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    #: xargs: more arguments (flags, paths) come from stdin at run time
    stdin_args: bool = False
    #: ``bash -c PAYLOAD`` / ``eval ...``: the payload to analyze recursively
    shell_payload: str | None = None
    #: sudo/doas/su: runs as another user
    privileged: bool = False
    #: why the command cannot be read-only because of how it is wrapped
    problem: str | None = None


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


def strip_wrappers(argv: tuple[str, ...], assignments: tuple[Assignment, ...] = ()) -> Unwrapped:
    env: list[tuple[str, str]] = []
    for a in assignments:
        env.append((a.name, a.value.value if a.value.value is not None else ""))
    wrappers: list[str] = []
    stdin_args = False
    privileged = False
    problem: str | None = None
    payload: str | None = None
    rest = tuple(argv)
    for _ in range(MAX_WRAPPERS):
        if not rest:
            break
        name = base_name(rest[0])
        step = _STRIPPERS.get(name)
        if step is None:
            break
        result = step(rest)
        if result is None:  # not a wrapper use (e.g. `command -v x`)
            break
        new_rest, new_env, note = result
        wrappers.append(name)
        env.extend(new_env)
        if name == "xargs":
            stdin_args = True
        if name in ("sudo", "doas", "su"):
            privileged = True
            problem = problem or f"{name} runs the command as another user"
        if note is not None:
            if note.startswith("payload:"):
                payload = note[len("payload:") :]
                if name == "eval":
                    problem = problem or "eval re-parses its arguments as shell code"
            elif problem is None:
                problem = note
        if payload is not None:
            rest = ()
            break
        rest = new_rest
    else:
        problem = problem or "too many nested wrappers"
    if rest:
        rest = (command_name(rest[0]), *rest[1:])
    unsafe = tuple(n for n, _ in env if n not in SAFE_ENV_VARS)
    return Unwrapped(
        argv=rest,
        env=tuple(env),
        unsafe_env=unsafe,
        wrappers=tuple(wrappers),
        stdin_args=stdin_args,
        shell_payload=payload,
        privileged=privileged,
        problem=problem,
    )


#: (what remains to run, environment it adds, problem or "payload:<text>")
_Step = tuple[tuple[str, ...], list[tuple[str, str]], str | None]
_StepFn = Callable[[tuple[str, ...]], _Step | None]


def _options(
    argv: tuple[str, ...],
    flags: frozenset[str],
    valued: frozenset[str],
    *,
    first_positional: re.Pattern[str] | None = None,
) -> tuple[int, str | None]:
    """Skip a wrapper's options. Returns (index of the wrapped command,
    problem). ``valued`` flags take an argument (attached or next word)."""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a.startswith("--"):
            key = a.split("=", 1)[0]
            if key in flags:
                i += 1
                continue
            if key in valued:
                i += 1 if "=" in a else 2
                continue
            return i, f"unknown option {a!r} for {argv[0]}"
        # short cluster
        j = 1
        while j < len(a):
            opt = "-" + a[j]
            if opt in flags:
                j += 1
                continue
            if opt in valued:
                if j + 1 == len(a):
                    i += 1  # value is the next word
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

    def step(argv: tuple[str, ...]) -> _Step | None:
        i, problem = _options(argv, fl, va, first_positional=positional)
        if problem:
            return argv, [], problem
        return argv[i:], [], None

    return step


def _nice(argv: tuple[str, ...]) -> _Step | None:
    if len(argv) > 1 and _INT_RE.match(argv[1]):  # `nice -10 cmd`
        return argv[2:], [], None
    i, problem = _options(argv, frozenset(), frozenset({"-n", "--adjustment"}))
    return (argv, [], problem) if problem else (argv[i:], [], None)


def _command(argv: tuple[str, ...]) -> _Step | None:
    # `command -v x` / `command -V x` look a name up; they run nothing.
    if len(argv) > 1 and argv[1] in ("-v", "-V", "-pv", "-pV"):
        return None
    i, problem = _options(argv, frozenset({"-p"}), frozenset())
    return (argv, [], problem) if problem else (argv[i:], [], None)


def _env(argv: tuple[str, ...]) -> _Step | None:
    env: list[tuple[str, str]] = []
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
            return argv, env, f"env option {a!r} is not analyzed"
        else:
            break
    while i < len(argv) and "=" in argv[i] and _NAME_RE.match(argv[i].split("=", 1)[0]):
        name, _, value = argv[i].partition("=")
        env.append((name, value))
        i += 1
    if i >= len(argv):
        return None  # bare `env` prints the environment: a command of its own
    return argv[i:], env, None


def _xargs(argv: tuple[str, ...]) -> _Step | None:
    flags = frozenset(
        {
            "-0",
            "--null",
            "-r",
            "--no-run-if-empty",
            "-t",
            "--verbose",
            "-x",
            "--exit",
            "-p",
            "--interactive",
            "--open-tty",
            "-o",
        }
    )
    valued = frozenset(
        {
            "-n",
            "--max-args",
            "-L",
            "--max-lines",
            "-P",
            "--max-procs",
            "-d",
            "--delimiter",
            "-s",
            "--max-chars",
            "-I",
            "--replace",
            "-E",
            "-a",
            "--arg-file",
            "-e",
            "--eof",
            "--process-slot-var",
        }
    )
    i, problem = _options(argv, flags, valued)
    if problem:
        return argv, [], problem
    rest = argv[i:] or ("echo",)
    return rest, [], None


def _shell(argv: tuple[str, ...]) -> _Step | None:
    """``bash -c PAYLOAD``: the payload is analyzed as a command line."""
    i = 1
    has_c = False
    while i < len(argv):
        a = argv[i]
        if a in ("--noprofile", "--norc", "--posix", "--"):
            i += 1
            continue
        if a in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if re.fullmatch(r"[-+][eux]*c[eux]*", a):
            has_c = True
            i += 1
            break
        if re.fullmatch(r"[-+][euxv]+", a):
            i += 1
            continue
        break
    if not has_c or i >= len(argv):
        return None  # a script file, a login or interactive shell: not a wrapper
    return (), [], "payload:" + argv[i]


def _eval(argv: tuple[str, ...]) -> _Step | None:
    # The payload is analyzed (hard limits, sensitive paths) but eval itself
    # is never read-only: it is the canonical way to smuggle code past review.
    if len(argv) < 2:
        return None
    return (), [], "payload:" + " ".join(argv[1:])


def _sudo(argv: tuple[str, ...]) -> _Step | None:
    flags = frozenset(
        {
            "-E",
            "-H",
            "-n",
            "-k",
            "-K",
            "-b",
            "-P",
            "-S",
            "-A",
            "--preserve-env",
            "--non-interactive",
            "--set-home",
            "--stdin",
        }
    )
    valued = frozenset(
        {
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
            "-p",
            "--prompt",
            "-h",
            "-D",
            "--chdir",
            "-r",
            "-t",
            "-U",
            "-T",
        }
    )
    i, problem = _options(argv, flags, valued)
    if problem or i >= len(argv):
        return None
    return argv[i:], [], None


def _su(argv: tuple[str, ...]) -> _Step | None:
    for j, a in enumerate(argv[1:-1], start=1):
        if a in ("-c", "--command"):
            return (), [], "payload:" + argv[j + 1]
    return None


def _exec(argv: tuple[str, ...]) -> _Step | None:
    i, problem = _options(argv, frozenset({"-c", "-l"}), frozenset({"-a"}))
    if problem or i >= len(argv):
        return None
    return argv[i:], [], "exec replaces the shell"


_STRIPPERS: dict[str, _StepFn] = {
    "timeout": _simple(
        {"--preserve-status", "--foreground", "-v", "--verbose"},
        {"-k", "--kill-after", "-s", "--signal"},
        _DURATION_RE,
    ),
    "time": _simple({"-p"}),
    "nice": _nice,
    "nohup": _simple(),
    "stdbuf": _simple(set(), {"-i", "-o", "-e", "--input", "--output", "--error"}),
    "command": _command,
    "builtin": _simple(),
    "noglob": _simple(),
    "xargs": _xargs,
    "env": _env,
    "sudo": _sudo,
    "doas": _sudo,
    "su": _su,
    "exec": _exec,
    "eval": _eval,
    **dict.fromkeys(SHELLS, _shell),
}
