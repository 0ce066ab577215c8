"""Orchestration overhead: the graph with synchronous SQLite checkpoints around a fake model with a fixed
per-call delay, vs calling that fake model directly in a loop the same number of times.

    python bench/orchestration.py [--delay 0.5] [--steps 8] [--rounds 3] [--no-write]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fakes import ScriptedChatModel, plan_json  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from report import machine_line, write_section  # noqa: E402

from hierplan import build_graph, open_checkpointer  # noqa: E402


class DelayedModel(ScriptedChatModel):
    delay: float = 0.5

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        time.sleep(self.delay)
        return super()._generate(messages, stop, run_manager, **kwargs)


def through_graph(delay: float, steps: int, db: str, run: int) -> tuple[float, int]:
    model = DelayedModel(delay=delay, script={"planner": [plan_json(["llm"] * steps)]})
    graph = build_graph(model=model, checkpointer=open_checkpointer(db), constrain=False)
    start = time.perf_counter()
    graph.invoke({"task": "benchmark"}, {"configurable": {"thread_id": f"bench-{run}"}})
    return time.perf_counter() - start, len(model.calls)


def direct(delay: float, calls: int) -> float:
    model = DelayedModel(delay=delay)
    start = time.perf_counter()
    for _ in range(calls):
        model.invoke([HumanMessage("hi")])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per fake model call")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.sqlite")
        through_graph(0.0, args.steps, db, -1)  # warm-up: imports, schema creation
        for run in range(args.rounds):  # side by side, alternating
            g, calls = through_graph(args.delay, args.steps, db, run)
            d = direct(args.delay, calls)
            rows.append((g, d, calls))
    g = statistics.median(r[0] for r in rows)
    d = statistics.median(r[1] for r in rows)
    calls = rows[0][2]
    overhead = (g - d) / g
    body = f"""Command: `python bench/orchestration.py --delay {args.delay} --steps {args.steps} --rounds {args.rounds}`
Machine: {machine_line()}

A plan of {args.steps} sequential LLM steps ({calls} model calls with planner and aggregator), a fake model that
sleeps {args.delay} s per call, the graph with SQLite checkpoints written synchronously after every step,
vs the same {calls} calls in a plain loop. Medians of {args.rounds} alternating rounds.

| | wall s | per call ms |
|---|---:|---:|
| plain loop | {d:.3f} | {1000 * d / calls:.1f} |
| graph + sync SQLite checkpoints | {g:.3f} | {1000 * g / calls:.1f} |
| **overhead** | {g - d:.3f} | {1000 * (g - d) / calls:.1f} |

Overhead: **{100 * overhead:.2f} %** of wall time (target ≤ 2 %). With the real model a call takes seconds,
so the share is smaller still; the absolute cost is ~{1000 * (g - d) / calls:.0f} ms per model call.
"""
    print(body)
    if not args.no_write:
        write_section("Orchestration overhead", body)


if __name__ == "__main__":
    main()
