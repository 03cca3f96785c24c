"""The analyzer's option tables, checked against the installed tools.

A table that says an option takes the next word as its value makes the
analyzer skip that word unjudged. Where the real tool takes its value only
attached (`git log -U5`, `xargs -eEND`), the skipped word is really the
next option: from a review, `git log -U --output=FILE` wrote FILE, and
`xargs -e --arg-file=~/.ssh/id_rsa echo` printed the key, both allowed.
So each entry that claims the next word is asked of the tool itself: it is
given the option followed by a probe word that is an unknown option, and
the tool's complaint says whether it took the probe as a value.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from analyzers.bash.commands.flags import Arg
from analyzers.bash.commands.git import _SIMPLE
from analyzers.bash.wrappers import _XARGS_OPTIONAL, _XARGS_VALUED

PROBE = "--sg-probe"
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_PAGER": "cat", "LC_ALL": "C",
       "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repo")
    for args in (["init", "-q"], ["-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q",
                                  "--allow-empty", "-m", "init"]):
        subprocess.run(["git", "-C", str(path), *args], check=True, env=ENV, capture_output=True)
    return path


def _complaint(argv: list[str], cwd: Path) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=10,
                          stdin=subprocess.DEVNULL, env=ENV, check=False)
    return proc.stderr


def _git_takes_next_word(repo: Path, sub: str, opt: str) -> bool | None:
    """True: git took the probe as the option's value; False: it read the
    probe as an option of its own (or the separate form is no option at
    all); None: this git does not know the option."""
    err = _complaint(["git", sub, opt, PROBE], repo)
    name = opt.lstrip("-")
    if f"unknown option `{name}'" in err or f"unknown switch `{name}'" in err:
        return None
    refused = (f"unknown option `{PROBE.lstrip('-')}'", f"unknown option `{PROBE}'",
               f"unrecognized argument: {PROBE}", f"unrecognized argument: {opt}\n")
    return not any(message in err for message in refused)


GIT_VALUED = sorted({(sub, opt) for sub, table in _SIMPLE.items()
                     for opt, kind in table.items() if kind is Arg.VALUE})


@pytest.mark.parametrize(("sub", "opt"), GIT_VALUED, ids=[f"{s} {o}" for s, o in GIT_VALUED])
def test_a_git_option_the_table_gives_the_next_word_takes_it(
    repo: Path, sub: str, opt: str
) -> None:
    taken = _git_takes_next_word(repo, sub, opt)
    assert taken is not False, (
        f"git {sub} {opt} does not take the next word as its value (its value is attached "
        "only): the table would skip that word unjudged")


@pytest.mark.parametrize(("sub", "opt"), [("log", "-U"), ("log", "--unified"), ("log", "--format"),
                                          ("log", "--min-parents"), ("show", "--format"),
                                          ("blame", "--abbrev")])
def test_options_whose_value_is_attached_only_leave_the_next_word_to_be_judged(
    repo: Path, sub: str, opt: str
) -> None:
    """The entries the review found, asked of git and of the table alike."""
    assert _git_takes_next_word(repo, sub, opt) is False
    assert _SIMPLE[sub][opt] is not Arg.VALUE


XARGS = shutil.which("xargs")


def _xargs_takes_next_word(opt: str, cwd: Path) -> bool:
    err = _complaint([XARGS or "xargs", opt, PROBE, "true"], cwd)
    return f"unrecognized option '{PROBE}'" not in err and "invalid option" not in err


@pytest.mark.skipif(XARGS is None, reason="xargs is not installed")
@pytest.mark.parametrize("opt", sorted(_XARGS_VALUED | _XARGS_OPTIONAL))
def test_the_xargs_table_agrees_with_the_installed_xargs(opt: str, tmp_path: Path) -> None:
    expected = opt in _XARGS_VALUED
    assert _xargs_takes_next_word(opt, tmp_path) is expected, (
        f"xargs {opt}: the table says it {'takes' if expected else 'does not take'} the next "
        "word, the installed xargs disagrees")


#: how GNU getopt, clap (rg) and others say an option they got was unknown
REFUSED_PROBE = (f"unrecognized option '{PROBE}'", f"Found argument '{PROBE}'",
                 f"unexpected argument '{PROBE}'", f"unrecognized option `{PROBE}'")


def _reader_tables() -> list[tuple[str, str]]:
    from analyzers.bash.commands.readers import READERS
    from analyzers.bash.commands.search import GREP, RG

    tables = {**{name: sp.flags for name, sp in READERS.items()}, "grep": GREP.flags,
              "rg": RG.flags}
    return sorted((name, opt) for name, flags in tables.items() if shutil.which(name)
                  for opt, kind in flags.items() if kind in (Arg.VALUE, Arg.READ, Arg.NUM))


READER_OPTIONS = _reader_tables()


@pytest.mark.parametrize(("name", "opt"), READER_OPTIONS,
                         ids=[f"{n} {o}" for n, o in READER_OPTIONS])
def test_a_reader_option_the_table_gives_the_next_word_takes_it(
    name: str, opt: str, tmp_path: Path
) -> None:
    """Every reader's option that the table says takes a value, asked of the
    installed tool: given a probe word after it, the tool must not complain
    about the probe as an unknown option (it took it as the value)."""
    err = _complaint([name, opt, PROBE, "/dev/null"], tmp_path)
    if f"unrecognized option '{opt}" in err or f"invalid option -- '{opt[1:]}'" in err:
        return  # this version of the tool does not know the option: it fails, harmlessly
    if name == "rg":
        # clap never takes a word starting with `-` as a value: `rg -m --pre=sh`
        # fails ("requires 1 values"), so the word is not run as an option.
        # The real question for rg: does a plain word after the option go?
        proc = subprocess.run(["rg", opt, "1", "--files", str(tmp_path)], capture_output=True,
                              text=True, timeout=10, stdin=subprocess.DEVNULL, env=ENV,
                              check=False)
        if f"Found argument '{opt}'" in proc.stderr:
            return  # an option of a newer ripgrep: this one refuses it, harmlessly
        assert "wasn't expected" not in proc.stderr, proc.stderr
        return
    assert not any(m in err for m in REFUSED_PROBE), (
        f"{name} {opt} does not take the next word: the table would skip it unjudged")


def test_the_probe_tells_a_switch_from_an_option_with_a_value(tmp_path: Path) -> None:
    """The detector itself: a switch leaves the probe to be refused."""
    assert any(m in _complaint(["grep", "-i", PROBE, "x", "/dev/null"], tmp_path)
               for m in REFUSED_PROBE)
    assert not any(m in _complaint(["grep", "-e", PROBE, "/dev/null"], tmp_path)
                   for m in REFUSED_PROBE)


FIND = shutil.which("find")

#: -exec clauses: where does the installed find end each one?
EXEC_CLAUSES = [
    ["-exec", "printf", "[%s]", "{}", ";"],
    ["-exec", "printf", "[%s]", "{}", "+"],
    ["-exec", "printf", "[%s]", "x", "+", "-name", "-f", "{}", ";"],
    ["-exec", "printf", "[%s]", "+", "{}", "+"],
    ["-exec", "printf", "[%s]", "{}", "x", ";", "-exec", "printf", "<%s>", "{}", "+"],
    ["-exec", "printf", "[%s]", "{}x", ";"],
]


@pytest.mark.skipif(FIND is None, reason="find is not installed")
@pytest.mark.parametrize("clause", EXEC_CLAUSES, ids=" ".join)
def test_find_exec_ends_where_the_installed_find_ends_it(clause: list[str], tmp_path: Path) -> None:
    """From a review of the tables: stopping at the first `+` read
    `-exec grep x + -name -f/etc/shadow -exec cat {} ;` as a harmless test,
    while find gives grep the whole tail, `-f/etc/shadow` included."""
    from analyzers.bash.commands.find import exec_end

    argv = ("find", ".", "-maxdepth", "0", *clause)
    end = exec_end(argv, 4)
    ran = subprocess.run([FIND or "find", *argv[1:]], cwd=tmp_path, capture_output=True,
                         text=True, timeout=10, check=False).stdout
    words = [w.replace("{}x", ".x").replace("{}", ".") for w in argv[7:end]]
    assert re.findall(r"\[(.*?)\]", ran) == words, (
        f"find ran {ran!r}, the analyzer ends the clause after {argv[5:end]}")


#: xargs option sets: are the words from stdin appended exactly as they came?
XARGS_NULL = [
    (["-0"], True), (["--null"], True), (["-0", "-r"], True), (["-0", "-n", "1"], True),
    (["-0", "-I{}"], False), (["-0", "-i"], False), (["-0", "-d", "x"], False),
    (["-0", "-E", "x"], False), (["-0r"], False), ([], False),
]


@pytest.mark.skipif(XARGS is None, reason="xargs is not installed")
@pytest.mark.parametrize(("options", "exact"), XARGS_NULL, ids=str)
def test_xargs_null_mode_is_granted_only_where_xargs_appends_words_as_they_came(
    options: list[str], exact: bool, tmp_path: Path
) -> None:
    from analyzers.bash.wrappers import _null_separated

    assert _null_separated(tuple(options)) is exact
    if exact:
        words = ["./a b", "./-x", "./c\nd"]
        out = subprocess.run([XARGS or "xargs", *options, "printf", "[%s]"],
                             input="\0".join(words) + "\0", cwd=tmp_path, capture_output=True,
                             text=True, timeout=10, check=False).stdout
        assert out == "".join(f"[{w}]" for w in words)
