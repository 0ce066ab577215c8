"""OpenMP wait policy and thread count vs decode speed, on free cores and with other processes busy.

Each cell is a fresh process (the policy is read once, when torch starts OpenMP) that imports hierplan first
(`HIERPLAN_ADAPT_THREADS=0` where a row keeps the thread count fixed),
loads the embedded model and decodes 48 tokens 3 times with the agent's sampling settings; meanwhile 0, 1 or 2
other processes spin on the CPU. The row "hierplan default" is what `import hierplan` sets up.

    python bench/omp_policy.py [--tokens 48] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import machine_line, run_script, write_section  # noqa: E402

CHILD = r"""
import json, os, sys, time
import hierplan  # its environment defaults apply before torch starts
import torch
from langchain_core.messages import HumanMessage
from hierplan.models import load_chat_model
chat = load_chat_model()
n = int(sys.argv[1])
kwargs = {"do_sample": True, "temperature": 0.2, "top_p": 0.9, "max_new_tokens": n, "min_new_tokens": n}
chat.invoke([HumanMessage("Hi")], pipeline_kwargs={"max_new_tokens": 4})
rates = []
for _ in range(3):
    start = time.perf_counter()
    chat.invoke([HumanMessage("Plan the steps to compute the average of a list of numbers.")], pipeline_kwargs=kwargs)
    rates.append(n / (time.perf_counter() - start))
print("BENCH " + json.dumps({"rates": rates, "threads": torch.get_num_threads()}))  # threads of the last call
"""

# (label, environment changes; None removes the variable)
FIXED = {"HIERPLAN_ADAPT_THREADS": "0"}
VARIANTS = [
    ("hierplan default (spin 10000, threads left to other processes' use)", {}),
    ("spin 10000, torch's 2 threads always", FIXED),
    ("OMP_WAIT_POLICY=PASSIVE (sleep at once), 2 threads", {**FIXED, "OMP_WAIT_POLICY": "PASSIVE"}),
    ("GOMP_SPINCOUNT=3000, 2 threads", {**FIXED, "GOMP_SPINCOUNT": "3000"}),
    ("libgomp's default (spin 300000), 2 threads", {**FIXED, "GOMP_SPINCOUNT": "300000"}),
    ("OMP_NUM_THREADS=1", {**FIXED, "OMP_NUM_THREADS": "1"}),
]
BUSY = (0, 1, 2)


def child(changes: dict, tokens: int) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for key in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "HIERPLAN_ADAPT_THREADS"):
        env.pop(key, None)
    for key, value in changes.items():
        if value is not None:
            env[key] = value
    return run_script(CHILD, [str(tokens)], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    results: dict[tuple[str, int], float] = {}
    for busy in BUSY:
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        try:
            time.sleep(0.5)
            for label, changes in VARIANTS:
                out = child(changes, args.tokens)
                results[label, busy] = statistics.median(out["rates"])
                print(f"{busy} busy, {label}: {[round(r, 1) for r in out['rates']]} tok/s, "
                      f"{out['threads']} threads", flush=True)
        finally:
            for spinner in spinners:
                spinner.kill()
    header = "| setting | " + " | ".join(f"{b} other busy process{'es' if b != 1 else ''}" for b in BUSY) + " |"
    rows = [header, "| --- |" + " ---: |" * len(BUSY)]
    for label, _ in VARIANTS:
        rows.append(f"| {label} | " + " | ".join(f"{results[label, b]:.1f}" for b in BUSY) + " |")
    table = "\n".join(rows)
    print(table)
    if args.no_write:
        return
    write_section("OpenMP wait policy", f"""Decode tok/s (median of 3 runs of {args.tokens} tokens, agent sampling), each cell a fresh process that
imports hierplan first, with 0, 1 or 2 other processes spinning on the CPU meanwhile.

Command: `python bench/omp_policy.py --tokens {args.tokens}`
Machine: {machine_line()}

{table}
""")


if __name__ == "__main__":
    main()
