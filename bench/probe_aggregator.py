"""Probe: the writing aggregator's system prompt as it is (A) against one without its list of forms (V: no
"(bullet points, numbered steps, headings, code blocks)"), on the aggregator's draft.

    python bench/probe_aggregator.py bench/data/own/ifeval_own2.jsonl bench-out/probe-aggregator-own2.jsonl
    python bench/probe_aggregator.py --summary bench-out/probe-aggregator-own2.jsonl

Each row runs once up to the aggregator (classify, read_requirements, the plan); from that checkpoint each
variant runs the aggregator alone, alternating which goes first. Per draft: IFEval's strict score, the floor
(rules.substance.not_the_piece), a list where the task asked for none, words, seconds (including the shared part).
A probe of one prompt change, kept with the figures it gave (bench/notes/eval-notebook.md); the product's prompt is
left as it is.
"""
import json
import sys
import time

from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ifeval_checkers import score  # noqa: E402

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from hierplan import load_chat_model  # noqa: E402
from hierplan.graph.builder import wire  # noqa: E402
from hierplan.nodes import prompts  # noqa: E402
from hierplan.options import RunOptions  # noqa: E402
from hierplan.rules.form import read_form  # noqa: E402
from hierplan.rules.substance import _asks_list, is_list, not_the_piece  # noqa: E402

A = prompts.AGGREGATOR_WRITING_SYSTEM
V = A.replace(" (bullet points, numbered steps, headings, code blocks)", "")
assert V != A
VARIANTS = {"A": A, "V": V}


def summary(path: str) -> None:
    by: dict[int, dict[str, dict]] = {}
    for line in open(path):
        record = json.loads(line)
        by.setdefault(record["row"], {})[record["variant"]] = record
    pairs = [d for d in by.values() if len(d) == 2]
    for v in VARIANTS:
        print(f"{v}: {len(pairs)} drafts, strict {sum(d[v]['strict'] for d in pairs)}, floor "
              f"{sum(bool(d[v]['floor']) for d in pairs)}, unasked lists {sum(d[v]['list'] for d in pairs)}, words "
              f"{sum(d[v]['words'] for d in pairs)}, seconds {round(sum(d[v]['seconds'] for d in pairs))}")


if sys.argv[1] == "--summary":
    summary(sys.argv[2])
    sys.exit(0)
rows = [json.loads(line) for line in open(sys.argv[1])]
out = open(sys.argv[2], "a")
model = load_chat_model()
graph = wire(model).compile(checkpointer=InMemorySaver(), interrupt_before=["aggregator"],
                            interrupt_after=["aggregator"])
ctx = RunOptions(seed=11)
for n, row in enumerate(rows, 1):
    cfg = {"configurable": {"thread_id": f"p{n}"}, "recursion_limit": 60}
    t0 = time.perf_counter()
    graph.invoke({"task": row["prompt"]}, cfg, context=ctx, durability="sync")
    snap = graph.get_state(cfg)
    pre = time.perf_counter() - t0
    if snap.values.get("kind") == "numeric":
        print(n, "numeric, skipped", flush=True)
        continue
    ckpt = snap.config
    order = ["A", "V"] if n % 2 else ["V", "A"]
    for name in order:
        prompts.AGGREGATOR_WRITING_SYSTEM = VARIANTS[name]
        t1 = time.perf_counter()
        state = graph.invoke(None, ckpt, context=ctx, durability="sync")
        final = state.get("final") or ""  # the aggregator's draft: the run stops after it
        instructions = state.get("requirements") or []
        rec = {"row": n, "key": row["key"], "variant": name, "final": final,
               "seconds": round(time.perf_counter() - t1 + pre, 1),
               "floor": not_the_piece(final, row["prompt"], instructions),
               "list": is_list(final) and not _asks_list(instructions, row["prompt"]),
               "words": len(final.split()), **score(row, final)}
        out.write(json.dumps(rec) + "\n")
        out.flush()
        print(n, name, rec["strict"], rec["floor"], rec["list"], rec["words"], rec["seconds"], flush=True)
prompts.AGGREGATOR_WRITING_SYSTEM = A
