"""The installed tools' options, learnt from their own help (fuzz/options.py).

Where a test depends on a tool it runs the real one: the point of the module
is that the installed tool, not a table written by hand, is the truth.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from analyzers import option_tables
from fuzz.options import Option, ToolOptions, installed_options, parse_help, spellings
from values import FrozenInstanceError

NAME = re.compile(r"-[A-Za-z0-9?]|--[A-Za-z0-9][A-Za-z0-9-]*")
KINDS = {"none", "required", "optional"}
#: what getopt_long, argp, Getopt::Long and git's parse-options say of an option they refuse
GETOPT_ERROR = re.compile(r"unrecognized option|ambiguous|invalid option|unknown option"
                          r"|requires an argument|doesn't allow an argument|takes no value",
                          re.IGNORECASE)
ENV = {**os.environ, "LANG": "C", "LC_ALL": "C", "GIT_PAGER": "cat", "PAGER": "cat"}


def _needs(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"not installed: {' '.join(missing)}")


def _tool(*program: str) -> ToolOptions:
    _needs(program[0])
    return installed_options([program])[program]


def _option(tool: ToolOptions, name: str) -> Option:
    return next(o for o in tool.options if o.name == name)


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=10,
                          stdin=subprocess.DEVNULL, env=ENV, check=False)


# ---- parse_help on samples of each style ---------------------------------

GNU = """\
Usage: sort [OPTION]... [FILE]...
Write sorted concatenation of all FILE(s) to standard output.

  -b, --ignore-leading-blanks  ignore leading blanks
  -k, --key=KEYDEF          sort via a key; KEYDEF gives location and type
  -o, --output=FILE         write result to FILE instead of standard output
  -t, --field-separator=SEP  use SEP instead of non-blank to blank transition
  -T, --temporary-directory=DIR  use DIR for temporaries, not $TMPDIR or /tmp;
      --compress-program=PROG  compress temporaries with PROG;
      --color[=WHEN]        colorize the output; WHEN can be 'always'
  -C, --check=quiet, --check=silent  like -c, but do not report first bad line
  -s, --quiet, --silent     suppress all normal output
  -I[FMT], --iso-8601[=FMT]  output date/time in ISO 8601 format.
  -  (hyphen) do not pad the field
--terse is equivalent to the following FORMAT:
Full documentation <https://www.gnu.org/software/coreutils/sort>
"""
GNU_SHARED = """\
  -c, -C NUM, --context[=NUM]   output NUM (default 3) lines of copied context
  -F, --classify[=WHEN]      append indicator (one of */=>@|) to entries WHEN
  -s N, --seconds N   repeat printing every N seconds
"""
GIT = """\
usage: git log [<options>] [<revision-range>] [[--] <path>...]

    -q, --[no-]quiet      be quiet
    --output <file>       output to a specific file
    -U, --unified[=<n>]   generate diffs with <n> lines context
    --abbrev[=<n>]        use <n> digits to display object names
    --decorate-refs <pattern>
                          only decorate refs that match <pattern>
    --ext-diff            allow an external diff helper to be executed
    --objects | --objects-edge
"""
GIT_MAN = """\
OPTIONS
       --[no-]mailmap, --[no-]use-mailmap
           Use mailmap file to map author and committer names and email addresses.

       -<number>, -n <number>, --max-count=<number>
           Limit the number of commits to output.

       --expand-tabs=<n>, --expand-tabs, --no-expand-tabs
           Perform a tab expansion (replace each tab with enough spaces).

       --full-history without parent rewriting
           This mode differs from the default in one point: always follow all parents.
"""
RG = """\
OPTIONS:
    -e, --regexp <PATTERN>...
            A pattern to search for.
        --pre <COMMAND>
            For each input FILE, search the standard output of COMMAND FILE rather
            than the contents of FILE.

            This flag can be disabled with --no-pre.
    -., --hidden
            Search hidden files and directories.
            --color flag changes to 'never'.
            -e/--regexp or -f/--file flags).
"""
RG_14 = """\
    -e, --regexp=PATTERN      A pattern to search for.
    --pre=COMMAND             Search output of COMMAND for each PATH.
    -g, --glob=GLOB           Include or exclude file paths.
