"""Where tree-sitter and bash read a command differently, the analyzer must
not trust tree-sitter.

Each case is run by the real bash first, in a throwaway directory, to show
what bash does with it (the control: the hidden effect happens); then the
analyzer must not allow it. The analyzer itself stays pure — bash runs
only here, in the tests.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from analyzers import Verdict, analyze_bash
from analyzers.bash.parser import heredoc_delimiter

#: a here-document whose delimiter is quoted in part: bash ends it at the
#: first `EOF` line and runs `touch HIDDEN`; tree-sitter reads on to the
#: literal delimiter and takes the `touch` for text
HEREDOCS = {
    "quoted in the middle": "cat <<E'O'F\nx\nEOF\ntouch HIDDEN\nE'O'F\n",
    "double-quoted in the middle": 'cat <<E"O"F\nx\nEOF\ntouch HIDDEN\nE"O"F\n',
    "empty quotes after": "cat <<EOF''\nx\nEOF\ntouch HIDDEN\nEOF''\n",
    "tab-stripping, quoted in the middle": "cat <<-E'O'F\n\tx\n\tEOF\ntouch HIDDEN\nE'O'F\n",
}

#: `>` and `<` inside `[ ]` are redirections to bash, comparisons to tree-sitter
TESTS = {
    "output redirection": "[ a = b > HIDDEN ]",
    "appending": "[ a >> HIDDEN ]",
    "comparison spelled with >": "[ b > HIDDEN ]",
}


def _bash(command: str, cwd: Path) -> None:
    subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, timeout=10,
                   check=False, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("case", list(HEREDOCS) + list(TESTS))
def test_a_construct_bash_and_tree_sitter_disagree_on_is_not_allowed(
    case: str, tmp_path: Path
) -> None:
    command = HEREDOCS.get(case) or TESTS[case]
    _bash(command, tmp_path)
    assert (tmp_path / "HIDDEN").exists(), "control: bash itself runs the hidden effect"
    result = analyze_bash(command, str(tmp_path), home="/home/user")
    assert result.verdict is not Verdict.ALLOW, result.reason


@pytest.mark.parametrize("command", [
    "cat <<'EOF'\nx\nEOF\n",
    'cat <<"EOF"\nx\nEOF\n',
    "cat <<\\EOF\nx\nEOF\n",
    "cat <<EOF\nx\nEOF\n",
    "[[ a > b ]]",
    "[ -f README.md ]",
])
def test_constructs_both_read_alike_are_still_allowed(command: str, tmp_path: Path) -> None:
    _bash(command, tmp_path)
    assert list(tmp_path.iterdir()) == [], "control: bash leaves nothing behind"
    result = analyze_bash(command, str(tmp_path), home="/home/user")
    assert result.verdict is Verdict.ALLOW, result.reason


@pytest.mark.parametrize(("start", "end"), [
    ("EOF", "EOF"), ("'EOF'", "EOF"), ('"EOF"', "EOF"), ("\\EOF", "EOF"),
    ("E'O'F", "EOF"), ('E"O"F', "EOF"), ("EOF''", "EOF"), ("'E O F'", "E O F"),
    ("$'EOF'", None), ("'EOF", None), ("E$xF", None),
])
def test_the_delimiter_is_what_bash_compares_lines_with(start: str, end: str | None,
                                                         tmp_path: Path) -> None:
    assert heredoc_delimiter(start) == end
    if end is not None:  # the real bash agrees: the heredoc ends at `end`
        script = f"cat <<{start}\nbody\n{end}\necho after > AFTER\n"
        _bash(script, tmp_path)
        assert (tmp_path / "AFTER").exists()

