"""Parallel + batched vs sequential: a plan of 4 independent LLM steps on the embedded model.

Same model, same prompts, same token counts (min_new_tokens = max_new_tokens): the plan is written into
the graph's state as if the planner had made it (LangGraph update_state), so only the steps differ.

    python bench/parallel_steps.py [--tokens 48] [--rounds 2] [--no-write]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import machine_line, write_section  # noqa: E402

from hierplan import SamplingConfig, build_graph, load_chat_model  # noqa: E402

TOPICS = ["routing", "inventory", "memory store", "monitoring"]
PLAN = {
    "goal": "Describe the parts of a small logistics agent system",
    "assumptions": ["Python", "a small team"],
    "steps": [{"id": i, "title": f"Describe {t}", "instruction": f"Describe the {t} component in two sentences.",
               "tool": "llm", "expected_output": "two sentences", "depends_on": []}
              for i, t in enumerate(TOPICS, start=1)],
}


def steps_time(model, sampling: SamplingConfig, parallel: bool, run: str) -> tuple[float, int]:
    graph = build_graph(model=model, sampling=sampling, parallel=parallel)
    config = {"configurable": {"thread_id": run}}
    graph.update_state(config, {"task": "bench", "plan": PLAN, "plan_source": "fixed"}, as_node="planner")
    start = time.perf_counter()
    out = graph.invoke(None, config)
    seconds = time.perf_counter() - start
    tokens = sum(c["generated_tokens"] for r in out["results"] for c in r["calls"])
    return seconds, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    model = load_chat_model()
    base = SamplingConfig(seed=1)
    n = args.tokens
    sampling = replace(base, llm_step=replace(base.llm_step, max_new_tokens=n, min_new_tokens=n),
                       aggregator=replace(base.aggregator, max_new_tokens=1, min_new_tokens=1))
    steps_time(model, sampling, True, "warm-up")
    rows = {True: [], False: []}
    for r in range(args.rounds):  # alternate, so both modes see the same machine
        for parallel in (False, True):
            rows[parallel].append(steps_time(model, sampling, parallel, f"{parallel}-{r}"))
    seq = statistics.median(x[0] for x in rows[False])
    par = statistics.median(x[0] for x in rows[True])
    seq_tok, par_tok = rows[False][0][1], rows[True][0][1]
    body = f"""Command: `python bench/parallel_steps.py --tokens {n} --rounds {args.rounds}`
Machine: {machine_line()}

4 independent LLM steps (`depends_on: []`), {n} generated tokens each (forced), embedded model,
the plan injected with `update_state` so both modes run the same prompts. Medians of {args.rounds} alternating rounds;
the aggregator is held to 1 token in both.

| mode | wall s | generated tokens | tok/s |
|---|---:|---:|---:|
| sequential (`--sequential`) | {seq:.2f} | {seq_tok} | {seq_tok / seq:.1f} |
| parallel + batched (default) | {par:.2f} | {par_tok} | {par_tok / par:.1f} |
| **speed-up** | **{seq / par:.2f}×** | | |

Target ≥ 2.5×.
"""
    print(body)
    if not args.no_write:
        write_section("Parallel and batched steps", body)


if __name__ == "__main__":
    main()
