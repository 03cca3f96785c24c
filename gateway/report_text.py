"""``shellgate check``'s report as plain text, for a reader that is not a
terminal (a pipe, a file, a script): the same facts as
:mod:`gateway.report`'s tables, without rich — importing rich costs a new
process 40 ms, and nothing is styled where nobody sees colours.

Control characters of the command (an escape sequence would retitle or
rewrite a terminal the text is later shown on, a newline would forge a
line of the report) and bytes that are not UTF-8 are written as ``\\xNN``.
"""

from __future__ import annotations

from analyzers import BashAnalysis, shell_join
from regexes import regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

#: every control character (a newline of the command would forge a line of
#: the report: from a review, `echo hi<LF>ALLOW  ls` printed an ALLOW line),
#: and the bytes that are not UTF-8 (read as lone surrogates: 0x9b is a CSI
#: on a terminal that is not UTF-8)
_CONTROL = regex(r"[\x00-\x1f\x7f-\x9f\udc80-\udcff]")


def _clean(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()) & 0xFF:02x}", text)


def render_text(analysis: BashAnalysis, out: IO[str]) -> None:
    """Write the verdict, then every fact behind it, a line each."""
    lines = [f"{analysis.verdict.value.upper()}"
             + ("  (hard limit)" if analysis.hard_limit else "")
             + f"  {_clean(analysis.command[:80])}",
             f"  {_clean(analysis.reason)}"]
    if analysis.hint:
        lines.append(f"  {_clean(analysis.hint)}")
    parse = f"  parse: {analysis.parse.value}"
    if analysis.parse_reasons:
        parse += f" — {_clean('; '.join(analysis.parse_reasons[:3]))}"
    lines.append(parse)
    if analysis.subcommands:
        lines.append("subcommands:")
        for i, s in enumerate(analysis.subcommands, 1):
            cmd = (f"({s.via}) " if s.via else "") + (
                f"{' '.join(s.wrappers)} → " if s.wrappers else "") + (
                shell_join(s.argv) if s.argv else s.text)
            why = f"  — {s.reason}" if s.reason else ""
            lines.append(f"  {i}. {_clean(cmd)}  [read-only: {_yes_no(s.read_only)}, "
                         f"{s.classification.value}]{_clean(why)}")
    if analysis.findings:
        lines.append("security checks fired:")
        lines.extend(f"  {f.id} {f.name}: {_clean(f.message)}" for f in analysis.findings)
    if analysis.paths:
        lines.append("paths:")
        for p in analysis.paths:
            sensitive = f", sensitive: {p.sensitive.why}" if p.sensitive else ""
            lines.append(f"  {_clean(p.path)}  [{p.access.value}, inside cwd: "
                         f"{_yes_no(p.inside_cwd)}{_clean(sensitive)}]")
    lines.extend(f"hard limit: {_clean(str(h))}" for h in analysis.hard_limits)
    lines.extend(f"warning: {_clean(w)}" for w in analysis.warnings)
    lines.extend(f"suggested rule: {_clean(r)}" for r in analysis.suggested_rules)
    out.write("\n".join(lines) + "\n")


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"
