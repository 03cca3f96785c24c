"""The option sets of the installed tools, learnt from the tools themselves.

The analyzer's option tables are an allowlist written by hand; the installed tool is
the truth. An option a table lacks is one a reviewer may try, and one it has may be
spelt in a form it never saw (``-oF``, ``--out=F``, ``--out F``). So each installed tool
is asked for its help (``--help``, else ``-h``, else ``man``; git's ``-h`` and jq's
``--help`` are excerpts, so their man pages too), the help is parsed into
:class:`Option` values, and :func:`spellings` writes each in every form the tool's
parser accepts; options that take files or run programs are marked to be tried first.

Unlike the analyzer, this module runs processes: each tool once, with ``LANG=C``, stdin
from ``/dev/null``, a throwaway ``HOME`` and a timeout.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from subprocess import DEVNULL, PIPE, STDOUT

from analyzers import option_tables
from regexes import regex
from values import valueclass

_Program = tuple[str, ...]  # ("sort",), ("git", "log")
_Merge = Callable[["Option", "Option"], "Option"]

# ---- data -----------------------------------------------------------------

#: the words that make an option worth running first: it names a file or a program to run
_VALUE_WORDS = regex(r"\b(?:file|path|command\b(?![ -]line)|exec|pager|editor|script|socket"
                          r"|url|dir|shell|hook|helper|external)", re.IGNORECASE)
#: the same, said in a name or metavar ("--output=FILE", "PROG"), not in help ("the output")
_NAME_WORDS = regex(r"output|write|prog|cmd|command|file|dir|path", re.IGNORECASE)
#: a switch names no file itself ("list one file per line" is harmless), and "write"
#: is how GNU says "print"; only switches that run something are worth running first
_SWITCH_WORDS = regex(r"\b(?:command\b(?![ -]line)|exec|pager|editor|script|socket|url"
                           r"|shell|hook|helper|external)", re.IGNORECASE)
#: parsers that take only exact long names: clap 2 (rg), jq's, xxd's and which's own; git's
#: revision walkers (``git log --oneli`` is "unrecognized argument"), and blame/shortlog,
#: which abbreviate their own options but not the revision options their man pages list
_NO_ABBREVIATION = frozenset({("jq",), ("rg",), ("xxd",), ("which",), *(("git", sub) for sub in (
    "log", "show", "whatchanged", "rev-list", "diff", "diff-files", "diff-index", "diff-tree",
    "shortlog", "blame", "annotate"))})
#: jq reads ``--indent 2`` only; ``--indent=2`` is "Unknown option"
_NO_ATTACHED_LONG = frozenset({("jq",)})
#: tools whose --help is an excerpt of their man page: git's -h abridges (git log -h
#: lists 10 options), jq's says "Some of the options include"
_HELP_IS_EXCERPT = frozenset({"git", "jq"})
#: man pages that document a program under another name (whatchanged "takes git log's")
_MAN_PAGE: dict[tuple[str, ...], str] = {("git", "whatchanged"): "git-log"}
_MAX_OUTPUT = 1 << 20  # a help longer than this is garbage; parse its head only
_ABBREVIATIONS = 3
_MAX_BINARY = 1 << 26
_C_STRING = regex(rb"(?<=\x00)[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?=\x00)")
_ENV = {"LANG": "C", "LC_ALL": "C", "MANWIDTH": "200", "MANPAGER": "cat", "PAGER": "cat",
        "GIT_PAGER": "cat", "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1", "TERM": "dumb"}

_LONG = regex(r"--(\[no-\])?([A-Za-z0-9][A-Za-z0-9-]*)(.*)")
_SHORT = regex(r"-([A-Za-z0-9?])(.*)")
_METAVAR = regex(r"[\[<{(].*|[A-Z][A-Z0-9_]*(?:[-+:.,/][A-Z0-9_]+)*(?:\.\.\.)?")
_LOWER_METAVAR = regex(r"[a-z][a-z0-9_]*")
#: what the first character after a short option's letter says of its value
_SHORT_VALUE = {"": "none", "[": "optional", **dict.fromkeys("<{:=", "required")}
#: words between aliases: "-c, -C", "--objects | --objects-edge", "--slurp/-s"
_SEPARATORS = frozenset({"|", "/", "-", "or", "and"})
#: man's list bullets, as rendered in UTF-8 and in the C locale: "◦   --seq:", "O   --seq:"
_BULLET = regex(r"^(\s*)(?:[oO*+\u2022\u25e6\u00b7])\s{2,}(?=-)")
#: dash words that name no option: "-<number>", "-.", "--"
_NOT_A_NAME = regex(r"-<[^>]*>|-[^A-Za-z0-9?\s]")
#: "--LTYPE-line-format": a placeholder in a name stands for a family of options
_PLACEHOLDER_NAME = regex(r"[A-Z]{2,}-[a-z]|[a-z]-[A-Z]{2,}")
#: a placeholder value ("FILE", "<n>", "{name|descriptor}"), not a literal one ("quiet")
_PLACEHOLDER = regex(r"[\[<{(A-Z]")
#: git's parse-options prints one usage per option: its short takes what its long takes
_SHARED_ARGUMENT = regex(r"\s*usage: git ")
#: rg documents its negations in prose: "This flag can be disabled with --no-hidden."
_PROSE_NEGATION = regex(r"\b(?:disabled|negated) (?:with|by) (?:the )?(--no-[A-Za-z0-9-]+)")
_OVERSTRIKE = regex(r".\x08|\x1b\[[0-9;]*[A-Za-z]")


@valueclass
class Option:
    """One spelling of one option, as the tool's help describes it."""

    name: str
    takes: str
    metavar: str
    help: str
    suspicious: bool


