"""Shared by the benchmarks: the machine line and writing one `## section` of docs/benchmarks.md."""

from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = ""
    try:
        import torch
        import transformers

        versions = f"torch {torch.__version__}, {torch.get_num_threads()} threads, transformers {transformers.__version__}"
    except ImportError:
        pass
    load = "load avg at end %.2f" % os.getloadavg()[0]
    parts = [cpu, f"{os.cpu_count()} cores", versions, load, time.strftime("%Y-%m-%d %H:%M %Z")]
    return "; ".join(p for p in parts if p)


def write_section(title: str, body: str) -> None:
    """Replace (or append) the `## {title}` section, leaving every other section untouched."""
    text = BENCHMARKS.read_text() if BENCHMARKS.exists() else "# Benchmarks\n"
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}[ \t]*\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    BENCHMARKS.parent.mkdir(parents=True, exist_ok=True)
    BENCHMARKS.write_text(text)
    print(f"updated ## {title} in {BENCHMARKS}")
