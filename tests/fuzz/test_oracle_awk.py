"""awk programs built from the pieces that confuse a scanner — slashes,
quotes, `#`, keywords, parentheses — next to the doors the analyzer must
see (`system`, a pipe, a redirection): whatever the analyzer allows, run
by the installed awk under the execution oracle, must do nothing it sees.
From a review: `print /"/ | "sh …"; print /"/` was read by the scanner as
two divisions around a string, and ran sh."""

from __future__ import annotations

import atexit
import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analyzers import Verdict, analyze_bash
from fuzz import Oracle

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PIECES = ['/', '"', '#', '/"/', "/#/", "print ", "printf ", " ", "x", "2", "(", ")", "?", ":",
          "length ", "n", "$1", "case ",
          "*", "+", "++", ";", "\n", "{", "}", "$1", "if (1) ", "~", '"a"', "/a/",
          'system("touch pwned")', '| "touch pwned"', '> "pwned"', "getline", "ENVIRON", "1"]
_ORACLE: list[Oracle] = []


def _oracle() -> Oracle:
    if not _ORACLE:
        _ORACLE.append(Oracle(ROOT / "fuzz" / "fixture"))
        atexit.register(_ORACLE[0].close)
    return _ORACLE[0]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=10).map("".join))
# the review's: a regex read as two divisions around a string
@example(' print /"/ | "touch pwned"; print /"/ ')
@example(' x = 2 * /"/ } { system("touch pwned") } { y = 2 * /"/ ')
@example(' x = 1 ? /"/ : 0; printf "hi" > "pwned"; y = 1 ? /"/ : 0 ')
@example(' if (1) /#/ ; system("touch pwned") ')
# the second review's: mawk reads a slash after a builtin as a regex
@example(' x = length /x+/; system("touch pwned"); y = 1 / 2 ')
# the third review's: token boundaries, a regex reading that was dropped
@example(' x = $length /x+/; system("touch pwned"); y = 1 / 2 ')
@example(' x = 1length /x+/; system("touch pwned"); y = 1 / 2 ')
@example(' x = length /["/]/; system("touch pwned") } # "')
@example(' x++ /[/; system("touch pwned"); y = 1 / 2 ')
# the fourth review's: a gawk keyword is a variable to mawk
@example(' x = case / 2; system("touch pwned"); y = 1 / 1 ')
def test_an_awk_program_the_analyzer_allows_does_nothing_the_oracle_sees(body: str) -> None:
    command = f"awk {shlex.quote('{' + body + '}')} notes.txt"
    if analyze_bash(command, "/oracle/project", home="/oracle/home").verdict is not Verdict.ALLOW:
        return
    obs = _oracle().observe(command, ("awk",), timeout=5)
    assert obs.findings == (), f"allowed, but: {obs.findings}"
