"""Per-command knowledge: is this argv read-only, and which paths does it
read or write? One entry point, :func:`command_facts`."""

from __future__ import annotations

from regexes import regex
from values import replace, valueclass

from ..words import NON_SECRET_VARS
from ..workspace import TreeRead, glob_root
from .find import analyze_find
from .flags import Arg, ParsedArgs, Spec, parse_args, read_paths
from .git import git_problem, git_reads, git_tables, git_trees
from .readers import ARGUMENT_AGNOSTIC, READERS
from .search import GREP, RG, search_paths
from .trees import diff_trees, found_trees, listing_trees, search_trees
from .writers import WRITERS, writer_paths

#: the awk implementations (their module, and sed's, are loaded at the first
#: awk or sed command judged: a cold check of anything else does not pay
#: their import)
AWK_NAMES = frozenset({"awk", "gawk", "mawk", "nawk"})

__all__ = [
    "READERS",
    "WRITERS",
    "CommandFacts",
    "OptionTable",
    "command_facts",
    "find_prints_only_paths",
    "glob_problem",
    "is_known_reader",
    "option_glob_trees",
    "option_tables",
]


@valueclass
class CommandFacts:
    read_only: bool
    reason: str | None = None
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    #: operands of a command we know nothing about: any may be a path
    unknown: tuple[str, ...] = ()
    #: for ``cd``: where it goes (``None`` for other commands)
    cd: str | None = None
    #: directories below which it reads files it finds itself
    trees: tuple[TreeRead, ...] = ()


_JQ = Spec(
    flags={
        **{f"-{c}": Arg.NONE for c in "rjacnesSCMRh"},
        **dict.fromkeys(
            (
                "--tab",
                "--args",
                "--jsonargs",
                "--raw-output",
                "--join-output",
                "--ascii-output",
                "--compact-output",
                "--null-input",
                "--exit-status",
                "--slurp",
                "--sort-keys",
                "--color-output",
                "--monochrome-output",
                "--raw-input",
                "--seq",
                "--stream",
                "--stream-errors",
                "--unbuffered",
                "--raw-output0",
                "--help",
                "--version",
                "--build-configuration",
            ),
            Arg.NONE,
        ),
        "--indent": Arg.NUM,
        "--arg": Arg.VALUE2,
        "--argjson": Arg.VALUE2,
    }
)
_ARITH_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
#: test's operators that look at the file their operand names (its type,
#: permissions, owner, times): a look outside the project is a read there
_FILE_TESTS = frozenset({"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s",
                         "-u", "-w", "-x", "-G", "-L", "-N", "-O", "-S"})
_FILE_COMPARISONS = frozenset({"-nt", "-ot", "-ef"})
_INT_RE = regex(r"^\s*[+-]?\d+\s*$")


def is_known_reader(name: str) -> bool:
    return name in READERS or name in _SPECIAL_READERS


def command_facts(
    argv: tuple[str, ...],
    *,
    stdin_args: bool = False,
    stdin_find: tuple[str, ...] | None = None,
) -> CommandFacts:
    """What ``argv`` does. ``stdin_args``: xargs appends words read at run
    time; ``stdin_find``: those words are paths this find printed with
    ``-print0``, read by ``xargs -0`` (see :func:`find_prints_only_paths`)."""
    if not argv:
        return CommandFacts(True)
    facts = _facts(argv)
    if argv[0] == "diff" and facts.read_only:
        facts = replace(facts, trees=diff_trees(parse_args(argv, READERS["diff"])))
    if argv[0] in ("ls", "du", "tree") and facts.read_only:
        listed = listing_trees(argv, parse_args(argv, READERS[argv[0]]), None)
        facts = replace(facts, trees=facts.trees + listed)
    if stdin_find is not None and argv[0] in PATH_OPERAND_READERS:
        find = analyze_find(stdin_find)
        trees = found_trees(find, argv, _reader_args(argv), find.follows)
        return replace(facts, trees=facts.trees + trees)
    if stdin_args and facts.read_only and argv[0] not in ARGUMENT_AGNOSTIC:
        return CommandFacts(
            False,
            "xargs appends arguments read from stdin (flags and paths unknown)",
            facts.reads,
            facts.writes,
            facts.unknown,
        )
    return facts