"""
XXD = """\
Usage:
       xxd [options] [infile [outfile]]
    or
       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]
Options:
    -a          toggle autoskip: A single '*' replaces nul-lines. Default off.
    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).
    -ps         output in postscript plain hexdump style.
    -r -s off   revert with <off> added to file positions found in hexdump.
    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.
"""
JQ_MAN = """\
       O   --seq:

           Use the application/json-seq MIME type scheme for separating JSON texts.

       O   --slurp/-s:

           Instead of running the filter for each JSON object in the input, read it all.

       O   --arg name value:

           This option passes a value to the filter as a predefined variable.

       O   -Ldirectory / -L directory:

           Prepend directory to the search list for modules.
"""
NOT_OPTIONS = """\
Each range is one of:

  N     N'th byte, character or field, counted from 1
  N-M   from N'th to M'th (included) byte, character or field
  -M    from first to M'th (included) byte, character or field
  --               terminates argument processing;
See https://example.com/--foo and <http://www.debian.org/Bugs/>.
  - a dash alone, -- and --- are no options
"""


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(GNU, {"-b": "none", "--ignore-leading-blanks": "none", "-k": "required",
                       "--key": "required", "-o": "required", "--output": "required",
                       "-t": "required", "--field-separator": "required", "-T": "required",
                       "--temporary-directory": "required", "--compress-program": "required",
                       "--color": "optional", "-C": "none", "--check": "required",
                       "-s": "none", "--quiet": "none", "--silent": "none",
                       "-I": "optional", "--iso-8601": "optional"}, id="gnu"),
    pytest.param(GNU_SHARED, {"-c": "none", "-C": "required", "--context": "optional",
                              "-F": "none", "--classify": "optional", "-s": "required",
                              "--seconds": "required"}, id="gnu-short-beside-long"),
    pytest.param(GIT, {"-q": "none", "--quiet": "none", "--no-quiet": "none",
                       "--output": "required", "-U": "optional", "--unified": "optional",
                       "--abbrev": "optional", "--decorate-refs": "required",
                       "--ext-diff": "none", "--objects": "none", "--objects-edge": "none"},
                 id="git-h"),
    pytest.param(GIT_MAN, {"--mailmap": "none", "--no-mailmap": "none", "--use-mailmap": "none",
                           "--no-use-mailmap": "none", "-n": "required",
                           "--max-count": "required", "--expand-tabs": "optional",
                           "--no-expand-tabs": "none"}, id="git-man"),
    pytest.param(RG, {"-e": "required", "--regexp": "required", "--pre": "required",
                      "--no-pre": "none", "--hidden": "none"}, id="rg-13"),
    pytest.param(RG_14, {"-e": "required", "--regexp": "required", "--pre": "required",
                         "-g": "required", "--glob": "required"}, id="rg-14"),
    pytest.param(XXD, {"-a": "none", "-c": "required", "-r": "none", "-s": "required"},
                 id="xxd"),
    pytest.param(JQ_MAN, {"--seq": "none", "--slurp": "none", "-s": "none",
                          "--arg": "required", "-L": "required"}, id="jq-man"),
    pytest.param(NOT_OPTIONS, {}, id="not-options"),
])
def test_a_help_text_yields_exactly_its_options_and_their_kinds(
        text: str, expected: dict[str, str]) -> None:
    assert {o.name: o.takes for o in parse_help(text)} == expected


@pytest.mark.parametrize(("text", "name", "metavar", "help_text", "suspicious"), [
    (GNU, "--output", "FILE", "write result to FILE instead of standard output", True),
    (GNU, "-o", "FILE", "write result to FILE instead of standard output", True),
    (GNU, "--compress-program", "PROG", "compress temporaries with PROG;", True),
    (GNU, "-T", "DIR", "use DIR for temporaries, not $TMPDIR or /tmp;", True),
    (GNU, "-b", "", "ignore leading blanks", False),
    (GIT, "--output", "<file>", "output to a specific file", True),
    (GIT, "--decorate-refs", "<pattern>", "only decorate refs that match <pattern>", False),
    (GIT, "--ext-diff", "", "allow an external diff helper to be executed", True),
    (RG, "--pre", "<COMMAND>", "For each input FILE, search the standard output of COMMAND "
     "FILE rather", True),
    # jq's man page puts a blank line between a term and its description: no help there
    (JQ_MAN, "--arg", "name value", "", False),
    (JQ_MAN, "-L", "directory", "", True),
    (XXD, "-c", "cols", "format <cols> octets per line. Default 16 (-i: 12, -ps: 30).", False),
])
def test_an_option_keeps_its_metavar_and_help_and_is_suspicious_when_it_names_a_file_or_program(
        text: str, name: str, metavar: str, help_text: str, suspicious: bool) -> None:
    option = next(o for o in parse_help(text) if o.name == name)
    assert (option.metavar, option.help, option.suspicious) == (metavar, help_text, suspicious)


def test_options_are_frozen_slotted_and_sorted_by_name_without_duplicates() -> None:
    options = parse_help(GNU + GNU)
    names = [o.name for o in options]
    assert names == sorted(set(names))
    with pytest.raises(FrozenInstanceError):
        options[0].name = "-x"  # type: ignore[misc]
    assert not hasattr(options[0], "__dict__")
    tool = ToolOptions(("sort",), options, "sample")
    assert tool.long_names() == tuple(n for n in names if n.startswith("--"))


# ---- bad tool output ------------------------------------------------------

def _garbage() -> str:
    rng = random.Random(7)
    return bytes(rng.randrange(256) for _ in range(200_000)).decode("utf-8", "replace")


@pytest.mark.parametrize("text", [
    pytest.param("", id="empty"),
    pytest.param(_garbage(), id="binary-garbage"),
    pytest.param("\x00\x1b[1m--\x08-\n" * 5000, id="control-characters"),
    pytest.param(GNU * (2_000_000 // len(GNU)), id="2MB-help"),
    pytest.param("-" * 2_000_000, id="2MB-one-line"),
])
def test_bad_help_output_gives_a_sane_result_and_never_raises(text: str) -> None:
    started = time.monotonic()
    options = parse_help(text)
    assert time.monotonic() - started < 20
    assert all(NAME.fullmatch(o.name) and o.takes in KINDS for o in options)
    if text.startswith(GNU):
        assert {o.name for o in options} == {o.name for o in parse_help(GNU)}


@pytest.mark.slow  # waits out a hanging tool's timeout, twice
def test_a_tool_that_prints_garbage_hangs_or_crashes_costs_only_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _needs("sort", "sh")
    scripts = {
        "sg-test-empty": "exit 0",
        "sg-test-garbage": "head -c 100000 /dev/urandom",
        "sg-test-huge": "i=0; while [ $i -lt 40000 ]; do echo '  -a, --all   do it all"
                        "                                '; i=$((i+1)); done",
        "sg-test-hang": "sleep 30",
        "sg-test-crash": "kill -SEGV $$",
    }
    for name, body in scripts.items():
        (tmp_path / name).write_text(f"#!/bin/sh\n{body}\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    programs = [(name,) for name in scripts] + [("sort",)]
    started = time.monotonic()
    found = installed_options(programs, timeout=1.5)
    assert time.monotonic() - started < 30
    assert ("sort",) in found
    assert {o.name for o in found.get(("sg-test-huge",), _empty()).options} <= {"-a", "--all"}
    for tool in found.values():
        assert all(NAME.fullmatch(o.name) and o.takes in KINDS for o in tool.options)
    assert ("sg-test-hang",) not in found and ("sg-test-empty",) not in found


def _empty() -> ToolOptions:
    return ToolOptions((), (), "")


def test_a_program_that_is_not_installed_is_left_out() -> None:
    assert installed_options([("shellgate-no-such-tool",), ("git", "no-such-subcommand")]) == {}


# ---- the installed tools --------------------------------------------------

@pytest.mark.parametrize(("program", "name", "takes", "suspicious"), [
    (("sort",), "--compress-program", "required", True),
    (("sort",), "-o", "required", True),
    (("sort",), "--output", "required", True),
    (("git", "log"), "--output", "required", True),
    (("git", "log"), "--ext-diff", "none", True),
    (("rg",), "--pre", "required", True),
    (("ls",), "--color", "optional", False),
    (("locale",), "-m", "none", None),
])
def test_the_installed_tool_reports_its_option(
        program: tuple[str, ...], name: str, takes: str, suspicious: bool | None) -> None:
    option = _option(_tool(*program), name)
    assert option.takes == takes
    assert suspicious is None or option.suspicious is suspicious


INSTALLED = [t.program for t in option_tables()]


@pytest.mark.parametrize("program", INSTALLED, ids=" ".join)
def test_every_installed_program_of_the_tables_yields_options(program: tuple[str, ...]) -> None:
    _needs(program[0])
    tool = installed_options([program]).get(program)
    assert tool is not None and tool.options, f"{' '.join(program)}: no option parsed"
    names = [o.name for o in tool.options]
    assert names == sorted(set(names))
    assert all(NAME.fullmatch(o.name) and o.takes in KINDS for o in tool.options)


def test_results_are_cached_per_process() -> None:
    _needs("sort")
    first = installed_options([("sort",)])[("sort",)]
    assert installed_options([("sort",), ("sort",)])[("sort",)] is first


@pytest.mark.slow  # some 200 help commands and man pages, about 1.5 s here, more when busy
def test_all_programs_are_learnt_in_bounded_time(record_property: pytest.RecordProperty) -> None:
    _needs("sort", "git")
    started = time.monotonic()
    found = installed_options(timeout=4.0)  # a timeout of its own: not the cached result
    elapsed = time.monotonic() - started
    total = sum(len(tool.options) for tool in found.values())
    record_property("options", total)
    print(f"{len(found)} programs, {total} options in {elapsed:.1f}s")
    assert elapsed < 60
    assert total > 2000


# ---- spellings --------------------------------------------------------------

def _fake(program: tuple[str, ...], *options: Option) -> ToolOptions:
    return ToolOptions(program, options, "test")


NUMBER = Option("--number", "none", "", "", False)
NUMERIC = Option("--numeric-suffixes", "optional", "FROM", "", False)
SHORT_O = Option("-o", "required", "FILE", "", True)
OUTPUT = Option("--output", "required", "FILE", "", True)
COLOR = Option("--color", "optional", "WHEN", "", False)
SHORT_I = Option("-I", "optional", "FMT", "", False)
ARG = Option("--arg", "required", "name value", "", False)
GNU_TOOL = _fake(("shellgate-fake-gnu",), NUMBER, NUMERIC, SHORT_O, OUTPUT, COLOR, SHORT_I)
NAME_ONLY = Option("--name-only", "none", "", "", False)
GIT_TOOL = _fake(("git", "shellgate-fake"), NAME_ONLY, Option("--all", "none", "", "", False))


@pytest.mark.parametrize(("option", "tool", "expected"), [
    pytest.param(NUMBER, GNU_TOOL, (("--number",), ("--numb",), ("--numbe",)), id="switch"),
    pytest.param(SHORT_O, GNU_TOOL, (("-oX",), ("-o", "X")), id="short-required"),
    pytest.param(OUTPUT, GNU_TOOL, (("--output=X",), ("--output", "X"), ("--o=X",), ("--o", "X"),
                                    ("--ou=X",), ("--ou", "X"), ("--out=X",), ("--out", "X")),
                 id="long-required"),
    pytest.param(COLOR, GNU_TOOL, (("--color",), ("--color=X",), ("--c",), ("--c=X",), ("--co",),
                                   ("--co=X",), ("--col",), ("--col=X",)), id="long-optional"),
    pytest.param(SHORT_I, GNU_TOOL, (("-I",), ("-IX",)), id="short-optional"),
    pytest.param(NAME_ONLY, GIT_TOOL, (("--name-only",), ("--na",), ("--nam",), ("--name",)),
                 id="git-no-prefix-is-every-negation"),
    pytest.param(ARG, _fake(("jq",), ARG), (("--arg", "X", "X"),), id="two-values"),
    pytest.param(COLOR, _fake(("rg",), COLOR), (("--color",), ("--color=X",)),
                 id="clap-takes-no-abbreviation"),
    pytest.param(OUTPUT, _fake(("jq",), OUTPUT), (("--output", "X"),), id="jq-takes-no-equals"),
])
def test_spellings_are_the_forms_the_parser_accepts(
        option: Option, tool: ToolOptions, expected: tuple[tuple[str, ...], ...]) -> None:
    assert spellings(option, tool, "X") == expected


def test_sort_accepts_an_abbreviation_spellings_give() -> None:
    reverse = _option(_tool("sort"), "--reverse")
    assert ("--rev",) in spellings(reverse, _tool("sort"), "X")
    assert _run(["sort", "--rev", "/dev/null"], Path("/")).returncode == 0


def test_an_ambiguous_prefix_of_sort_is_never_spelt() -> None:
    sort = _tool("sort")
    refused = _run(["sort", "--s", "/dev/null"], Path("/"))
    assert refused.returncode != 0 and "ambiguous" in refused.stderr
    words = {form[0].partition("=")[0] for o in sort.options for form in spellings(o, sort, "X")}
    assert "--s" not in words
    longs = [n.lower() for n in sort.long_names()]
    for word in (w for w in words if w.startswith("--") and w not in longs):
        assert sum(n.startswith(word.lower()) for n in longs) == 1, word


@pytest.mark.parametrize("program", [("sort",), ("ls",), ("cut",), ("uniq",), ("wc",), ("cmp",),
                                     ("diff",), ("grep",), ("file",), ("column",)],
                         ids=" ".join)
def test_the_real_tool_accepts_every_spelling(program: tuple[str, ...], tmp_path: Path) -> None:
    """Each spelling goes before --version: getopt parses it (or refuses it) before
    --version ends the run, so nothing the option would do is done."""
    tool = _tool(*program)
    refused = []
    for option in (o for o in tool.options if o.name not in ("--help", "--version", "-h")):
        for form in spellings(option, tool, "1"):
            done = _run([*program, *form, "--version"], tmp_path)
            if GETOPT_ERROR.search(done.stderr):
                refused.append(f"{form}: {done.stderr.strip().splitlines()[0]}")
    assert not refused


@pytest.mark.parametrize("program", [("git", "status"), ("git", "branch"), ("git", "tag"),
                                     ("git", "describe"), ("git", "ls-files")], ids=" ".join)
def test_git_accepts_every_spelling(program: tuple[str, ...], tmp_path: Path) -> None:
    """Each spelling goes before -h: parse-options parses it (or refuses it) and -h
    then prints the usage, so nothing the option would do is done."""
    _needs("git")
    assert _run(["git", "init", "-q", "."], tmp_path).returncode == 0
    tool = _tool(*program)
    refused = []
    for option in (o for o in tool.options if o.name not in ("--help", "-h")):
        for form in spellings(option, tool, "1"):
            done = _run([*program, *form, "-h"], tmp_path)
            if GETOPT_ERROR.search(done.stderr + done.stdout):
                refused.append(f"{form}: {(done.stderr + done.stdout).strip().splitlines()[0]}")
    assert not refused


@pytest.mark.parametrize(("program", "name", "abbreviation"), [
    (("rg",), "--fixed-strings", ["rg", "--fixed-str", "x", "/dev/null"]),
    (("git", "log"), "--oneline", ["git", "log", "-1", "--onelin"]),
    (("jq",), "--compact-output", ["jq", "--compact", ".", "/dev/null"]),
])
def test_a_tool_that_refuses_abbreviations_is_given_none(
        program: tuple[str, ...], name: str, abbreviation: list[str], tmp_path: Path) -> None:
    tool = _tool(*program)
    assert _run(abbreviation, tmp_path).returncode != 0
    option = _option(tool, name)
    assert {form[0].partition("=")[0] for form in spellings(option, tool, "X")} == {name}


def test_no_long_option_gets_more_than_three_abbreviations() -> None:
    for tool in installed_options().values():
        for option in (o for o in tool.options if o.name.startswith("--")):
            names = {form[0].partition("=")[0] for form in spellings(option, tool, "X")}
            assert len(names - {option.name}) <= 3, (tool.program, option.name)