@valueclass
class ToolOptions:
    """What an installed tool says it accepts, and where it said so."""

    program: tuple[str, ...]
    options: tuple[Option, ...]
    source: str

    def long_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options if o.name.startswith("--"))


@valueclass(frozen=False)
class _Spec:
    name: str
    long: bool
    takes: str = "none"
    metavar: str = ""
    closed: bool = False  # a comma or an attached value: no metavar may follow


def _token(tok: str) -> list[_Spec] | None:
    """The options one word of a spec names, [] for a separator, None for prose."""
    if tok in _SEPARATORS or _NOT_A_NAME.fullmatch(tok):
        return []
    if "/" in tok and all(p.startswith("-") for p in tok.split("/")):  # jq: "--slurp/-s"
        parts = [_token(p) for p in tok.split("/")]
        return None if any(p is None for p in parts) else [s for p in parts for s in p or []]
    if m := _LONG.fullmatch(tok):
        return _long(m.group(1) is not None, "--" + m.group(2), m.group(3))
    if m := _SHORT.fullmatch(tok):
        rest = m.group(2)
        if (kind := _SHORT_VALUE.get(rest[:1])) is None:
            return []  # "-ps", "-NUM", "-Ldirectory": a word, not an option we can name
        return [_Spec("-" + m.group(1), False, kind, rest.strip("[=]"), bool(rest))]
    return None


def _long(negatable: bool, name: str, rest: str) -> list[_Spec] | None:
    if _PLACEHOLDER_NAME.search(name):
        return []  # diff's "--LTYPE-line-format": a family of options, not one
    kind = "optional" if rest.startswith("[=") else "required" if rest[:1] == "=" else None
    if kind is None and rest:
        return None  # "--stat." is a sentence's word
    value = rest[2:].removesuffix("]") if kind == "optional" else rest[1:]
    spec = _Spec(name, True, kind or "none", value, bool(rest))
    return [spec, _Spec("--no-" + name[2:], True, closed=True)] if negatable else [spec]


