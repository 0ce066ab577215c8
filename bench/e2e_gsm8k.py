"""End to end on GSM8K tasks: hierplan's default (parallel steps, batched LLM steps) vs ``--sequential``.

One process loads the embedded model once and builds both graphs on it (same sampling, same seed, same
constraint). Each task runs in both modes back to back, the order alternating per task, so load and drift
hit both alike. The same seed does not make the two runs' texts identical: batched and single generation
round differently, so plans and answers can differ between modes; the tables say how far.

    python bench/e2e_gsm8k.py [--limit 10] [--out eval-out/e2e-<stamp>] [--no-write]

Writes OUT/default/results.jsonl, OUT/sequential/results.jsonl (rows as `hierplan eval` writes them) and
their summary.md, and the `## End to end on GSM8K` section of docs/benchmarks.md.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import gsm8k_parser, machine_line, write_section  # noqa: E402

MODES = ("default", "sequential")


def _speed(baseline: float, measured: float) -> str:
    """'1.20x faster' or '1.06x slower': measured's wall time against baseline's."""
    if not (baseline and measured):
        return ""
    ratio = baseline / measured
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


def main() -> None:
    args = gsm8k_parser(__doc__.splitlines()[0], limit=10, out_name="e2e-{stamp}").parse_args()

    from hierplan.config import SamplingConfig
    from hierplan.eval.harness import evaluate_task, progress_line
    from hierplan.eval.report import ResultsWriter, write_summary
    from hierplan.eval.tasks import load_tasks
    from hierplan.graph.builder import build_graph
    from hierplan.models import load_chat_model

    tasks = load_tasks(args.tasks, args.limit)
    model = load_chat_model()
    sampling = SamplingConfig(seed=args.seed)
    graphs = {mode: build_graph(model, sampling=sampling, parallel=mode == "default") for mode in MODES}
    out = Path(args.out)
    writers = {}
    for mode in MODES:
        (out / mode).mkdir(parents=True, exist_ok=True)
        writers[mode] = ResultsWriter(out / mode / "results.jsonl")
    records: dict[str, list] = {mode: [] for mode in MODES}
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    for position, task in enumerate(tasks, start=1):
        order = MODES if position % 2 else MODES[::-1]
        for mode in order:
            record = evaluate_task(graphs[mode], task, f"e2e-{mode}-{task.index}")
            writers[mode].write(record)
            records[mode].append(record)
            print(f"{mode:>10} {progress_line(record, position, len(tasks))}", flush=True)
        # Written after every task pair, so a run stopped early still leaves its figures (marked partial).
        for mode in MODES:
            meta = {"mode": mode, "tasks file": args.tasks, "seed": args.seed, "started": started}
            write_summary(out / mode / "summary.md", records[mode], meta)
        body = render(args, position, len(tasks), records)
        if not args.no_write:
            write_section("End to end on GSM8K", body)
    for mode in MODES:
        writers[mode].close()
    print(body)


def _row(label: str, values: list[str], ratio: str = "") -> str:
    return f"| {label} | " + " | ".join(values) + f" | {ratio} |"


def render(args, n: int, total: int, records) -> str:
    d, s = (records[m] for m in MODES)
    wall = {m: sum(r["seconds"] for r in records[m]) for m in MODES}
    tokens = {m: sum(r.get("generated_tokens") or 0 for r in records[m]) for m in MODES}
    correct = {m: sum(1 for r in records[m] if r.get("correct")) for m in MODES}
    calls = {m: sum(r.get("model_calls") or 0 for r in records[m]) for m in MODES}
    steps = {m: sum(r.get("steps") or 0 for r in records[m]) for m in MODES}
    py = {m: (sum(r.get("python_ok") or 0 for r in records[m]), sum(r.get("python_steps") or 0 for r in records[m]))
          for m in MODES}
    same_plan = sum(1 for a, b in zip(d, s) if a.get("steps") == b.get("steps") and a.get("python_steps") == b.get("python_steps"))
    partial = "" if n == total else f" **Partial: {n} of {total} tasks done when this was written.**"
    lines = [
        f"Command: `python bench/e2e_gsm8k.py --limit {args.limit} --seed {args.seed}`",
        f"Machine: {machine_line()}",
        "",
        f"The first {n} tasks of `{Path(args.tasks).name}`, embedded SmolLM2-135M-Instruct, constrained planner, "
        "one process, both modes on the same loaded model, order alternating per task." + partial,
        "",
        "| | default (parallel + batched) | `--sequential` | default vs sequential |",
        "| --- | ---: | ---: | ---: |",
        _row("wall time, all tasks (s)", [f"{wall[m]:.0f}" for m in MODES], _speed(wall["sequential"], wall["default"])),
        _row("wall time per task (s)", [f"{wall[m] / n:.1f}" for m in MODES]),
        _row("generated tokens", [str(tokens[m]) for m in MODES],
             f"{tokens['default'] / tokens['sequential']:.2f}x" if tokens["sequential"] else ""),
        _row("generated tok/s of wall", [f"{tokens[m] / wall[m]:.1f}" for m in MODES],
             f"{(tokens['default'] / wall['default']) / (tokens['sequential'] / wall['sequential']):.2f}x"
             if wall["default"] and wall["sequential"] and tokens["sequential"] else ""),
        _row("model calls", [str(calls[m]) for m in MODES]),
        _row("steps", [str(steps[m]) for m in MODES]),
        _row("accuracy", [f"{correct[m]}/{n}" for m in MODES]),
        _row("python steps ok after repairs", [f"{py[m][0]}/{py[m][1]}" for m in MODES]),
        "",
        f"Tasks whose plans had the same step and Python-step counts in both modes: {same_plan}/{n}. "
        "Per-task rows: `OUT/default/results.jsonl`, `OUT/sequential/results.jsonl`.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
