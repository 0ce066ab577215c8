"""What each check of a numeric run costs and what it buys: hierplan against one program, per model call.

Runs the ``program`` baseline and hierplan (bench/vs_model_alone.py, same prompts, seeds and alternating order)
on a part of the numeric dev set and keeps, per hierplan task, every program's number in the vote and every
model call's node, tokens and seconds (from the run's own state). Because each tie-break is drawn after the
previous programs and independently of what follows, a run with at most K tie-breaks is this run cut after the
programs it would have drawn: the table gives accuracy, paired wins and losses against the program and the time
ratio for K = 0, 1 and config.MAX_TIE_BREAKS, and the seconds each node takes.

    python bench/check_costs.py --part tune --out bench-out/check-costs-tune.jsonl

Every finished task is appended to --out at once; the same command again skips what is there. Tune on the tune
part only (bench/vs_model_alone.py's PARTS).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vs_model_alone as vs  # noqa: E402  (the baseline and the parts, shared)

CHECK_NODE = "python_check"


def record_task(system: str, task, *, model, graph, seed: int, run_code) -> dict[str, Any]:
    """One task by one system (vs_model_alone.run_task's record); a hierplan record also keeps the vote's
    numbers and every model call (node, tokens, seconds) in order, from the run's own state."""
    record = vs.run_task(system, task, model=model, graph=graph, seed=seed, run_code=run_code, prefix="costs")
    if system != "hierplan":
        return record
    state = graph.get_state({"configurable": {"thread_id": f"costs-{task.index}"}}).values
    calls = [*(c for r in state.get("results") or [] for c in r.get("calls") or []), *(state.get("calls") or [])]
    return {**record, "expected": str(task.expected), "answers": (state.get("vote") or {}).get("answers"),
            "calls": [{k: c.get(k) for k in ("node", "prompt_tokens", "generated_tokens", "seconds")}
                      for c in calls]}


def with_tie_breaks(record: dict[str, Any], limit: int) -> tuple[bool, float]:
    """(right, seconds) of this hierplan run had it drawn at most ``limit`` tie-breaks."""
    from hierplan.rules.numbers import number_key
    from hierplan.rules.vote import has_majority, tally

    answers = record.get("answers")
    if not answers:
        return bool(record["correct"]), record["seconds"]
    keys = [None if a is None else number_key(a) for a in answers]
    drawn = 1  # whole-task programs: the check, then tie-breaks while no number has a majority
    while drawn < len(keys) - 1 and drawn < 1 + limit and not has_majority(keys[:1 + drawn]):
        drawn += 1
    checks = [c for c in record["calls"] if c["node"] == CHECK_NODE]
    saved = sum(c["seconds"] for c in checks[drawn:])
    index, _ = tally(keys[:1 + drawn])
    return keys[index] == number_key(record["expected"]), record["seconds"] - saved


def summary(records: list[dict[str, Any]]) -> str:
    from hierplan.config import MAX_TIE_BREAKS

    program = {r["index"]: r for r in records if r["system"] == "program"}
    hier = [r for r in records if r["system"] == "hierplan" and r["index"] in program]
    program_seconds = sum(program[r["index"]]["seconds"] for r in hier)
    lines = ["| tie-breaks at most | hierplan right | program right | wins | losses | time vs program |",
             "|---|---:|---:|---:|---:|---:|"]
    for limit in sorted({0, 1, MAX_TIE_BREAKS}):
        right = wins = losses = 0
        seconds = 0.0
        for r in hier:
            ok, s = with_tie_breaks(r, limit)
            base = bool(program[r["index"]]["correct"])
            right += ok
            wins += ok and not base
            losses += base and not ok
            seconds += s
        base_right = sum(bool(program[r["index"]]["correct"]) for r in hier)
        lines.append(f"| {limit} | {right}/{len(hier)} | {base_right}/{len(hier)} | {wins} | {losses} | "
                     f"{seconds / program_seconds:.2f}x |")
    per_node: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0])  # calls, seconds, tokens in, out
    for r in hier:
        seen = 0
        for c in r["calls"]:
            node = c["node"]
            if node == CHECK_NODE:
                node = "python_check (check)" if seen == 0 else "python_check (tie-break)"
                seen += 1
            row = per_node[node]
            row[0] += 1
            row[1] += c["seconds"] or 0
            row[2] += c["prompt_tokens"] or 0
            row[3] += c["generated_tokens"] or 0
    lines += ["", "| node | calls | s a call | prompt tokens a call | generated tokens a call | s a task |",
              "|---|---:|---:|---:|---:|---:|"]
    for node, (n, s, p, g) in sorted(per_node.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"| {node} | {n} | {s / n:.2f} | {p / n:.0f} | {g / n:.0f} | {s / len(hier):.2f} |")
    lines.append(f"| one program (baseline) | {len(hier)} | {program_seconds / len(hier):.2f} | | | "
                 f"{program_seconds / len(hier):.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=sorted(vs.PARTS), default="tune")
    p.add_argument("--limit", type=int, help="the part's first N tasks only")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--out", required=True, help="per-task records, JSON lines")
    args = p.parse_args(argv)

    from hierplan.eval.tasks import load_tasks

    tasks = load_tasks(vs.GSM8K_TASKS)[vs.PARTS[args.part]]
    tasks = tasks[:args.limit] if args.limit else tasks
    out = Path(args.out)
    settings = {"bench": "check_costs", "tasks": str(vs.GSM8K_TASKS.resolve()), "seed": args.seed}
    done = vs.read_done(out, settings)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not done:
        out.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")

    from langgraph.checkpoint.memory import InMemorySaver

    from hierplan.config import SamplingConfig
    from hierplan.graph.builder import build_graph
    from hierplan.models import load_chat_model
    from hierplan.tools import run_python

    model = load_chat_model(None)
    graph = build_graph(model, InMemorySaver(), sampling=SamplingConfig(seed=args.seed))

    def on_record(record: dict[str, Any]) -> None:
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(f"[{record['index']}] {record['system']:>8} {record['predicted']} vs {record['expected']} "
              f"{record['seconds']:.1f}s", file=sys.stderr, flush=True)

    records = vs.run_bench(tasks, ("program", "hierplan"), model=model, graph=graph, seed=args.seed,
                           run_code=run_python, done=done, on_record=on_record, run_one=record_task)
    print(summary(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
