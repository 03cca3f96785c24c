"""The ``shellgate:`` lines of one run: how it ended, what the post-run
guards undid or want reviewed, and their problems — the same lines for
``shellgate run`` (on stderr) and for the Bash tool (in its result), on
every way a run can end.

Every line is made inert before anyone sees it. The names in it are the
command's: a file it created may be called anything. Attack (from a
review): a `.pth` named with a carriage return, an erase-line sequence and
an unterminated OSC made the report about it erase itself on the user's
terminal and swallow the lines after it.
"""

from __future__ import annotations

import unicodedata

from .supervise import ExecResult

#: C0 controls (newline and tab included: a line of the report is one
#: line), DEL and C1 controls (0x9b is a CSI on a terminal that is not
#: UTF-8), and the bytes that were not UTF-8 (decoded as lone surrogates),
#: each written as the byte it stands for
_CONTROLS = {code: f"\\x{code & 0xFF:02x}"
             for code in (*range(0x20), *range(0x7F, 0xA0), *range(0xDC80, 0xDD00))}
#: the invisible format characters: bidirectional overrides make a name
#: read otherwise than it is, line separators break a line where none shows
_FORMAT = frozenset(("Cf", "Zl", "Zp"))

#: sent before the report when stderr is a terminal: CAN ends an escape
#: sequence the command's own output left open (a CSI, an OSC string that
#: would swallow the report up to its terminator), ST ends a string CAN
#: does not end on every terminal, SGR 0 takes back colours and
#: invisibility (`\e[8m` hides what follows)
TERMINAL_RESET = "\x18\x1b\\\x1b[0m"


def shown(text: str) -> str:
    """``text`` as it may reach a terminal: each control character made
    visible (``\\x1b``), never obeyed; each format character likewise
    (``\\u202e``)."""
    text = text.translate(_CONTROLS)
    if text.isascii():
        return text
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _FORMAT else c
                   for c in text)


def report_lines(result: ExecResult, *, ending: bool = True) -> tuple[str, ...]:
    """What a person must be told about a run, one inert line each, without
    the ``shellgate: `` prefix: how it ended when shellgate ended it (unless
    ``ending`` is false: the caller says that its own way), every report
    (changes to review, planted files undone), every problem. A run cut
    short keeps its reports: the command decides whether it times out, and
    a report it could silence by timing out would be no protection."""
    lines: list[str] = []
    if ending and result.timed_out:
        lines.append(f"timed out after {result.duration:.1f}s; process tree killed")
    elif ending and result.killed_reason:
        lines.append(f"killed: {result.killed_reason}")
    lines += result.reports
    lines += (f"warning: {problem}" for problem in result.problems)
    return tuple(shown(line) for line in lines)
