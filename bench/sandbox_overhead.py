"""Per-call overhead of the Python sandbox: median of N ``print(1)`` runs per layer combination.

Usage: python bench/sandbox_overhead.py [--runs 20] [--no-write]
Writes the table into the "## Sandbox per-call overhead" section of docs/benchmarks.md
(only that section is replaced; other sections are left alone).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import time
from pathlib import Path

from hierplan.tools import run_python
from hierplan.tools.sandbox.api import plan_layers

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
HEADING = "## Sandbox per-call overhead"
COMBOS = [
    ("bare (rlimits + env)", ["rlimits", "env"]),
    ("+ seccomp", ["rlimits", "env", "seccomp"]),
    ("+ landlock", ["rlimits", "env", "landlock"]),
    ("+ landlock + seccomp", ["rlimits", "env", "landlock", "seccomp"]),
    ("bwrap + uid", ["rlimits", "env", "bwrap", "uid"]),
    ("all layers", None),
]


def measure_all(combos, runs: int) -> dict[str, tuple[float, float, list[str]]]:
    """Round-robin over the combinations so background load hits every one alike."""
    times: dict[str, list[float]] = {name: [] for name, _ in combos}
    applied: dict[str, list[str]] = {}
    for name, layers in combos:
        run_python("print(1)", layers=layers)  # warm-up (probe, page cache)
    for _ in range(runs):
        for name, layers in combos:
            t = time.perf_counter()
            res = run_python("print(1)", layers=layers)
            times[name].append(time.perf_counter() - t)
            assert res.ok and res.stdout == "1\n", res
            applied[name] = res.isolation
    return {n: (statistics.median(v) * 1000, max(v) * 1000, applied[n]) for n, v in times.items()}


def machine() -> str:
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, AttributeError):
        pass
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores{mem}, Linux {platform.release()}, Python {platform.python_version()}, "
            f"load average at the end {load}")


def render(rows, runs: int) -> str:
    lines = [HEADING, "",
             f"Command: `python bench/sandbox_overhead.py --runs {runs}` — median wall time of one "
             f"`run_python(\"print(1)\")` call (spawn to result), {runs} rounds, round-robin over the combinations, after one warm-up each.",
             f"Machine: {machine()}. Date: {dt.date.today().isoformat()}. Target: ≤ 60 ms with every layer.", "",
             "| layers requested | layers applied | median ms | max ms |", "|---|---|---:|---:|"]
    for name, applied, med, mx in rows:
        lines.append(f"| {name} | {', '.join(applied)} | {med:.1f} | {mx:.1f} |")
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    doc = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(doc):
        doc = pattern.sub(lambda _: text + "\n", doc, count=1)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(doc.rstrip("\n") + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = ap.parse_args()
    combos = []
    for name, layers in COMBOS:
        missing = plan_layers(layers)[1]
        if missing:
            print(f"skip {name}: {missing}")
        else:
            combos.append((name, layers))
    rows = []
    for name, (med, mx, applied) in measure_all(combos, args.runs).items():
        rows.append((name, applied, med, mx))
        print(f"{name:24s} {med:7.1f} ms (max {mx:.1f})  [{', '.join(applied)}]")
    text = render(rows, args.runs)
    if not args.no_write:
        write_section(text)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
