"""Batching across runs: the same dev tasks run one at a time vs N at once, one model in one process.

    python bench/concurrency.py [--limit 8] [--concurrency 4] [--seed 7] [--order 1,4] [--no-write]

One model is loaded once; each mode evaluates the same tasks with the eval harness's ``evaluate_task``
(a fresh in-memory checkpointer per mode), N tasks in N threads at a time. Runs that share the model
join each other's running batch (hierplan/models/batcher.py). Reported: wall time, tasks per minute,
their ratio, prefills, decode steps and rows per step, tokens generated, accuracy.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import gsm8k_parser, machine_line, write_section  # noqa: E402


def run_mode(model, tasks, concurrency: int, seed: int) -> dict:
    from hierplan.config import SamplingConfig
    from hierplan.eval.harness import evaluate_task
    from hierplan.graph.builder import build_graph

    graph = build_graph(model, sampling=SamplingConfig(seed=seed))
    batcher = model.batcher
    before = (batcher.prefills, batcher.steps, batcher.row_steps)
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        records = list(pool.map(lambda t: evaluate_task(graph, t, f"c{concurrency}-{t.index}"), tasks))
    wall = time.perf_counter() - start
    return {"concurrency": concurrency, "wall_s": round(wall, 1), "tasks_per_min": round(60 * len(tasks) / wall, 2),
            "prefills": batcher.prefills - before[0], "decode_steps": batcher.steps - before[1],
            "rows_per_step": round((batcher.row_steps - before[2]) / max(batcher.steps - before[1], 1), 2),
            "generated_tokens": sum(r.get("generated_tokens") or 0 for r in records),
            "correct": sum(1 for r in records if r.get("correct")), "errors": sum(1 for r in records if r["error"]),
            "task_seconds": [r["seconds"] for r in records],
            "task_tokens": [r.get("generated_tokens") for r in records],
            "task_steps": [r.get("steps") for r in records],
            "python_attempts": sum(r.get("python_attempts") or 0 for r in records)}


def main() -> None:
    parser = gsm8k_parser(__doc__, limit=8, out_name="concurrency-{stamp}.json")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--order", default="1,N", help="mode order, e.g. 1,N or N,1")
    parser.add_argument("--note", default="", help="a line for the write-up (e.g. that the machine was busy)")
    args = parser.parse_args()

    from langchain_core.messages import HumanMessage

    from hierplan.eval.tasks import load_tasks
    from hierplan.models import load_chat_model

    tasks = load_tasks(args.tasks, args.limit)
    model = load_chat_model()
    model.invoke([HumanMessage("Hi")], max_tokens=4)  # warm: first-pass costs out of both modes
    results = {}
    for mode in args.order.split(","):
        n = 1 if mode == "1" else args.concurrency
        results[n] = run_mode(model, tasks, n, args.seed)
        print(json.dumps(results[n]), flush=True)
    one, many = results[1], results[args.concurrency]
    ratio = many["tasks_per_min"] / one["tasks_per_min"]
    print(f"ratio {ratio:.2f}x")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"results": results, "ratio": ratio}, indent=1))
    if args.no_write:
        return
    command = f"python bench/concurrency.py --limit {args.limit} --concurrency {args.concurrency} --seed {args.seed}"
    rows = "\n".join(
        f"| {r['concurrency']} | {r['wall_s']} | {r['tasks_per_min']} | {r['prefills']} | {r['decode_steps']} | "
        f"{r['rows_per_step']} | {r['generated_tokens']} | {r['correct']}/{len(tasks)} | {r['errors']} |"
        for r in (one, many))
    write_section(f"Concurrent runs sharing one model ({args.concurrency} vs 1)", f"""
`{command}` (order {args.order}); {machine_line()}.
{args.note}

The same {len(tasks)} GSM8K dev tasks, one model loaded once, evaluated one at a time and then
{args.concurrency} at a time in threads; runs that overlap decode in one running batch (hierplan/models/batcher.py).

| concurrency | wall s | tasks/min | prefills | decode steps | rows per step | generated tokens | correct | errors |
|---|---|---|---|---|---|---|---|---|
{rows}

Tasks per minute at {args.concurrency} concurrent runs: **{ratio:.2f}x** the one-at-a-time rate (target >= 2x).
""")


if __name__ == "__main__":
    main()
