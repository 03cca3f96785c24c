"""What `shellgate fuzz` shows: a live panel while it runs (examples per
second, oracle runs, findings, grammar coverage, per property) and a
summary table at the end."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .properties import PROPERTIES
from .runner import FuzzReport, Snapshot


def _panel(snap: Snapshot) -> Group:
    rate = snap.examples / snap.elapsed if snap.elapsed else 0.0
    total = f" of {snap.seconds:.0f}" if snap.seconds is not None else ""
    head = Table.grid(padding=(0, 2))
    for label, value in (
        ("elapsed", f"{snap.elapsed:.0f} s{total}"),
        ("examples", f"{snap.examples:,} ({rate:,.0f}/s)"),
        ("oracle runs", f"{snap.oracle_runs:,}"),
        ("findings", f"{len(snap.findings)}"),
        ("grammar", f"{len(snap.coverage)}/{snap.productions} productions drawn"),
        ("workers", f"{snap.alive} running of {snap.workers}"),
    ):
        head.add_row(Text(label, style="bold"), value)
    props = Table("property", "examples", "findings", box=None, padding=(0, 2))
    for name in PROPERTIES:
        if name in snap.per_property:
            found = sum(1 for f in snap.findings if f["property"] == name)
            props.add_row(name, f"{snap.per_property[name]:,}",
                          Text(str(found), style="red bold" if found else "green"))
    parts: list[Table | Text] = [head, props]
    parts += [Text(f"finding: [{f['property']}] {f['command'][:100]!r}", style="red")
              for f in snap.findings[-5:]]
    parts += [Text(e, style="yellow") for e in snap.errors[-3:]]
    return Group(*parts)


class LiveDisplay:
    """A live panel on ``console`` (nothing when it is not a terminal)."""

    def __init__(self, console: Console) -> None:
        self._live = Live(console=console, refresh_per_second=4, transient=True) \
            if console.is_terminal else None

    def __enter__(self) -> LiveDisplay:
        if self._live is not None:
            self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(kind, exc, tb)

    def update(self, snap: Snapshot) -> None:
        if self._live is not None:
            self._live.update(_panel(snap))


def summary_table(report: FuzzReport) -> Group:
    table = Table(title="shellgate fuzz", show_header=False)
    rate = report.examples / report.seconds if report.seconds else 0.0
    for label, value in (
        ("examples", f"{report.examples:,} ({rate:,.0f}/s)"),
        ("oracle runs", f"{report.oracle_runs:,}"),
        ("failures", str(len(report.failures))),
        ("seconds", f"{report.seconds:.1f}"),
        ("seed", str(report.seed)),
        ("workers", str(report.workers)),
        ("mode", report.mode),
        ("grammar", f"{len(report.coverage)}/{report.productions} productions drawn"),
        ("findings file", report.findings_file),
    ):
        table.add_row(label, value)
    props = Table("property", "what must hold", "examples", "failures")
    for name, prop in PROPERTIES.items():
        if name in report.per_property:
            failed = sum(1 for f in report.failures if f["property"] == name)
            props.add_row(name, prop.summary, f"{report.per_property[name]:,}",
                          Text(str(failed), style="red bold" if failed else "green"))
    parts: list[Table | Text] = [table, props]
    for f in report.failures:
        parts.append(Text(f"[{f['property']}] {f['command']!r}\n    {f['trace'][:300]}",
                          style="red"))
    parts += [Text(e, style="yellow") for e in report.errors]
    return Group(*parts)
