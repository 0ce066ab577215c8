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


def measure(layers, runs: int) -> tuple[float, float, list[str]]:
    run_python("print(1)", layers=layers)  # warm-up (probe, page cache)
    times = []
    applied: list[str] = []
    for _ in range(runs):
        t = time.perf_counter()
        res = run_python("print(1)", layers=layers)
        times.append(time.perf_counter() - t)
        assert res.ok and res.stdout == "1\n", res
        applied = res.isolation
    return statistics.median(times) * 1000, max(times) * 1000, applied


def machine() -> str:
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, AttributeError):
        pass
    return f"{os.cpu_count()} cores{mem}, Linux {platform.release()}, Python {platform.python_version()}"


def render(rows, runs: int) -> str:
    lines = [HEADING, "",
             f"Command: `python bench/sandbox_overhead.py --runs {runs}` — median wall time of one "
             f"`run_python(\"print(1)\")` call (spawn to result), {runs} runs after one warm-up.",
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
    rows = []
    for name, layers in COMBOS:
        use, missing = plan_layers(layers)
        if missing:
            print(f"skip {name}: {missing}")
            continue
        med, mx, applied = measure(layers, args.runs)
        rows.append((name, applied, med, mx))
        print(f"{name:24s} {med:7.1f} ms (max {mx:.1f})  [{', '.join(applied)}]")
    text = render(rows, args.runs)
    if not args.no_write:
        write_section(text)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