def _facts(argv: tuple[str, ...]) -> CommandFacts:
    name = argv[0]
    if name in ARGUMENT_AGNOSTIC:
        return CommandFacts(True)
    special = _SPECIAL_READERS.get(name)
    if special is not None:
        return special(argv)
    sp = READERS.get(name)
    if sp is not None:
        return _facts_from_spec(argv, sp)
    if name in WRITERS:
        rw = writer_paths(name, argv)
        if rw is None:
            return CommandFacts(False, f"{name} writes files", unknown=argv[1:])
        return CommandFacts(False, f"{name} writes files", tuple(rw[0]), tuple(rw[1]))
    return CommandFacts(False, f"{name!r} is not a known read-only command", unknown=argv[1:])


#: Readers whose every option — including abbreviations GNU getopt accepts —
#: neither writes nor executes, so a glob that expands to a file named like
#: an option (`--pre=sh`, `-o`) cannot turn them into something else. Not
#: the checksum tools: a planted `-c` makes `sha256sum *` read every path a
#: planted list names, outside the project too (from a review).
GLOB_SAFE = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "du",
        "stat",
        "cut",
        "nl",
        "tac",
        "strings",
        "od",
        "hexdump",
        "column",
        "fold",
        "expand",
        "unexpand",
        "rev",
        "paste",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "echo",
        "printf",
        "test",
        "[",
        "true",
        "false",
        ":",
    }
)


#: readers in GLOB_SAFE whose options read other files or walk trees: a
#: planted file named `-r`, `-f.env`, `--files0-from=.env` or `@.env` that
#: a leading wildcard expands to makes `grep x *` recurse, `wc -l *` print
#: .env in its errors, `strings *` read .env as arguments (from a review)
GLOB_INJECTABLE = frozenset({"grep", "egrep", "fgrep", "wc", "du", "strings", "hexdump"})


def option_glob_trees(argv: tuple[str, ...], globbed: set[str]) -> tuple[TreeRead, ...]:
    """What a leading-wildcard glob may turn these readers into: a reader of
    every file below the glob's directory, links followed; for ls a listing
    of it (a planted `-aR` beside a link `up -> ..` listed ~/.ssh: from a
    review)."""
    if not argv or argv[0] not in (*GLOB_INJECTABLE, "ls"):
        return ()
    out = []
    for a in argv[1:]:
        if a == "--":
            break
        if a in globbed and a[:1] in "*?[":
            out.append(TreeRead(glob_root(a), follows_links=True, content=argv[0] != "ls"))
    return tuple(out)


def glob_problem(argv: tuple[str, ...], globbed: set[str]) -> str | None:
    """Why the unquoted globs in ``argv`` stop it from being read-only.

    A glob whose first character is a wildcard can expand to a file named
    ``--output=x`` or ``--pre=sh`` (wildcard injection: ``git diff *``,
    ``rg foo *``); and any glob can change the operand count (``uniq *.txt``
    expands to ``uniq in out``, which writes ``out``).
    """
    if not globbed or not argv:
        return None
    name = argv[0]
    sp = READERS.get(name)
    end_of_options = False
    for a in argv[1:]:
        if a == "--":
            end_of_options = True
            continue
        if a not in globbed:
            continue
        if sp is not None and sp.max_positional is not None:
            return f"glob {a!r} may expand to more operands than {name} reads safely"
        if not end_of_options and a[:1] in "*?[" and name not in GLOB_SAFE:
            return f"glob {a!r} may expand to file names that act as options"
    return None


