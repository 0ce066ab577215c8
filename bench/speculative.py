"""llama.cpp's speculative decoding with a draft model, side by side with plain decoding, on hierplan's own calls.

    python bench/speculative.py [--draft qwen2.5-coder-0.5b] [--numeric 3] [--writing 3] [--doc]

Two engines on the same GGUF in one process, one of them with the draft (llamacpp/engine.py, ``draft=``); the
whole graph (the planner's plan under its JSON-schema grammar, Python and LLM steps, checks, the answer) runs
each task once on each, the order alternating per task (ABBA), greedy so both decode the same tokens where the
draft is exact. Tasks: the first GSM8K tasks of the tune part (gsm8k_dev100 1-40) and the first IFEval prompts of
its tune part (rows 1-240); never the validate parts. Figures: whole-run seconds and generated tokens a second.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
SHARED = ROOT.parent / "shared" / "eval"
NUMERIC_TASKS = SHARED / "gsm8k_dev100.jsonl"
WRITING_TASKS = SHARED / "instructions_dev.jsonl"
TITLE = "Speculative decoding with a draft model (issue 30, point 6)"


def tasks(numeric: int, writing: int) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in NUMERIC_TASKS.read_text().splitlines() if line.strip()][:numeric]
    prompts = [json.loads(line) for line in WRITING_TASKS.read_text().splitlines() if line.strip()][:writing]
    return [(f"gsm8k-{i + 1}", r["question"]) for i, r in enumerate(rows)] + \
           [(f"ifeval-{i + 1}", r["prompt"]) for i, r in enumerate(prompts)]


def run(graph, name: str, task: str, thread: str) -> dict[str, Any]:
    start = time.perf_counter()
    state = graph.invoke({"task": task}, {"configurable": {"thread_id": thread}})
    seconds = time.perf_counter() - start
    calls = [*(state.get("calls") or []), *(c for r in state.get("results") or [] for c in r.get("calls") or [])]
    tokens = sum(c.get("generated_tokens") or 0 for c in calls)
    return {"task": name, "seconds": round(seconds, 2), "tokens": tokens, "calls": len(calls),
            "final": (state.get("final") or "")[:200]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--draft", default="qwen2.5-coder-0.5b")
    parser.add_argument("--numeric", type=int, default=3)
    parser.add_argument("--writing", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "speculative.jsonl")
    parser.add_argument("--doc", action="store_true", help="write the figures into docs/benchmarks.md")
    args = parser.parse_args(argv)
    from langgraph.checkpoint.memory import InMemorySaver

    from hierplan.config import SamplingConfig
    from hierplan.graph.builder import build_graph
    from hierplan.models import resolve_model
    from hierplan.models.llamacpp.chat import ChatLlamaCpp
    from hierplan.models.llamacpp.engine import DRAFT_MAX_TOKENS, LlamaCppEngine

    spec, draft = resolve_model(args.model), resolve_model(args.draft)
    engines = {"plain": LlamaCppEngine(spec.path), "draft": LlamaCppEngine(spec.path, draft=draft.path)}
    # temperature 0 everywhere: both engines should write the same tokens, so time is the only difference
    sampling = SamplingConfig(seed=11).with_overrides(temperature=0.0)
    graphs = {name: build_graph(ChatLlamaCpp(engine=e, model_id=spec.name), InMemorySaver(), sampling=sampling)
              for name, e in engines.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    with args.out.open("w") as out:
        for n, (name, task) in enumerate(tasks(args.numeric, args.writing)):
            order = ["plain", "draft"] if n % 2 == 0 else ["draft", "plain"]
            for system in order:
                record = {"system": system, **run(graphs[system], name, task, f"{system}-{name}")}
                records.append(record)
                out.write(json.dumps(record) + "\n")
                out.flush()
                print(json.dumps(record)[:200], flush=True)
    by = {s: [r for r in records if r["system"] == s] for s in engines}
    rate = {s: sum(r["tokens"] for r in rs) / sum(r["seconds"] for r in rs) for s, rs in by.items()}
    lines = [f"`python bench/speculative.py --draft {args.draft} --numeric {args.numeric} --writing {args.writing}`, "
             f"{spec.name} with {draft.name} as draft (up to {DRAFT_MAX_TOKENS} tokens), {os.cpu_count()} cores, "
             f"{time.strftime('%Y-%m-%d')}, greedy\n",
             "| task | plain s | with draft s | plain tokens | with draft tokens |", "|---|---:|---:|---:|---:|"]
    for name, _ in tasks(args.numeric, args.writing):
        p = next(r for r in by["plain"] if r["task"] == name)
        d = next(r for r in by["draft"] if r["task"] == name)
        lines.append(f"| {name} | {p['seconds']} | {d['seconds']} | {p['tokens']} | {d['tokens']} |")
    total = {s: sum(r["seconds"] for r in rs) for s, rs in by.items()}
    lines.append(f"\nTotal: plain {total['plain']:.0f} s, with draft {total['draft']:.0f} s "
                 f"(**{total['draft'] / total['plain']:.2f}x**); generated tokens a second {rate['plain']:.1f} "
                 f"against {rate['draft']:.1f}; median task {statistics.median(r['seconds'] for r in by['plain'])} "
                 f"against {statistics.median(r['seconds'] for r in by['draft'])} s.\n")
    table = "\n".join(lines)
    print(table)
    if args.doc:
        from report import write_section

        write_section(TITLE, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
