"""How often the final answer, written as a caller's schema (build_graph's response_format, `hierplan run --schema`),
validates: bench/structured_tasks.jsonl's 20 tasks, each with a small JSON Schema (numbers, integers with bounds,
lists of a fixed or bounded length, enums, booleans, nested objects, lists of objects), on one loaded model.

    python bench/structured.py                                  # the embedded model, every task
    python bench/structured.py --model qwen2.5-coder-1.5b --limit 5 --seed 11
    python bench/structured.py --no-constrain                   # the same, asked for in plain text (parsed)

Each task is a whole hierplan run (in-memory checkpoints) with the task's schema as its response_format. Reported:
how many answers validated (the target: 20 of 20 on the embedded model), on the first attempt or after the one
retry, and, where a task names values it must hold (``expect``: dotted paths), how many held them (a number within
1 %). Every finished task is appended to --out as it ends (JSON lines, the first holding the settings); the same
command with the same --out skips what is there, so a killed run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TASKS = Path(__file__).resolve().parent / "structured_tasks.jsonl"


def read_tasks(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def at(value: Any, path: str) -> Any:
    """The value at a dotted path (``area.value``); a KeyError where it is missing."""
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def same(got: Any, wanted: Any) -> bool:
    """Equal, numbers within 1 % (and bools never numbers), strings without case."""
    if isinstance(wanted, bool) or isinstance(got, bool):
        return got is wanted
    if isinstance(wanted, (int, float)) and isinstance(got, (int, float)):
        return abs(got - wanted) <= 0.01 * max(abs(wanted), 1e-9)
    if isinstance(wanted, str) and isinstance(got, str):
        return got.strip().lower() == wanted.strip().lower()
    if isinstance(wanted, list) and isinstance(got, list):
        return len(got) == len(wanted) and all(same(g, w) for g, w in zip(got, wanted))
    return got == wanted


def held(response: dict[str, Any] | None, expect: dict[str, Any] | None) -> bool | None:
    """Whether a validated answer holds the task's expected values (None: the task names none)."""
    if not expect:
        return None
    if response is None:
        return False
    try:
        return all(same(at(response, path), wanted) for path, wanted in expect.items())
    except (KeyError, IndexError, TypeError, ValueError):
        return False


def run_task(model: Any, row: dict[str, Any], seed: int, constrain: bool) -> dict[str, Any]:
    from hierplan import build_graph

    graph = build_graph(model, response_format=row["schema"], seed=seed, constrain=constrain)
    start = time.perf_counter()
    try:
        out = graph.invoke({"task": row["task"]}, {"configurable": {"thread_id": row["id"]}})
    except Exception as exc:  # a run that failed is a task without a valid answer, said so
        return {"id": row["id"], "ok": False, "attempts": 0, "errors": [f"run failed: {type(exc).__name__}: {exc}"],
                "seconds": round(time.perf_counter() - start, 1), "final": None, "structured_response": None,
                "held": held(None, row.get("expect"))}
    check = out.get("structured_check") or {}
    response = out.get("structured_response")
    calls = [c for c in out.get("calls") or [] if c["node"] == "structured_answer"]
    return {"id": row["id"], "ok": bool(check.get("ok")), "attempts": check.get("attempts", 0),
            "errors": check.get("errors", []), "method": check.get("method"),
            "seconds": round(time.perf_counter() - start, 1),
            "structured_seconds": round(sum(c["seconds"] for c in calls), 1),
            "structured_tokens": sum(c.get("generated_tokens") or 0 for c in calls),
            "final": out.get("final"), "structured_response": response, "held": held(response, row.get("expect"))}


def report(rows: list[dict[str, Any]]) -> str:
    ok = [r for r in rows if r["ok"]]
    first = [r for r in ok if r["attempts"] == 1]
    checked = [r for r in rows if r["held"] is not None]
    lines = [f"validated: {len(ok)} of {len(rows)} ({len(first)} on the first attempt, {len(ok) - len(first)} after "
             f"the retry)",
             f"expected values held: {sum(1 for r in checked if r['held'])} of {len(checked)} tasks that name them",
             "", "| task | valid | attempts | held | run s | schema s | why not |", "|---|---|---:|---|---:|---:|---|"]
    for r in rows:
        why = "; ".join(r["errors"]) if not r["ok"] else ""
        mark = {True: "yes", False: "no", None: ""}[r["held"]]
        lines.append(f"| {r['id']} | {'yes' if r['ok'] else 'NO'} | {r['attempts']} | {mark} | {r['seconds']} | "
                     f"{r.get('structured_seconds', '')} | {why[:120]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default=str(TASKS), help=f"tasks file (default {TASKS.name})")
    p.add_argument("--model", help="model spec for load_chat_model (default: the embedded model)")
    p.add_argument("--limit", type=int, help="the first N tasks only")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--no-constrain", action="store_true", help="ask for the schema in plain text (no grammar)")
    p.add_argument("--out", help="per-task results, JSON lines (default bench-out/structured-<stamp>.jsonl)")
    args = p.parse_args(argv)
    tasks = read_tasks(Path(args.tasks), args.limit)
    out = Path(args.out or ROOT / "bench-out" / f"structured-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {"settings": {"model": args.model, "seed": args.seed, "constrain": not args.no_constrain,
                             "tasks": str(args.tasks)}}
    done: dict[str, dict[str, Any]] = {}
    if out.exists():
        lines = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        if lines and lines[0] != settings:
            print(f"{out} holds a run with other settings: {lines[0]}", file=sys.stderr)
            return 2
        done = {r["id"]: r for r in lines[1:]}
    else:
        out.write_text(json.dumps(settings) + "\n")

    from hierplan.models import load_chat_model

    model = load_chat_model(args.model)  # once, for every task
    rows = []
    for n, row in enumerate(tasks, start=1):
        result = done.get(row["id"])
        if result is None:
            result = run_task(model, row, args.seed, not args.no_constrain)
            with out.open("a") as f:
                f.write(json.dumps(result, ensure_ascii=False) + "\n")
        rows.append(result)
        print(f"[{n}/{len(tasks)}] {row['id']}: {'valid' if result['ok'] else 'NOT valid'} "
              f"({result['attempts']} attempts, {result['seconds']} s)", file=sys.stderr, flush=True)
    print(report(rows))
    print(f"\nper task: {out}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