def _facts_from_spec(argv: tuple[str, ...], sp: Spec) -> CommandFacts:
    p = parse_args(argv, sp)
    if p.problem:
        return CommandFacts(False, f"{argv[0]}: {p.problem}", unknown=argv[1:])
    return CommandFacts(True, reads=tuple(read_paths(p, sp)))


def _printf(argv: tuple[str, ...]) -> CommandFacts:
    # `printf -v PATH /tmp/evil` assigns a shell variable (even PATH).
    if len(argv) > 1 and argv[1].startswith("-v"):
        return CommandFacts(False, "printf -v assigns a shell variable")
    return CommandFacts(True)


def _test(argv: tuple[str, ...]) -> CommandFacts:
    """``test``, ``[`` and ``[[``: read-only unless an operand is evaluated as
    arithmetic. Arithmetic evaluates array subscripts, and a subscript may hold
    a command substitution: ``[[ 1 -eq 'a[$(id)]' ]]`` and ``test -v
    'a[$(id)]'`` run ``id`` although the substitution is single-quoted."""
    if argv[0] == "[" and argv[-1] != "]":
        return CommandFacts(False, "'[' without closing ']'")
    for i, tok in enumerate(argv):
        if tok == "-v":
            return CommandFacts(False, f"{argv[0]} -v evaluates array subscripts")
        if tok in _ARITH_OPS:
            for operand in (argv[i - 1], argv[i + 1] if i + 1 < len(argv) else ""):
                if not _INT_RE.match(operand):
                    return CommandFacts(
                        False,
                        f"{argv[0]} {tok} with a non-literal operand is evaluated as arithmetic",
                    )
    return CommandFacts(True, reads=_tested_files(argv))


