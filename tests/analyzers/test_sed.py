"""sed: the allowlist of scripts that only print or substitute.

The reference (sedValidation) auto-approves two shapes only: pure line
printing under ``-n`` (``5p``, ``1,10p``, ``1p;5p;10p``, ``$p``) and
``s/re/repl/FLAGS`` with FLAGS from ``g p i I m M 1-9``. Everything that
writes (``w``, ``W``, ``s///w``), executes (``e``, ``s///e``), reads other
files (``r``, ``R``), negates (``!``), groups (``{}``), hides behind
non-ASCII or a backslash delimiter, spans lines or comes from a file (``-f``)
is refused; ``-i`` turns every file operand into a write.
"""

from __future__ import annotations

import pytest

from analyzers import Access, BashAnalysis, Verdict, analyze_bash
from analyzers.bash.sed import analyze_sed, sed_script_problem

CWD = "/home/user/project"
HOME = "/home/user"


def analyze(command: str) -> BashAnalysis:
    return analyze_bash(command, CWD, home=HOME)


# --------------------------------------------------------------------------
# sed_script_problem: the script allowlist.
# --------------------------------------------------------------------------

ALLOWED_SCRIPTS = [
    # (script, quiet) — pure -n line printing
    pytest.param("5p", True, id="print-one-line"),
    pytest.param("1,10p", True, id="print-range"),
    pytest.param("$p", True, id="print-last-line"),
    pytest.param("1,$p", True, id="print-to-the-end"),
    pytest.param("/x/p", True, id="print-regex-address"),
    pytest.param("/x/,/y/p", True, id="print-regex-range"),
    pytest.param("1~2p", True, id="print-step-address"),
    pytest.param("0,/x/p", True, id="print-zero-address-range"),
    pytest.param("p", True, id="print-every-line"),
    # substitution with every allowed flag
    pytest.param("s/a/b/", False, id="substitute-no-flags"),
    pytest.param("s/foo/bar/g", False, id="substitute-g"),
    pytest.param("s/a/b/p", True, id="substitute-p"),
    pytest.param("s/a/b/i", False, id="substitute-i"),
    pytest.param("s/a/b/I", False, id="substitute-I"),
    pytest.param("s/a/b/m", False, id="substitute-m"),
    pytest.param("s/a/b/M", False, id="substitute-M"),
    pytest.param("s/a/b/1", False, id="substitute-1"),
    pytest.param("s/a/b/9", False, id="substitute-9"),
    pytest.param("s/a/b/gpiImM3", False, id="substitute-all-allowed-flags"),
    pytest.param("s|a|b|", False, id="pipe-delimiter"),
    pytest.param("s#a#b#g", False, id="hash-delimiter"),
    pytest.param("s/a\\/b/c/", False, id="escaped-delimiter-in-regex"),
    pytest.param("s/a;w x/b/", False, id="w-inside-the-regex-is-text"),
    pytest.param("s/a/b;w x/", False, id="w-inside-the-replacement-is-text"),
    pytest.param("s/a/b/;s/c/d/g", False, id="two-substitutions"),
    pytest.param("1,3s/a/b/", False, id="substitute-on-a-range"),
]


@pytest.mark.parametrize(("script", "quiet"), ALLOWED_SCRIPTS)
def test_print_and_substitute_scripts_are_accepted(script: str, quiet: bool) -> None:
    assert sed_script_problem(script, quiet=quiet) is None


ALLOWED_SCRIPTS_BROKEN = [
    pytest.param("1p;5p;10p", True, id="print-several-lines"),
    pytest.param("1p; 5p", True, id="print-several-lines-with-space"),
    pytest.param("s/a/b/;5p", True, id="substitute-then-print-line"),
    pytest.param("/x/p;/y/p", True, id="print-two-regex-addresses"),
    pytest.param("s/a/b/; p", True, id="space-after-semicolon"),
    pytest.param("1!p", True, id="negated-address-print"),
    pytest.param("/x/!d", False, id="negated-regex-delete"),
    pytest.param("1,3 ! d", False, id="negation-with-spaces"),
]


@pytest.mark.parametrize(("script", "quiet"), ALLOWED_SCRIPTS_BROKEN)
def test_several_addressed_commands_are_accepted(script: str, quiet: bool) -> None:
    assert sed_script_problem(script, quiet=quiet) is None


