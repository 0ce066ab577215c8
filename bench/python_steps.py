"""The Python step node on its own: does the embedded model's code run, first try and after repairs?

Each GSM8K task becomes a one-step plan whose single Python step asks for the task's answer; the real node
(prompt, fence stripping, syntax check, last-value display, repairs) runs it in the real sandbox. This
measures the code-writing path apart from the planner's choice of tools (the planner may choose few or no
Python steps, which leaves the end-to-end evaluation's Python figures thin).

``--samples K`` runs the step K times per task, with seeds seed, seed+1, ... at once (the local model batches
them), and reports how far sampling could take the model: whether any of the K printed the expected answer
(pass@K), and whether the value printed most often is it (majority@K, self-consistency; a tie for the most
frequent value counts as no majority).

    python bench/python_steps.py [--limit 20] [--seed 7] [--samples 1] [--no-write]
"""

from __future__ import annotations

import collections
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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
    return head if head.isidentifier() else last.split(";")[0][:40]


def majority(values: list[str | None]) -> str | None:
    """The value printed most often (numbers compared as numbers), or None when none was printed or two tie."""
    from hierplan.eval.scoring import parse_number

    counts = collections.Counter(parse_number(v) for v in values if parse_number(v) is not None)
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return str(ranked[0][0])


def sample_row(result: dict, expected: str | None) -> dict:
    from hierplan.eval.scoring import score

    attempts = result["attempts"]
    value, correct = score(result["stdout"] if result["ok"] else None, expected)
    return {"ok": result["ok"], "ok_first_try": attempts[0]["ok"], "attempts": len(attempts),
            "errors": [error_kind(a["error"]) for a in attempts if not a["ok"]],
            "error_texts": [a["error"] for a in attempts if not a["ok"]], "value": value,
            "correct": bool(correct), "generated_tokens": sum(c["generated_tokens"] or 0 for c in result["calls"]),
            "codes": [a["code"] for a in attempts]}


def main() -> None:
    parser = gsm8k_parser(__doc__.splitlines()[0], limit=20, out_name="python-steps-{stamp}.jsonl")
    parser.add_argument("--samples", type=int, default=1, help="runs of the step per task, seeds seed, seed+1, ...")
    parser.add_argument("--section", default="Python steps on their own", help="docs/benchmarks.md section")
    args = parser.parse_args()

    from hierplan.config import SamplingConfig
    from hierplan.eval.scoring import numbers_equal
    from hierplan.eval.tasks import load_tasks
    from hierplan.models import load_chat_model
    from hierplan.nodes.python_step import make_python_step

    tasks = load_tasks(args.tasks, args.limit)
    model = load_chat_model()
    nodes = [make_python_step(model, SamplingConfig(seed=args.seed + k)) for k in range(args.samples)]
    plan = {"goal": "Answer the question", "assumptions": [], "steps": [STEP]}
    rows = []
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out, ThreadPoolExecutor(args.samples) as pool:
        for task in tasks:
            start = time.perf_counter()
            payload = {"task": task.question, "plan": plan, "results": [], "step": STEP}
            results = list(pool.map(lambda node: node(payload)["results"][0], nodes))
            samples = [sample_row(result, task.expected) for result in results]
            voted = majority([s["value"] for s in samples])
            row = {"index": task.index, "expected": task.expected, "samples": samples, "majority": voted,
                   "majority_correct": voted is not None and numbers_equal(voted, task.expected),
                   "seconds": round(time.perf_counter() - start, 1)}
            rows.append(row)
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"[{len(rows)}/{len(tasks)}] ok={sum(s['ok'] for s in samples)}/{args.samples} "
                  f"right={sum(s['correct'] for s in samples)} values={[s['value'] for s in samples]} "
                  f"expected={task.expected} {row['seconds']}s", flush=True)
    body = report(rows, args)
    print(body)
    if not args.no_write:
        write_section(args.section, body)


def report(rows: list[dict], args) -> str:
    from hierplan.nodes.python_step import MAX_CODE_REPAIRS

    n, k = len(rows), args.samples
    samples = [s for r in rows for s in r["samples"]]
    steps = len(samples)
    first = sum(s["ok_first_try"] for s in samples)
    ok = sum(s["ok"] for s in samples)
    kinds = collections.Counter(e for s in samples for e in s["errors"])
    sampled = "" if k == 1 else f" --samples {k}"
    votes = "" if k == 1 else f"""| tasks where one of the {k} printed the expected answer (pass@{k}) | {sum(any(s['correct'] for s in r['samples']) for r in rows)}/{n} |
| tasks whose most printed value is the expected answer (majority@{k}) | {sum(r['majority_correct'] for r in rows)}/{n} |
"""
    out = Path(args.out)
    return f"""Command: `python bench/python_steps.py --limit {args.limit} --seed {args.seed}{sampled}`
Machine: {machine_line()}

The first {n} tasks of `{Path(args.tasks).name}`, each as one Python step ("{STEP['instruction']}") run by the
real node and sandbox on the embedded SmolLM2-135M-Instruct, up to {MAX_CODE_REPAIRS} repairs{'' if k == 1 else f', {k} times per task (seeds {args.seed}-{args.seed + k - 1}, run at once)'}.

| | Python steps |
|---|---:|
| ran without error, first try | {first}/{steps} ({100 * first / steps:.0f}%) |
| ran without error, after repairs | **{ok}/{steps} ({100 * ok / steps:.0f}%)** (target ≥ 80%) |
| printed the expected answer | {sum(s['correct'] for s in samples)}/{steps} |
{votes}| attempts per step (mean) | {sum(s['attempts'] for s in samples) / steps:.2f} |
| generated tokens per step (mean) | {sum(s['generated_tokens'] for s in samples) / steps:.0f} |
| seconds per task (mean) | {sum(r['seconds'] for r in rows) / n:.1f} |

Failed attempts by error: {', '.join(f'{e} {v}' for e, v in kinds.most_common()) or 'none'}.
Per-task rows with every attempt's code: `{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}`.
"""


if __name__ == "__main__":
    main()