def _tested_files(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The operands test looks at as files. From a review of the hook:
    `test -f ~/.ssh/id_rsa` and `[ -d /root/.aws ]` were allowed with no
    path at all, so whether a secret exists outside the project was
    answered unasked. (`-a` is both "exists" and "and": either reading
    makes its next word a file at most.)"""
    out: list[str] = []
    for i, tok in enumerate(argv[1:-1], start=1):
        if tok in _FILE_TESTS:
            out.append(argv[i + 1])
        elif tok in _FILE_COMPARISONS:
            out += [argv[i - 1], argv[i + 1]]
    return tuple(o for o in out if o not in ("]", "]]", "!", "(", ")", *_FILE_TESTS))


def _command(argv: tuple[str, ...]) -> CommandFacts:
    # `command -v NAME` / `command -V NAME` only look a name up, like `type`.
    if len(argv) > 1 and argv[1] in ("-v", "-V", "-pv", "-pV"):
        return CommandFacts(True)
    return CommandFacts(False, "command runs another command")


def _ps(argv: tuple[str, ...]) -> CommandFacts:
    # BSD-style `ps e` / `ps auxe` prints every process's environment: secrets.
    for a in argv[1:]:
        if not a.startswith("-") and "e" in a:
            return CommandFacts(False, "ps with BSD 'e' shows process environments")
        if a in ("--forest", "--headers", "--no-headers", "--help", "--version"):
            continue
        if a.startswith("--") and a.split("=", 1)[0] not in (
            "--pid",
            "--ppid",
            "--sort",
            "--format",
            "--user",
            "--group",
            "--cols",
            "--columns",
            "--width",
            "--lines",
            "--rows",
            "--tty",
            "--sid",
            "--quick-pid",
        ):
            return CommandFacts(False, f"ps: unknown option {a!r}")
    return CommandFacts(True)


def _cd(argv: tuple[str, ...]) -> CommandFacts:
    ops = [a for a in argv[1:] if not (a.startswith("-") and a != "-")]
    if len(ops) > 1:
        return CommandFacts(False, "cd with more than one operand")
    target = ops[0] if ops else "~"
    physical = any(a.startswith("-") and "P" in a for a in argv[1:] if a != "-")
    if physical and ".." in target.split("/"):
        # `cd -P l/..` goes where the kernel's `..` of l's target is; later
        # relative paths start there, not at the text's parent (`cd -P
        # a/b/l/.. && cat ../../../.ssh/id_rsa`, l -> .): unknown from here
        return CommandFacts(True, reads=(target,), cd="")
    return CommandFacts(True, reads=(target,) if target != "-" else (), cd=target)


def _pushd(argv: tuple[str, ...]) -> CommandFacts:
    """`pushd DIR` is `cd DIR` (from a review: `pushd a; grep -r K c` was
    judged in the old directory and read a/c/.env); `pushd` alone, `+N`,
    `-N` and `popd` go to a directory of the stack: unknown here."""
    ops = [a for a in argv[1:] if a != "-n"]
    if argv[0] == "pushd" and len(ops) == 1 and not ops[0].startswith(("+", "-")):
        return CommandFacts(True, reads=(ops[0],), cd=ops[0])
    return CommandFacts(True, cd="")


def _source(argv: tuple[str, ...]) -> CommandFacts:
    return CommandFacts(False, f"{argv[0]} runs a file's commands in this shell",
                        unknown=argv[1:], cd="")


def _sed(argv: tuple[str, ...]) -> CommandFacts:
    from ..sed import analyze_sed  # noqa: PLC0415 - see AWK_NAMES

    facts = analyze_sed(argv)
    files = tuple(f for f in facts.files if f != "-")
    unknown = facts.unknown + facts.script_files
    if facts.problem:
        # first, before -i: a script that runs (`e`) or writes elsewhere
        # (`w`) is what the reason must say, not "edits in place" (from a
        # review: `Bash(sed:*)`, which covers an in-place edit, let
        # `sed -i '1e cmd' f` run)
        return CommandFacts(False, facts.problem, reads=files,
                            writes=files if facts.in_place else (), unknown=unknown)
    if facts.in_place:
        return CommandFacts(False, "sed -i edits files in place", writes=files, unknown=unknown)
    return CommandFacts(True, reads=files)


def _search(argv: tuple[str, ...]) -> CommandFacts:
    name = argv[0]
    sp = RG if name == "rg" else GREP
    p = parse_args(argv, sp)
    if p.problem:
        return CommandFacts(False, f"{name}: {p.problem}", unknown=argv[1:])
    return CommandFacts(True, reads=tuple(search_paths(name, p)), trees=search_trees(argv, p))


def _reader_args(argv: tuple[str, ...]) -> ParsedArgs:
    if argv[0] in ("grep", "egrep", "fgrep", "rg"):
        return parse_args(argv, RG if argv[0] == "rg" else GREP)
    return parse_args(argv, READERS.get(argv[0], Spec()))


def _awk(argv: tuple[str, ...]) -> CommandFacts:
    from .awk import awk_facts  # noqa: PLC0415 - see AWK_NAMES

    problem, files = awk_facts(argv)
    if problem:
        return CommandFacts(False, problem, unknown=argv[1:])
    return CommandFacts(True, reads=files)


def _find(argv: tuple[str, ...]) -> CommandFacts:
    f = analyze_find(argv)
    problem = f.problem
    reads = list(f.roots + f.reads)
    trees: list[TreeRead] = []
    for exec_argv, terminator in f.execs:
        why = _find_exec_problem(exec_argv, terminator)
        for root in f.roots if why is None else ():
            facts = _facts(tuple(root if w == "{}" else w for w in exec_argv))
            reads.extend(facts.reads)
            why = why or facts.reason
        if why is None:
            trees.extend(found_trees(f, exec_argv, _reader_args(exec_argv), f.follows))
        problem = problem or (f"find -exec {exec_argv[0] if exec_argv else ''}: {why}"
                              if why else None)
    problem = problem or ("find -delete deletes files" if f.deletes else None)
    if problem:
        writes = f.roots if f.deletes else ()
        return CommandFacts(False, problem, tuple(reads), writes)
    trees.extend(listing_trees(argv, ParsedArgs((), (), ()), f))
    return CommandFacts(True, reads=tuple(reads), trees=tuple(trees))


def _find_exec_problem(exec_argv: tuple[str, ...], terminator: str) -> str | None:
    """Why this ``-exec`` clause may not run unasked. Only a reader whose every
    operand is a file may run: find puts a path it found in place of ``{}``
    (``./name`` under a root the command names), so the path is judged as the
    root, never starts with ``-``, and never becomes a program or a script.
    From ``find e -exec sed {} ;``: a file planted as ``e/...`` is a sed
    script that runs commands, hence no sed, jq or awk here."""
    if not exec_argv or exec_argv[0] not in PATH_OPERAND_READERS:
        return "runs a command that is not a reader of files"
    if any("{}" in w and w != "{}" for w in exec_argv):
        return "{} inside a word may build a path that climbs out (`{}/../..`)"
    if terminator not in (";", "+"):
        return "has no end"
    return None


def find_prints_only_paths(argv: tuple[str, ...]) -> bool:
    """Does this find print nothing but NUL-terminated paths it found?
    (``-print0`` and no other output action: ``-printf`` prints any text.)"""
    f = analyze_find(argv)
    return f.problem is None and not f.deletes and f.outputs == {"-print0"} and not f.execs


#: readers whose every operand is a file they read (options aside): a path
#: found by find can be appended (`-exec … {} +`, `-print0 | xargs -0`)
#: without becoming a script, a program or an output file. Not here: sed,
#: awk, jq (the first operand is a program), uniq (the second is written),
#: diff/cmp (exactly two), anything that runs what it reads.
PATH_OPERAND_READERS = frozenset(
    "cat head tail wc ls file stat du md5sum sha1sum sha224sum sha256sum sha384sum sha512sum "
    "b2sum cksum grep egrep fgrep rg".split()
)


def _git(argv: tuple[str, ...]) -> CommandFacts:
    problem = git_problem(argv)
    if problem:
        return CommandFacts(False, problem, unknown=argv[1:])
    return CommandFacts(True, reads=tuple(git_reads(argv)), trees=git_trees(argv))


def _strings(argv: tuple[str, ...]) -> CommandFacts:
    """binutils reads every argument ``@FILE`` — an option's value too
    (``strings -T @FILE``, from a review) — as more arguments, and echoes the
    words it finds there in error messages: ``strings @~/.docker/config.json``."""
    facts = _facts_from_spec(argv, READERS["strings"])
    if not facts.read_only:
        return facts
    reads = [r for r in facts.reads if not r.startswith("@")]
    reads += [w[1:] for w in argv[1:] if w.startswith("@") and len(w) > 1]
    return CommandFacts(True, reads=tuple(dict.fromkeys(reads)))


def _file(argv: tuple[str, ...]) -> CommandFacts:
    """``file -m A:B`` loads each magic file of the colon-separated list (from
    a review: ``file -m a:/etc/shadow`` read the second one)."""
    facts = _facts_from_spec(argv, READERS["file"])
    if not facts.read_only:
        return facts
    reads = [part for r in facts.reads for part in (r, *r.split(":")) if part]
    return CommandFacts(True, reads=tuple(dict.fromkeys(reads)))


def _whereis(argv: tuple[str, ...]) -> CommandFacts:
    """``whereis -B DIR... -f NAME``: the directories after -B, -M or -S (up
    to -f) are listed (from a review: ``whereis -B ~/.ssh -f id_rsa``)."""
    facts = _facts_from_spec(argv, READERS["whereis"])
    if not facts.read_only:
        return facts
    dirs: list[str] = []
    listing = False
    for word in argv[1:]:
        if word in ("-B", "-M", "-S"):
            listing = True
        elif word == "-f":
            listing = False
        elif listing and not word.startswith("-"):
            dirs.append(word)
    return CommandFacts(True, reads=tuple(dirs))


def _jq(argv: tuple[str, ...]) -> CommandFacts:
    p = parse_args(argv, _JQ)
    if p.problem:
        return CommandFacts(False, f"jq: {p.problem}", unknown=argv[1:])
    # After --args / --jsonargs the positional words are values, not files;
    # before it they are still files jq reads. From a review: `jq . /etc/shadow
    # --args x` read the file while every operand was dropped from the check.
    cut = next((i for i, a in enumerate(argv) if a in ("--args", "--jsonargs")), len(argv))
    files = parse_args(argv[:cut], _JQ).positionals[1:]
    return CommandFacts(True, reads=tuple(f for f in files if f != "-"))


#: tools whose `--version` prints and exits, checked by the execution oracle
#: (tests/fuzz): nothing written, nothing else run, no file outside the system
#: (not rustc, cargo or go: rustup's proxies obey the project's
#: rust-toolchain file — `path = "/proc/self/cwd/tc"` made `cargo --version`
#: run the project's tc/bin/cargo, from a review — and go switches to the
#: toolchain go.mod names; version managers' shims are judged by the hook)
VERSION_ONLY = frozenset({"python3", "python", "node", "gcc", "g++", "cc", "clang", "make",
                          "cmake", "ruby", "perl", "bash"})


def _printenv(argv: tuple[str, ...]) -> CommandFacts:
    names = argv[1:]
    if not names:
        return CommandFacts(False, "printenv with no name prints every variable, secrets included")
    secret = next((n for n in names if n not in NON_SECRET_VARS), None)
    if secret is not None:
        return CommandFacts(False, f"printenv {secret}: not a variable known to hold no secret")
    return CommandFacts(True)


def _version(argv: tuple[str, ...]) -> CommandFacts:
    allowed = {("--version",), ("-V",)} if argv[0].startswith("python") else {("--version",)}
    if tuple(argv[1:]) in allowed:
        return CommandFacts(True)
    return CommandFacts(False, f"{argv[0]!r} is not a known read-only command", unknown=argv[1:])


_SPECIAL_READERS = {
    "printf": _printf,
    "test": _test,
    "[": _test,
    "[[": _test,
    "ps": _ps,
    "command": _command,
    "cd": _cd,
    "pushd": _pushd,
    "popd": _pushd,
    "source": _source,
    ".": _source,
    "sed": _sed,
    "grep": _search,
    "egrep": _search,
    "fgrep": _search,
    "rg": _search,
    "find": _find,
    **dict.fromkeys(AWK_NAMES, _awk),
    "git": _git,
    "jq": _jq,
    "strings": _strings,
    "file": _file,
    "whereis": _whereis,
    "printenv": _printenv,
    **dict.fromkeys(VERSION_ONLY, _version),
}


@valueclass
class OptionTable:
    """The options the analyzer accepts for one program (or git subcommand):
    for a fuzzer that draws the installed tool's options and wants to know
    which of them the tables claim to understand. ``takes`` maps each
    option to its argument kind's name (``none``, ``value``, ``num``,
    ``read``, ``optional``, ``value2``)."""

    program: tuple[str, ...]
    takes: dict[str, str]


def option_tables() -> tuple[OptionTable, ...]:
    """Every option table the analyzer allows commands by: the readers, the
    searchers, jq, and git's read-only subcommands (``("git", "log")``)."""
    out = [OptionTable((name,), {o: k.value for o, k in spec.flags.items()})
           for name, spec in sorted(READERS.items()) if name not in ARGUMENT_AGNOSTIC]
    out += [OptionTable((name,), {o: k.value for o, k in spec.flags.items()})
            for name, spec in (("grep", GREP), ("egrep", GREP), ("fgrep", GREP), ("rg", RG),
                               ("jq", _JQ))]
    out += [OptionTable(("git", sub), {o: k.value for o, k in table.items()})
            for sub, table in sorted(git_tables().items())]
    return tuple(out)
