"""Shared by the benchmarks: the machine line and writing one `## section` of docs/benchmarks.md."""

from __future__ import annotations

import os
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
GSM8K_TASKS = ROOT.parent / "shared" / "eval" / "gsm8k_dev100.jsonl"


def gsm8k_parser(description: str, *, limit: int, out_name: str):
    """The arguments the GSM8K benchmarks share: --tasks, --limit, --seed, --out (under eval-out/, stamped
    with the start time; ``out_name`` may hold a suffix such as .jsonl) and --no-write."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tasks", default=str(GSM8K_TASKS))
    parser.add_argument("--limit", type=int, default=limit)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(ROOT / "eval-out" / out_name.format(stamp=time.strftime("%Y%m%d-%H%M%S"))))
    parser.add_argument("--no-write", action="store_true", help="do not touch docs/benchmarks.md")
    return parser


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    # Versions from the package metadata: importing torch only to print this line costs a fake-model run seconds.
    versions = ", ".join(f"{name} {_version(name)}" for name in ("torch", "transformers") if _version(name))
    if "torch" in sys.modules:
        versions += f", {sys.modules['torch'].get_num_threads()} torch threads"
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


def run_script(code: str, args: list[str], env: dict[str, str], python: str = sys.executable) -> dict:
    """Run ``code`` in a fresh ``python -c`` process; the JSON it prints after "BENCH " on a line of its own."""
    import json
    import subprocess

    done = subprocess.run([python, "-c", code, *args], env=env, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:])
    raise SystemExit(f"child failed (rc={done.returncode}):\n{done.stderr[-3000:]}")

