"""``shellgate doctor``: can the sandbox work on this machine?"""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sandbox import run_probes, sandbox_works


def main(args: argparse.Namespace) -> int:
    probes = run_probes()
    works = sandbox_works(probes)
    if args.json:
        print(
            json.dumps(
                {
                    "sandbox_works": works,
                    "probes": [
                        {
                            "name": p.name,
                            "ok": p.ok,
                            "required": p.required,
                            "detail": p.detail,
                            "fix": p.fix,
                        }
                        for p in probes
                    ],
                }
            )
        )
        return 0 if works else 1
    table = Table(title="shellgate doctor", title_justify="left")
    for column in ("", "probe", "detail", "what to do"):
        table.add_column(column)
    for p in probes:
        mark = (
            Text("ok", style="green")
            if p.ok
            else Text("FAIL" if p.required else "warn", style="red" if p.required else "yellow")
        )
        table.add_row(mark, p.name, Text(p.detail), Text(p.fix))
    console = Console(highlight=False)
    console.print(table)
    console.print(
        Text(
            "the sandbox works here"
            if works
            else "the sandbox cannot work here: fix the failures above",
            style="green" if works else "bold red",
        )
    )
    return 0 if works else 1