def _parse_line(line: str, next_line: str, column: int, shared: bool) -> list[Option]:
    """The options of one line, [] for prose. The spec is the leading run of option and
    value words; the help starts after a wide gap, at the text's help column, or with a
    capital ("-e --encoding={s,S} Select"); anything else means a sentence."""
    body = _BULLET.sub(r"\1", line)
    if not body.lstrip().startswith("-"):
        return []
    words = [(m.start(2), len(m.group(1)), m.group(2)) for m in re.finditer(r"(\s*)(\S+)", body)]
    specs: list[_Spec] = []
    lowercase, end = False, len(words)
    for i, (col, gap, word) in enumerate(words):
        tok, at_help = word.rstrip(",:"), i > 0 and gap == 1 and col == column
        found = None if at_help else _token(tok)
        if found is None and specs and not specs[-1].closed and gap == 1 and not at_help:
            found = _metavar(specs[-1], tok)
            lowercase |= found == [] and bool(_LOWER_METAVAR.fullmatch(tok))
        elif found == [] and i > 0 and gap >= 2:
            found = None  # a separator after a wide gap is the help's first word
        if found is None:
            end = i
            break
        specs += found
        if word.endswith(",") and specs:
            specs[-1].closed = True
    help_text = _help(words[end:], line, next_line, lowercase, column)
    return _options(specs, help_text, shared) if help_text is not None else []


def _metavar(spec: _Spec, tok: str) -> list[_Spec] | None:
    """Append a detached value word to the option before it (at most two: jq's --arg a v)."""
    words = spec.metavar.split()
    if len(words) >= 2 or not (_METAVAR.fullmatch(tok) or _LOWER_METAVAR.fullmatch(tok)):
        return None
    spec.takes, spec.metavar = "required", " ".join([*words, tok])
    return []


def _help(rest: list[tuple[int, int, str]], line: str, next_line: str, lowercase: bool,
          column: int) -> str | None:
    """The help of a spec line, or None when the line is prose that starts with a dash."""
    if not rest:  # the description is below (git -h, man pages), or a term "--arg name value:"
        if lowercase and not line.rstrip().endswith(":"):
            return None
        indent = len(line) - len(line.lstrip())
        below = next_line.lstrip()
        deeper = len(next_line) - len(below) > indent and not below.startswith("-")
        return below.strip() if deeper else ""
    col, gap, first = rest[0]
    if gap >= 2 or (not lowercase and (col == column or re.match(r"[A-Z][a-z]", first))):
        return " ".join(word for _, _, word in rest)
    return None


def _in_a_list(above: list[str], line: str) -> bool:
    """cut's "  N-   from N'th", "  N-M   from N'th to M'th" make the "  -M   from first"
    under them a term of their list: a line right under two non-options at its indentation."""
    indent = len(line) - len(line.lstrip())
    return all(t.strip() and not t.lstrip().startswith("-") and len(t) - len(t.lstrip()) == indent
               for t in above)


def _help_column(lines: list[str]) -> int:
    """Where most option lines start their help: a one-space gap there still ends the spec
    ("-I, --all-ip-addresses all addresses" in hostname's aligned help)."""
    columns = Counter(m.end() for line in lines if line.lstrip().startswith("-")
                      and (m := re.search(r"\S {2,}(?=\S)", line)))
    return columns.most_common(1)[0][0] if columns else -1


def _options(specs: list[_Spec], help_text: str, shared: bool) -> list[Option]:
    """Shorts on a long's line take its value ("-o, --output=FILE") unless one has its own
    ("-c, -C NUM, --context[=NUM]"), the value is a literal ("-C, --check=quiet"), or it is
    optional outside git (GNU's "-F, --classify[=WHEN]": -F is a switch; git's -U5 is -U 5)."""
    kinds = ("required", "optional") if shared else ("required",)
    valued = next((s for s in specs if s.long and s.takes in kinds
                   and _PLACEHOLDER.match(s.metavar)), None)
    inherit = valued if all(s.long or s.takes == "none" for s in specs) else None
    return [_option(s.name, v.takes, v.metavar, help_text)
            for s in specs for v in [inherit if inherit and not s.long else s]]


def _option(name: str, takes: str, metavar: str, help_text: str) -> Option:
    words = _VALUE_WORDS if takes != "none" else _SWITCH_WORDS
    named = takes != "none" and _NAME_WORDS.search(f"{name} {metavar}")
    suspicious = bool(named or words.search(f"{name} {metavar} {help_text}"))
    return Option(name, takes, metavar, help_text, suspicious)


