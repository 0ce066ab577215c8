"""The Python step node on its own: does the embedded model's code run, first try and after repairs?

Each GSM8K task becomes a one-step plan whose single Python step asks for the task's answer; the real node
(prompt, fence stripping, syntax check, last-value display, repairs) runs it in the real sandbox. This
measures the code-writing path apart from the planner's choice of tools (the planner may choose few or no
Python steps, which leaves the end-to-end evaluation's Python figures thin).

    python bench/python_steps.py [--limit 20] [--seed 7] [--no-write]
"""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import ROOT, gsm8k_parser, machine_line, write_section  # noqa: E402

from hierplan.nodes.python_step import NOTHING_PRINTED  # noqa: E402  (light: no torch)

STEP = {"id": 1, "title": "Compute the answer", "tool": "python", "depends_on": [],
        "instruction": "Compute the number the task asks for.", "expected_output": "The answer as a number"}


def error_kind(error: str | None) -> str:
    """'NameError', 'SyntaxError', 'timed out', 'printed nothing'...: the exception name of the last line."""
    if not error:
        return "ok"
    if error == NOTHING_PRINTED:
        return "printed nothing"
    last = error.strip().splitlines()[-1]
    head = last.split(":", 1)[0].split("(", 1)[0].strip()
    return head if head.isidentifier() else last[:40]


def main() -> None:
    parser = gsm8k_parser(__doc__.splitlines()[0], limit=20, out_name="python-steps-{stamp}.jsonl")
    parser.add_argument("--section", default="Python steps on their own", help="docs/benchmarks.md section")
    args = parser.parse_args()

    from hierplan.config import SamplingConfig
    from hierplan.eval.scoring import score
    from hierplan.eval.tasks import load_tasks
    from hierplan.models import load_chat_model
    from hierplan.nodes.python_step import MAX_CODE_REPAIRS, make_python_step

    tasks = load_tasks(args.tasks, args.limit)
    node = make_python_step(load_chat_model(), SamplingConfig(seed=args.seed))
    rows = []
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        for task in tasks:
            plan = {"goal": "Answer the question", "assumptions": [], "steps": [STEP]}
            start = time.perf_counter()
            result = node({"task": task.question, "plan": plan, "results": [], "step": STEP})["results"][0]
            attempts = result["attempts"]
            _, correct = score(result["stdout"] if result["ok"] else None, task.expected)
            row = {"index": task.index, "ok": result["ok"], "ok_first_try": attempts[0]["ok"],
                   "attempts": len(attempts), "errors": [error_kind(a["error"]) for a in attempts if not a["ok"]],
                   "error_texts": [a["error"] for a in attempts if not a["ok"]],
                   "correct": bool(correct), "generated_tokens": sum(c["generated_tokens"] or 0 for c in result["calls"]),
                   "seconds": round(time.perf_counter() - start, 1), "codes": [a["code"] for a in attempts]}
            rows.append(row)
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"[{len(rows)}/{len(tasks)}] ok={row['ok']} first={row['ok_first_try']} attempts={row['attempts']} "
                  f"errors={row['errors']} correct={row['correct']} {row['seconds']}s", flush=True)
    n = len(rows)
    first = sum(r["ok_first_try"] for r in rows)
    ok = sum(r["ok"] for r in rows)
    kinds = collections.Counter(k for r in rows for k in r["errors"])
    body = f"""Command: `python bench/python_steps.py --limit {args.limit} --seed {args.seed}`
Machine: {machine_line()}

The first {n} tasks of `{Path(args.tasks).name}`, each as one Python step ("{STEP['instruction']}") run by the
real node and sandbox on the embedded SmolLM2-135M-Instruct, up to {MAX_CODE_REPAIRS} repairs.

| | Python steps |
|---|---:|
| ran without error, first try | {first}/{n} ({100 * first / n:.0f}%) |
| ran without error, after repairs | **{ok}/{n} ({100 * ok / n:.0f}%)** (target ≥ 80%) |
| printed the expected answer | {sum(r['correct'] for r in rows)}/{n} |
| attempts per step (mean) | {sum(r['attempts'] for r in rows) / n:.2f} |
| generated tokens per step (mean) | {sum(r['generated_tokens'] for r in rows) / n:.0f} |
| seconds per step (mean) | {sum(r['seconds'] for r in rows) / n:.1f} |

Failed attempts by error: {', '.join(f'{k} {v}' for k, v in kinds.most_common()) or 'none'}.
Per-step rows with every attempt's code: `{Path(args.out).relative_to(ROOT) if Path(args.out).is_relative_to(ROOT) else args.out}`.
"""
    print(body)
    if not args.no_write:
        write_section(args.section, body)


if __name__ == "__main__":
    main()
