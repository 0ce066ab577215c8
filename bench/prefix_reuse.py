"""Prompt prefixes computed once: the prefills of real runs replayed with and without the prefix store.

First the dev tasks run as the concurrency bench runs them (``evaluate_task`` in N threads, one model, seed
7), and every prefill the running batch does is recorded: each row's ids and chunk bounds. Then the same
prefills are replayed on the torch thread, each as its own ``RunningBatch.add`` of the same rows (one new
token each): whole (no store), then with a fresh store (cold: every chunk computed once on first use), then
again with that store (warm: every chunk found, as in a long-lived process). Same work in every mode, so the
times compare directly.

    python bench/prefix_reuse.py [--limit 8] [--concurrency 4] [--seed 7] [--rounds 2] [--no-write]
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import gsm8k_parser, machine_line, write_section  # noqa: E402


def record_prefills(model, tasks, concurrency: int, seed: int) -> list[list[tuple[list[int], tuple[int, ...]]]]:
    from hierplan.config import SamplingConfig
    from hierplan.eval.harness import evaluate_task
    from hierplan.graph.builder import build_graph
    from hierplan.models.decode import RunningBatch

    prefills = []
    add = RunningBatch.add

    def recording_add(batch, rows):
        prefills.append([(row.ids + row.generated, row.prefix_bounds) for row in rows])
        return add(batch, rows)

    RunningBatch.add = recording_add  # bench only: the library is not patched outside this function
    try:
        graph = build_graph(model, sampling=SamplingConfig(seed=seed))
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(lambda t: evaluate_task(graph, t, f"prefix-{t.index}"), tasks))
    finally:
        RunningBatch.add = add
    return prefills


def replay(model, prefills, store) -> float:
    import torch

    from hierplan.models.decode import RunningBatch
    from hierplan.models.rows import Row

    start = time.perf_counter()
    with torch.inference_mode():
        for rows in prefills:
            batch = RunningBatch(model.llm.pipeline.model, model._stop_ids(), 0, store)
            batch.add([Row(ids=ids, prefix_bounds=bounds if store is not None else (), max_new_tokens=1)
                       for ids, bounds in rows])
    return time.perf_counter() - start


def main() -> None:
    parser = gsm8k_parser(__doc__, limit=8, out_name="prefix-reuse-{stamp}.json")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    from langchain_core.messages import HumanMessage

    from hierplan.eval.tasks import load_tasks
    from hierplan.models import load_chat_model, torch_thread
    from hierplan.models.prefix_store import PrefixStore

    tasks = load_tasks(args.tasks, args.limit)
    model = load_chat_model()
    model.invoke([HumanMessage("Hi")], max_tokens=4)
    prefills = record_prefills(model, tasks, args.concurrency, args.seed)
    tokens = sum(len(ids) for rows in prefills for ids, _ in rows)
    shared = sum(bounds[-1] for rows in prefills for _, bounds in rows if bounds)
    print(f"{len(prefills)} prefills, {tokens} prompt tokens, {shared} of them in chunk bounds", flush=True)
    torch_thread.run(replay, model, prefills[:4], None)  # warm-up
    times: dict[str, list[float]] = {"whole": [], "cold": [], "warm": []}
    computed = hits = 0
    for i in range(args.rounds):
        times["whole"].append(torch_thread.run(replay, model, prefills, None))
        store = PrefixStore()
        times["cold"].append(torch_thread.run(replay, model, prefills, store))
        computed, hits = store.computed, store.hits
        times["warm"].append(torch_thread.run(replay, model, prefills, store))
        print(f"round {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()), flush=True)
    best = {k: min(v) for k, v in times.items()}
    print(f"best: whole {best['whole']:.1f} s, cold {best['cold']:.1f} s ({best['cold'] / best['whole']:.2f}x), "
          f"warm {best['warm']:.1f} s ({best['warm'] / best['whole']:.2f}x); cold store: {computed} chunks "
          f"computed, {hits} found")
    if not args.no_write:
        rounds = "\n".join(f"| {i + 1} | {times['whole'][i]:.1f} | {times['cold'][i]:.1f} | {times['warm'][i]:.1f} |"
                           for i in range(args.rounds))
        write_section("Prompt prefixes computed once (latest run)", f"""
Command: `python bench/prefix_reuse.py --limit {args.limit} --concurrency {args.concurrency} --seed {args.seed} --rounds {args.rounds}`
Machine: {machine_line()}

{len(prefills)} prefills of a {args.concurrency}-at-once run of {len(tasks)} dev tasks, {tokens} prompt tokens ({shared} in
chunks), replayed: whole, with a fresh store (cold) and with that store again (warm). Seconds:

| round | whole | cold store | warm store |
|---|---:|---:|---:|
{rounds}

Cold {best['cold'] / best['whole']:.2f}x and warm {best['warm'] / best['whole']:.2f}x the time of whole prefills (best of {args.rounds}).
""")


if __name__ == "__main__":
    main()