def _merge(old: Option, new: Option) -> Option:
    """Two lines for one name: "--abbrev=<n>" and "--abbrev" mean the value is optional."""
    kinds, long = {old.takes, new.takes}, old.name.startswith("--")
    optional = "optional" in kinds or (kinds == {"none", "required"} and long)
    return _option(old.name, "optional" if optional else old.takes, old.metavar or new.metavar,
                   old.help or new.help)


def _dedupe(options: Iterable[Option], merge: _Merge = _merge) -> tuple[Option, ...]:
    seen: dict[str, Option] = {}
    for o in options:
        seen[o.name] = merge(seen[o.name], o) if o.name in seen else o
    return tuple(sorted(seen.values(), key=lambda o: o.name))


def parse_help(text: str) -> tuple[Option, ...]:
    """The options a help text (GNU, git -h, rg, BSD-ish) or a man page describes (pure)."""
    if len(text) > _MAX_OUTPUT:  # garbage: parse only the whole lines of its head
        text = text[:text.rfind("\n", 0, _MAX_OUTPUT) + 1]
    lines = _OVERSTRIKE.sub("", text).replace("\t", "        ").splitlines()
    column, shared = _help_column(lines), bool(_SHARED_ARGUMENT.match(text))
    padded = ["", "", *lines, ""]  # two lines above each line, one below
    found = [o for *above, line, below in zip(padded, padded[1:], lines, padded[3:], strict=False)
             if not _in_a_list(above, line) for o in _parse_line(line, below, column, shared)]
    found += [_option(name, "none", "", line.strip()) for line in lines
              for name in _PROSE_NEGATION.findall(line)]
    return _dedupe(found)


def _run(argv: list[str], timeout: float) -> str:
    """stdout+stderr of one help command; "" when it cannot be run or hangs."""
    with tempfile.TemporaryDirectory(prefix="shellgate-options-") as home:
        env = {"PATH": os.environ.get("PATH", os.defpath), **_ENV, "HOME": home}
        try:
            proc = subprocess.Popen(argv, stdin=DEVNULL, stdout=PIPE, stderr=STDOUT, env=env,
                                    cwd=home, start_new_session=True)
        except OSError:
            return ""
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:  # man runs a pipeline: end the whole group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return ""
    head = out if len(out) <= _MAX_OUTPUT else out[:out.rfind(b"\n", 0, _MAX_OUTPUT) + 1]
    return head.decode("utf-8", "replace")


def _sources(program: tuple[str, ...]) -> tuple[list[tuple[str, list[str]]], bool]:
    """The help commands to ask, and whether to merge them all (else: the first that speaks)."""
    page = _MAN_PAGE.get(program, "-".join(program))
    man = [(f"man {page}", ["man", "-P", "cat", page])] if shutil.which("man") else []
    flags = ["-h"] if program[0] == "git" else ["--help"]
    flags += [] if program[0] in _HELP_IS_EXCERPT else ["-h"]
    helps = [(f"{' '.join(program)} {flag}", [*program, flag]) for flag in flags]
    return [*helps, *man], program[0] in _HELP_IS_EXCERPT


def _believe_first(old: Option, new: Option) -> Option:
    """Two sources for one name: the first (git -h) is believed over the man page's prose
    ("--reverse <rev>..<rev>" is a switch and a range), except that a value the first
    omits may be optional ("--branches" is "--branches[=<pattern>]" in man git-rev-list)."""
    return new if new.takes == "optional" and old.takes == "none" else old