REFUSED_SCRIPTS = [
    # (script, quiet, a word the reason must contain)
    pytest.param("w /tmp/x", True, "'w'", id="w-command-writes"),
    pytest.param("1w out", True, "'w'", id="addressed-w-command"),
    pytest.param("W /tmp/x", True, "'W'", id="W-command-writes"),
    pytest.param("e", False, "'e'", id="e-command-executes"),
    pytest.param("e id", False, "'e'", id="e-command-with-argument"),
    pytest.param("E", False, "'E'", id="E-command"),
    pytest.param("r /etc/passwd", False, "'r'", id="r-command-reads-a-file"),
    pytest.param("R f", False, "'R'", id="R-command-reads-a-line"),
    pytest.param("s/a/b/w /tmp/x", False, "w", id="s-w-flag-writes"),
    pytest.param("s/a/b/W /tmp/x", False, "W", id="s-W-flag-writes"),
    pytest.param("s/a/b/gw x", False, "w", id="s-w-after-allowed-flag"),
    pytest.param("s/a/b/e", False, "e", id="s-e-flag-executes"),
    pytest.param("s/a/b/ge", False, "e", id="s-e-after-allowed-flag"),
    pytest.param("s/a/b/0", False, "0", id="s-numeric-flag-zero"),
    pytest.param("s/a/b/ w x", False, "w", id="w-after-space"),
    pytest.param("s/a/b/;w x", False, "'w'", id="w-as-second-command"),
    pytest.param("1!e id", False, "'e'", id="negation-before-e"),
    pytest.param("$!N", False, "'N'", id="negation-before-N"),
    pytest.param("/x/!w out", True, "'w'", id="negation-before-w"),
    pytest.param("1{p}", True, "{}", id="block"),
    pytest.param("/x/{s/a/b/;w out\n}", False, "newline", id="block-with-write"),
    pytest.param("s∕a∕b∕", False, "non-ASCII", id="homoglyph-delimiter"),
    pytest.param("s/a/é/", False, "non-ASCII", id="non-ascii-replacement"),
    pytest.param("s\\a\\b\\", False, "backslash", id="backslash-delimiter"),
    pytest.param("5p\nw x", True, "newline", id="newline-in-script"),
    pytest.param("5p", False, "-n", id="line-printing-without-n"),
    pytest.param("1,10p", False, "-n", id="range-printing-without-n"),
    pytest.param("y/a/b/", False, "'y'", id="transliterate"),
    pytest.param("a text", False, "'a'", id="append-text"),
    pytest.param("s/a/b", False, "unterminated", id="unterminated-substitution"),
    pytest.param("5", True, "without a command", id="address-alone"),
    pytest.param("sxaxbx", False, "delimiter", id="alphanumeric-delimiter"),
]


@pytest.mark.parametrize(("script", "quiet", "why"), REFUSED_SCRIPTS)
def test_writing_executing_and_obfuscated_scripts_are_refused(
    script: str, quiet: bool, why: str
) -> None:
    problem = sed_script_problem(script, quiet=quiet)
    assert problem is not None
    assert why in problem


# --------------------------------------------------------------------------
# analyze_sed: options, script sources, -i.
# --------------------------------------------------------------------------

ACCEPTED_ARGV = [
    pytest.param(("sed", "-n", "1,5p", "file"), ("file",), id="n-then-script-then-file"),
    pytest.param(("sed", "-n", "$p"), (), id="reads-stdin"),
    pytest.param(("sed", "-e", "1p", "-n", "f", "g"), ("f", "g"), id="e-script-two-files"),
    pytest.param(("sed", "-ne", "5p", "f"), ("f",), id="n-and-e-clustered"),
    pytest.param(("sed", "--quiet", "--expression=1p", "f"), ("f",), id="long-options"),
    pytest.param(("sed", "-E", "s/(a)/\\1/", "f"), ("f",), id="extended-regex"),
    pytest.param(("sed", "-s", "-n", "$p", "a", "b"), ("a", "b"), id="separate-files"),
    pytest.param(("sed", "--", "s/a/b/", "-f"), ("-f",), id="double-dash-ends-options"),
]


@pytest.mark.parametrize(("argv", "files"), ACCEPTED_ARGV)
def test_read_only_sed_invocations_are_accepted_with_their_files(
    argv: tuple[str, ...], files: tuple[str, ...]
) -> None:
    facts = analyze_sed(argv)
    assert facts.problem is None
    assert facts.in_place is False
    assert facts.files == files


REFUSED_ARGV = [
    pytest.param(("sed", "-f", "script.sed", "f"), id="script-file-short"),
    pytest.param(("sed", "--file=script.sed", "f"), id="script-file-long"),
    pytest.param(("sed", "-n", "-f", "script.sed"), id="script-file-after-n"),
    pytest.param(("sed",), id="no-script"),
    pytest.param(("sed", "-n"), id="only-options"),
    pytest.param(("sed", "-e", "s/a/b/", "-e", "w x", "f"), id="second-expression-writes"),
    pytest.param(("sed", "--expression=s/a/b/w x", "f"), id="long-expression-writes"),
    pytest.param(("sed", "s/a/b/e", "f"), id="positional-script-executes"),
    pytest.param(("sed", "--compress", "p"), id="unknown-option"),
]


