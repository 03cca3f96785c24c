"""Terminal rendering of a bash analysis (``shellgate check``)."""

from __future__ import annotations

import shlex

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from analyzers import BashAnalysis, Verdict

_STYLE = {Verdict.ALLOW: "bold green", Verdict.ASK: "bold yellow", Verdict.DENY: "bold red"}


def render_analysis(analysis: BashAnalysis, console: Console) -> None:
    """Print the verdict, then every fact behind it, as tables."""
    head = Text()
    head.append(analysis.verdict.value.upper(), style=_STYLE[analysis.verdict])
    if analysis.hard_limit:
        head.append("  (hard limit)", style="red")
    head.append(f"\n{analysis.reason}")
    if analysis.hint:
        head.append(f"\n{analysis.hint}", style="dim")
    head.append(f"\nparse: {analysis.parse.value}", style="dim")
    if analysis.parse_reasons:
        head.append(f" — {'; '.join(analysis.parse_reasons[:3])}", style="dim")
    console.print(
        Panel(
            head,
            title=Text(analysis.command[:80], overflow="ellipsis"),
            title_align="left",
            expand=False,
        )
    )

    parts: list[RenderableType] = []
    if analysis.subcommands:
        t = Table(title="subcommands", title_justify="left", show_lines=False)
        t.add_column("#", justify="right")
        t.add_column("command")
        t.add_column("read-only")
        t.add_column("class")
        t.add_column("why not")
        for i, s in enumerate(analysis.subcommands, 1):
            # User text goes in Text objects, never in markup: `[ -d x ]` is
            # a command, not a style tag.
            cmd = Text()
            if s.via:
                cmd.append(f"({s.via}) ", style="dim")
            if s.wrappers:
                cmd.append(f"{' '.join(s.wrappers)} → ", style="dim")
            cmd.append(shlex.join(s.argv) if s.argv else s.text)
            t.add_row(
                str(i), cmd, _yes_no(s.read_only), s.classification.value, Text(s.reason or "")
            )
        parts.append(t)
    if analysis.findings:
        t = Table(title="security checks fired", title_justify="left")
        t.add_column("id", justify="right")
        t.add_column("check")
        t.add_column("message")
        for f in analysis.findings:
            t.add_row(str(f.id), f.name, Text(f.message))
        parts.append(t)
    if analysis.paths:
        t = Table(title="paths", title_justify="left")
        t.add_column("path")
        t.add_column("access")
        t.add_column("inside cwd")
        t.add_column("sensitive")
        for p in analysis.paths:
            t.add_row(
                Text(p.path),
                p.access.value,
                _yes_no(p.inside_cwd, "yellow"),
                Text(p.sensitive.why if p.sensitive else "", style="red"),
            )
        parts.append(t)
    lines = Text()
    for h in analysis.hard_limits:
        lines.append(f"hard limit: {h}\n", style="red")
    for w in analysis.warnings:
        lines.append(f"warning: {w}\n", style="yellow")
    for r in analysis.suggested_rules:
        lines.append(f"suggested rule: {r}\n", style="cyan")
    if lines:
        parts.append(lines)
    if parts:
        console.print(Group(*parts))


def _yes_no(value: bool, no_style: str = "red") -> Text:
    return Text("yes", style="green") if value else Text("no", style=no_style)
