"""``hierplan sandbox``: which isolation layers the Python sandbox applies here, and why not."""

from __future__ import annotations

import argparse
import json

LEVELS = ("none", "basic", "full")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("sandbox", help="show which sandbox isolation layers are active on this machine",
                              description="Show the Python sandbox's isolation layers: available, active, and why not.")
    p.add_argument("--json", action="store_true", help="print the status as one JSON object")
    p.add_argument("--require-isolation", choices=LEVELS, default=None,
                   help="exit 1 if this isolation level is not available")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from hierplan.tools import sandbox_status
    from hierplan.tools.sandbox.result import LEVEL_LAYERS, LEVEL_ORDER

    status = sandbox_status()
    if getattr(args, "json", False):
        print(json.dumps(status.model_dump(), separators=(",", ":")))
    else:
        _print_table(status)
    need = getattr(args, "require_isolation", None)
    if need and LEVEL_ORDER.index(status.level) < LEVEL_ORDER.index(need):
        lacking = [entry for entry in status.layers if entry.name in LEVEL_LAYERS[need] and not entry.active]
        why = "; ".join(f"{e.name}: {e.reason}" for e in lacking)
        print(f"error: sandbox isolation '{need}' is not available (have '{status.level}'; missing {why})")
        return 1
    return 0


def _print_table(status) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Python sandbox: level '{status.level}'")
    for col in ("layer", "active", "why / how"):
        table.add_column(col)
    for entry in status.layers:
        mark = "[green]yes[/]" if entry.active else ("[yellow]off[/]" if entry.available else "[red]no[/]")
        table.add_row(entry.name, mark, entry.reason or entry.description)
    Console().print(table)