@pytest.mark.parametrize("argv", REFUSED_ARGV)
def test_sed_invocations_outside_the_allowlist_report_a_problem(argv: tuple[str, ...]) -> None:
    assert analyze_sed(argv).problem


IN_PLACE_ARGV = [
    pytest.param(("sed", "-i", "s/a/b/", "f.txt"), id="i"),
    pytest.param(("sed", "-i.bak", "s/a/b/", "f.txt"), id="i-with-suffix"),
    pytest.param(("sed", "--in-place", "s/a/b/", "f.txt"), id="in-place"),
    pytest.param(("sed", "--in-place=.bak", "s/a/b/", "f.txt"), id="in-place-with-suffix"),
    pytest.param(("sed", "-ni", "1p", "f.txt"), id="i-clustered-after-n"),
    pytest.param(("sed", "-E", "-i", "s/a/b/", "f.txt"), id="i-after-E"),
    pytest.param(("sed", "-e", "s/a/b/", "-i", "f.txt"), id="i-after-expression"),
]


@pytest.mark.parametrize("argv", IN_PLACE_ARGV)
def test_in_place_flag_is_detected_in_every_spelling(argv: tuple[str, ...]) -> None:
    facts = analyze_sed(argv)
    assert facts.in_place is True
    assert facts.files == ("f.txt",)


def test_in_place_with_suffix_glued_to_i_swallows_the_n() -> None:
    # GNU sed reads `-in` as -i with backup suffix "n", not as -i -n.
    facts = analyze_sed(("sed", "-in", "s/a/b/", "f.txt"))
    assert facts.in_place is True
    assert facts.files == ("f.txt",)


# --------------------------------------------------------------------------
# End to end through analyze_bash.
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sed -n '1,5p' file",
        "sed -n '5p' file",
        "sed -n '$p' file",
        "sed 's/foo/bar/g' file",
        "cat file | sed -n '2p'",
        "sed -n -e '/TODO/p' src/a.py",
    ],
)
def test_read_only_sed_is_allowed_and_its_files_are_reads(command: str) -> None:
    result = analyze(command)
    assert result.verdict is Verdict.ALLOW
    assert all(p.access is Access.READ and p.inside_cwd for p in result.paths)


def test_printing_several_lines_is_allowed_end_to_end() -> None:
    assert analyze("sed -n '1p;5p;10p' file").verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "sed 's/a/b/w /tmp/x' f",
        "sed -n 'w /tmp/x' f",
        "sed 's/a/b/e' f",
        "sed e",
        "sed 'e id' f",
        "sed 'r /etc/passwd' f",
        "sed '1!e id' f",
        "sed -n '1{p}' f",
        "sed 's\\a\\b\\' f",
        "sed -f script.sed f",
        "sed 's/a/b/' f > out",
    ],
)
def test_writing_or_executing_sed_is_not_allowed(command: str) -> None:
    result = analyze(command)
    assert result.verdict is not Verdict.ALLOW
    assert not all(s.read_only for s in result.subcommands)


@pytest.mark.parametrize(
    "command",
    ["sed -i 's/a/b/' f.txt", "sed -i.bak s/a/b/ f.txt", "sed --in-place -e 's/a/b/' f.txt"],
)
def test_in_place_sed_is_not_allowed_and_its_file_is_a_write(command: str) -> None:
    result = analyze(command)
    assert result.verdict is not Verdict.ALLOW
    assert result.subcommands[0].read_only is False
    assert [(p.path, p.access) for p in result.paths] == [(f"{CWD}/f.txt", Access.WRITE)]


def test_in_place_sed_on_a_sensitive_file_is_denied() -> None:
    result = analyze("sed -i 's/a/b/' ~/.ssh/authorized_keys")
    assert result.verdict is Verdict.DENY


def test_read_only_sed_on_a_sensitive_file_is_denied() -> None:
    assert analyze("sed -n '1p' ~/.ssh/id_rsa").verdict is Verdict.DENY


def test_read_only_sed_outside_the_project_asks() -> None:
    result = analyze("sed -n '5p' /etc/hosts")
    assert result.verdict is Verdict.ASK
    assert [(p.path, p.access) for p in result.paths] == [("/etc/hosts", Access.READ)]


@pytest.mark.parametrize(
    "command", ["sed -f ~/.ssh/id_rsa f", "sed --bogus ~/.ssh/id_rsa", "sed -e p -f ~/.ssh/id_rsa"]
)
def test_sed_with_an_unparsable_option_still_denies_a_sensitive_operand(command: str) -> None:
    assert analyze(command).verdict is Verdict.DENY
