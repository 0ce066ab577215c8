"""hierplan against the same model alone on instruction-following prompts (IFEval), scored by IFEval's own checkers.

    make bench-deps                                    # lm-eval's checkers, bench-only
    python bench/vs_instructions.py --part validate --out bench-out/ifeval-validate.jsonl
    python bench/vs_instructions.py --part tune --limit 40 --out bench-out/ifeval-tune.jsonl
    python bench/vs_instructions.py --part tune --start 161 --limit 30 --out bench-out/ifeval-tune-161.jsonl
    python bench/vs_instructions.py --part validate --phrasing paraphrased --out bench-out/ifeval-para.jsonl

Tasks: ``../shared/eval/instructions_dev.jsonl`` (481 prompts). ``--part tune``: rows 1-240, the only ones looked
at while tuning; ``--part validate``: a fixed sample of VALIDATE_SIZE rows drawn (seed VALIDATE_SEED) from rows
241-481; ``--part fresh``: another sample of FRESH_SIZE rows (seed FRESH_SEED) from the validate rows the first
left, none of them read before its first run; ``--part fresh2``: a third (seed FRESH2_SEED) from the validate rows
neither earlier sample took; ``--part fresh3``: a fourth (seed FRESH3_SEED) from the validate rows none of the three
took; ``--part fresh4``: a fifth (seed FRESH4_SEED) from those none of the four took; ``--part fresh5``: the
last, the FRESH5_SIZE validate rows none of the five took. Systems: ``direct`` (the model alone, one call answering
the prompt, the aggregator's token budget) and ``hierplan`` (build_graph on the same model). Both read only the
prompt; the checkers' arguments are read here, for scoring only. Every finished prompt is appended to --out at
once; the same command resumes a killed run. The order of the systems alternates from prompt to prompt.

``--part own1``: 40 prompts that are not IFEval's, written for this project by a helper session that did not read
the product, in ordinary chat wording, each with IFEval instruction kinds and checker arguments
(bench/data/own/ifeval_own1.jsonl; scored by the same official checkers). Written on 2026-12-07 after every
validate row had been run; none of its prompts read before its first run. ``--part own2``: 40 more, written the
same way on 2026-12-07 during own1's first run, to measure the changes made after own1's reading. ``--part own3``:
40 more, written the same way on 2026-12-07 after own2's run and its mends, to measure them. ``--part own4``: 40
more, written the same way on 2026-12-07 after own3's run, to measure the mends made after own3's reading.
``--part own5``: 40 more, written the same way on 2026-12-07 during own4's run, to measure the mends made then.
``--part own6``: 40 more (Arabic, Hindi and Swahili among them), written the same way on 2026-12-07 after own5's
run, to measure the review's mends made after it.

``--phrasing paraphrased`` (validate and every fresh part) runs the same rows worded as people write them, none
of IFEval's stock sentences (bench/data/paraphrase/ifeval_{validate,fresh,fresh2,...,fresh5}.jsonl: same keys and
checker arguments).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from ifeval_checkers import score  # noqa: E402 (bench-only; after the path is set)

TASKS = ROOT.parent / "shared" / "eval" / "instructions_dev.jsonl"
PARAPHRASED = {part: ROOT / "bench" / "data" / "paraphrase" / f"ifeval_{part}.jsonl"
               for part in ("validate", "fresh", "fresh2", "fresh3", "fresh4", "fresh5")}
TUNE_ROWS = range(0, 240)
VALIDATE_ROWS = range(240, 481)
VALIDATE_SIZE, VALIDATE_SEED = 40, 30
# A second sample of the validate rows, drawn on 2026-12-06 after the first had been run many times: none of its
# prompts was read before its first run.
FRESH_SIZE, FRESH_SEED = 40, 41
# A third, drawn on 2026-12-06 (evening) after the fresh sample's prompts had been read in blind readings: from the
# validate rows neither earlier sample took; none of its prompts read before its first run.
FRESH2_SIZE, FRESH2_SEED = 40, 43
# A fourth, drawn on 2026-12-07 after fresh2's prompts had been read in blind readings: from the validate rows none of
# the three took; none of its prompts read before its first run.
FRESH3_SIZE, FRESH3_SEED = 40, 47
# A fifth, drawn on 2026-12-07 after fresh3's first run: from the validate rows none of the four took.
FRESH4_SIZE, FRESH4_SEED = 40, 53
# The sixth and last, drawn on 2026-12-07 after fresh4's blind reading: every validate row none of the five took.
FRESH5_SIZE, FRESH5_SEED = 41, 59
FRESH_PARTS = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5")
FRESH_DRAWS = ((FRESH_SIZE, FRESH_SEED), (FRESH2_SIZE, FRESH2_SEED), (FRESH3_SIZE, FRESH3_SEED),
               (FRESH4_SIZE, FRESH4_SEED), (FRESH5_SIZE, FRESH5_SEED))
OWN_PARTS = {part: ROOT / "bench" / "data" / "own" / f"ifeval_{part}.jsonl"
             for part in ("own1", "own2", "own3", "own4", "own5", "own6")}
SYSTEMS = ("direct", "hierplan")
DIRECT_SYSTEM = "You are a helpful assistant. Do the task exactly as asked."
TEMPERATURE, TOP_P = 0.2, 0.9


def select(rows: list[dict[str, Any]], part: str, limit: int | None, start: int = 1
           ) -> list[tuple[int, dict[str, Any]]]:
    """The part's prompts as (row number, row), from the part's ``start``-th prompt, at most ``limit`` of them."""
    validate = sorted(random.Random(VALIDATE_SEED).sample(list(VALIDATE_ROWS), VALIDATE_SIZE))
    if part in OWN_PARTS:
        picked = [(r["row"], r) for r in map(json.loads, OWN_PARTS[part].read_text().splitlines()) if r]
        return picked[start - 1:][:limit] if limit else picked[start - 1:]
    if part == "tune":
        chosen = list(TUNE_ROWS)
    elif part == "validate":
        chosen = validate
    else:  # each fresh part: from the validate rows no earlier sample took
        rest = [i for i in VALIDATE_ROWS if i not in set(validate)]
        for size, seed in FRESH_DRAWS[:FRESH_PARTS.index(part) + 1]:
            chosen = sorted(random.Random(seed).sample(rest, size))
            rest = [i for i in rest if i not in set(chosen)]
    picked = [(i + 1, rows[i]) for i in chosen if i < len(rows)][start - 1:]
    return picked[:limit] if limit else picked


def run_direct(model, prompt: str, seed: int) -> tuple[str, int | None]:
    from langchain_core.messages import HumanMessage, SystemMessage

    from hierplan.config import AGGREGATOR_MAX_NEW_TOKENS

    message = model.invoke([SystemMessage(DIRECT_SYSTEM), HumanMessage(prompt)], temperature=TEMPERATURE,
                           top_p=TOP_P, max_tokens=AGGREGATOR_MAX_NEW_TOKENS, seed=seed)
    usage = getattr(message, "usage_metadata", None) or {}
    return str(message.content), usage.get("output_tokens")


def run_one(system: str, row_no: int, row: dict[str, Any], *, model, graph, seed: int) -> dict[str, Any]:
    record: dict[str, Any] = {"system": system, "row": row_no, "key": row["key"], "prompt": row["prompt"],
                              "instructions": row["instruction_id_list"], "final": None, "error": None}
    start = time.perf_counter()
    try:
        if system == "direct":
            record["final"], record["generated_tokens"] = run_direct(model, row["prompt"], seed + row_no)
        else:
            state = graph.invoke({"task": row["prompt"]}, {"configurable": {"thread_id": f"ifeval-{row_no}"}})
            record["final"] = state.get("final") or ""
            calls = [*(state.get("calls") or []), *(c for r in state.get("results") or [] for c in r.get("calls") or [])]
            record["generated_tokens"] = sum(c.get("generated_tokens") or 0 for c in calls)
            record["kind"] = state.get("kind")
            record["steps"] = len((state.get("plan") or {}).get("steps") or [])
            record["instruction_check"] = {k: v for k, v in (state.get("instruction_check") or {}).items()
                                           if k in ("instructions", "draft_problems", "problems", "revised",
                                                    "revisions")}
    except Exception as exc:  # noqa: BLE001 - one prompt's failure must not end the run
        record["error"] = f"{type(exc).__name__}: {exc}"[:500]
    record["seconds"] = round(time.perf_counter() - start, 2)
    record.update(score(row, record["final"] or ""))
    return record


def summarize(records: list[dict[str, Any]]) -> str:
    by_system = defaultdict(list)
    for r in records:
        by_system[r["system"]].append(r)
    lines = ["| | prompts | prompt strict | prompt loose | instruction strict | instruction loose | s/prompt |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for system, rs in by_system.items():
        n, each = len(rs), [x for r in rs for x in r["strict_each"]]
        loose_each = [x for r in rs for x in r["loose_each"]]
        lines.append(f"| {system} | {n} | {sum(r['strict'] for r in rs)}/{n} = {100 * sum(r['strict'] for r in rs) / n:.1f}% "
                     f"| {100 * sum(r['loose'] for r in rs) / n:.1f}% | {100 * sum(each) / len(each):.1f}% "
                     f"| {100 * sum(loose_each) / len(loose_each):.1f}% | {sum(r['seconds'] for r in rs) / n:.1f} |")
    pairs = defaultdict(dict)
    for r in records:
        pairs[r["row"]][r["system"]] = r
    both = [p for p in pairs.values() if set(SYSTEMS) <= set(p)]
    wins = sum(1 for p in both if p["hierplan"]["strict"] and not p["direct"]["strict"])
    losses = sum(1 for p in both if p["direct"]["strict"] and not p["hierplan"]["strict"])
    lines += ["", f"paired on {len(both)} prompts (prompt-level strict): hierplan wins {wins}, loses {losses}", "",
              "| instruction kind | n | direct strict | hierplan strict |", "|---|---:|---:|---:|"]
    kinds: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        for kind, ok in zip(r["instructions"], r["strict_each"]):
            kinds[kind][(r["system"], "n")] += 1
            kinds[kind][(r["system"], "ok")] += ok
    for kind in sorted(kinds):
        c = kinds[kind]
        lines.append(f"| {kind} | {c[('direct', 'n')]} | {c[('direct', 'ok')]} | {c[('hierplan', 'ok')]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=["tune", "validate", *FRESH_PARTS, *OWN_PARTS], required=True)
    p.add_argument("--start", type=int, default=1, help="begin at the part's N-th prompt (1: its first)")
    p.add_argument("--limit", type=int, help="N prompts only (from --start)")
    p.add_argument("--phrasing", choices=["original", "paraphrased"], default="original")
    p.add_argument("--rows", help="only these row numbers of the part, comma-separated (a probe of a few prompts)")
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--out", required=True, help="per-prompt records, JSON lines")
    p.add_argument("--summary", action="store_true", help="only print the summary of --out")
    args = p.parse_args(argv)
    out = Path(args.out)
    done = {}
    if out.exists():
        done = {(r["system"], r["row"]): r for r in map(json.loads, out.read_text().splitlines()) if r}
    if args.summary:
        print(summarize(list(done.values())))
        return 0
    rows = [json.loads(line) for line in TASKS.read_text().splitlines() if line.strip()]
    tasks = select(rows, args.part, args.limit, args.start)
    if args.phrasing == "paraphrased":
        if args.part not in PARAPHRASED:
            p.error("--phrasing paraphrased exists for the validate and fresh parts only")
        worded = {r["row"]: r for r in map(json.loads, PARAPHRASED[args.part].read_text().splitlines()) if r}
        tasks = [(row_no, {**row, "prompt": worded[row_no]["prompt"]}) for row_no, row in tasks]
        assert all(worded[n]["key"] == row["key"] and worded[n]["kwargs"] == row["kwargs"] for n, row in tasks)
    if args.rows:
        wanted = {int(n) for n in args.rows.split(",")}
        tasks = [(row_no, row) for row_no, row in tasks if row_no in wanted]
    systems = tuple(args.systems.split(","))

    from hierplan import build_graph, load_chat_model
    from hierplan.options import RunOptions

    model = load_chat_model()
    graph = build_graph(model, options=RunOptions(seed=args.seed))
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"{len(tasks)} prompts ({args.part}) x {systems}; {len(done)} records already in {out}", flush=True)
    with out.open("a") as sink:
        for position, (row_no, row) in enumerate(tasks):
            order = systems if position % 2 == 0 else systems[::-1]
            for system in order:
                if (system, row_no) in done:
                    continue
                record = run_one(system, row_no, row, model=model, graph=graph, seed=args.seed)
                done[(system, row_no)] = record
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                print(f"[{row_no}] {system} strict={record['strict']} {record['seconds']}s", flush=True)
    print(summarize(list(done.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