@functools.cache
def _tool_options(program: tuple[str, ...], timeout: float) -> ToolOptions | None:
    """--help, else -h, else man: the first that yields anything (where --help and man both
    speak, they are one author's two drafts); for git and excerpts, all of them."""
    sources, merge = _sources(program)
    found: list[tuple[str, tuple[Option, ...]]] = []
    for label, argv in sources:
        try:
            options = parse_help(_run(argv, timeout))
        except Exception:  # a parser bug on one tool's text must not cost the others
            options = ()
        if options:
            found.append((label, options))
            if not merge:
                break
    labels = " + ".join(label for label, _ in found)
    options = _dedupe((o for _, opts in found for o in opts), _believe_first)
    return ToolOptions(program, options, labels) if found else None


@functools.cache
def _installed(programs: tuple[_Program, ...], timeout: float) -> dict[_Program, ToolOptions]:
    present = [p for p in programs if p and shutil.which(p[0])]
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = pool.map(lambda p: _tool_options(p, timeout), present)
        return {p: tool for p, tool in zip(present, found, strict=True) if tool is not None}


def installed_options(programs: Iterable[tuple[str, ...]] | None = None, *,
                      timeout: float = 5.0) -> dict[tuple[str, ...], ToolOptions]:
    """The options of each installed program (default: every program the analyzer has a
    table for). Programs not installed, or whose help yields nothing, are left out."""
    wanted = (t.program for t in option_tables()) if programs is None else programs
    return dict(_installed(tuple(dict.fromkeys(tuple(p) for p in wanted)), timeout))


@functools.cache
def _hidden_names(program: str) -> frozenset[str]:
    """The binary's C strings: among them the long options no help lists (cmp --print-chars),
    which make a prefix ambiguous all the same; the other words only cost an abbreviation."""
    path = shutil.which(program)
    with contextlib.suppress(OSError), open(path or os.devnull, "rb") as binary:
        return frozenset("--" + w.decode() for w in _C_STRING.findall(binary.read(_MAX_BINARY)))
    return frozenset()


@functools.cache
def _rivals(tool: ToolOptions) -> frozenset[str]:
    """The long names a prefix is matched against: the help's and the binary's; for git also
    each option's negation ("--no-ab" is --no-abbrev) and each "no-" option's positive."""
    names = {n.lower() for n in tool.long_names()}
    if tool.program[0] != "git":
        names |= _hidden_names(tool.program[0])
    else:
        names |= {"--no-" + n[2:] for n in names if not n.startswith("--no-")}
        names |= {"--" + n[5:] for n in names if n.startswith("--no-")}
    return frozenset(names)


def _abbreviations(name: str, tool: ToolOptions) -> tuple[str, ...]:
    """The shortest unique prefixes of a long name, as getopt_long and git accept them."""
    if not name.startswith("--") or tool.program in _NO_ABBREVIATION:
        return ()
    rivals, found = _rivals(tool), []
    for end in range(3, len(name)):
        prefix = name[:end]
        if tool.program[0] == "git" and "--no-".startswith(prefix):
            continue  # git: "--no" is the negation of every option at once
        if all(r == name.lower() for r in rivals if r.startswith(prefix.lower())):
            found.append(prefix)
        if len(found) == _ABBREVIATIONS:
            break
    return tuple(found)


def _forms(name: str, option: Option, program: _Program, value: str) -> Iterator[tuple[str, ...]]:
    long = name.startswith("--")
    if option.takes == "none":
        yield (name,)
    elif option.takes == "optional":  # GNU [=VALUE]: the value is attached or absent
        yield (name,)
        yield (f"{name}={value}",) if long else (f"{name}{value}",)
    elif len(option.metavar.split()) > 1:  # jq --arg NAME VALUE: detached only
        yield (name, *[value] * len(option.metavar.split()))
    else:
        if not long or program not in _NO_ATTACHED_LONG:
            yield (f"{name}={value}",) if long else (f"{name}{value}",)
        yield (name, value)


def spellings(option: Option, tool: ToolOptions, value: str) -> tuple[tuple[str, ...], ...]:
    """Every form the real tool accepts for this option, each as the argv words it takes."""
    names = (option.name, *_abbreviations(option.name, tool))
    return tuple(form for name in names for form in _forms(name, option, tool.program, value))


__all__ = ["Option", "ToolOptions", "installed_options", "parse_help", "spellings"]
