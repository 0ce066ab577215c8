"""hierplan against the same model alone: same tasks, same loaded model, one process, one run.

Numeric tasks (GSM8K form), three systems: ``cot`` (the model alone, one step-by-step call), ``program`` (the
model alone writes one Python program, run in hierplan's sandbox; the answer is its last printed number) and
``hierplan`` (build_graph on the same model, in-memory checkpoints). Writing tasks (``--writing``, tasks with
``requirements``): ``direct`` (one call answering the task) and ``hierplan``. The order of the systems rotates
from task to task, so load and drift on a shared machine hit every system alike.

    python bench/vs_model_alone.py --limit 40 --seed 11 --doc
    python bench/vs_model_alone.py --writing --seed 11 --doc

Every finished task is appended to --out (JSON lines, the first holding the settings) at once; running the same
command with the same --out again skips what is there, so a killed run resumes. --doc replaces this bench's
marked section of docs/eval.md (one for numeric, one for writing). The prompts below are baselines, not product.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
import zlib
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
GSM8K_TASKS = ROOT.parent / "shared" / "eval" / "gsm8k_dev100.jsonl"
WRITING_TASKS = ROOT / "hierplan" / "eval" / "data" / "writing20.jsonl"
EVAL_DOC = ROOT / "docs" / "eval.md"

NUMERIC_SYSTEMS = ("cot", "program", "hierplan")
WRITING_SYSTEMS = ("direct", "hierplan")
LABELS = {"cot": "model alone, one step-by-step call", "program": "model alone, one program, run",
          "direct": "model alone, one call", "hierplan": "hierplan"}

COT_SYSTEM = ("You solve math word problems. Solve the problem step by step, showing each calculation. "
              "End with a last line of the form 'Answer: N', where N is the final number alone.")
PROGRAM_SYSTEM = ("You solve math word problems by writing one short Python program. The program computes the "
                  "answer from the numbers in the problem and prints the final number as its last output. "
                  "It must not read input. Reply with the program only, in one ```python code block.")
DIRECT_SYSTEM = "You are a helpful assistant. Do the task exactly as asked."
# The same sampling as hierplan's nodes (hierplan.config), and the budgets of the nodes whose job each baseline
# does in one call: the final answer for cot and direct, a Python step's program for program.
TEMPERATURE, TOP_P = 0.2, 0.9
# Parts of the numeric dev set: tune on the first 40 only, report on the rest (positions in the file).
PARTS = {"tune": slice(0, 40), "validate": slice(40, 100)}


def budgets() -> dict[str, int]:
    from hierplan.config import AGGREGATOR_MAX_NEW_TOKENS, CODE_MAX_NEW_TOKENS

    return {"cot": AGGREGATOR_MAX_NEW_TOKENS, "program": CODE_MAX_NEW_TOKENS, "direct": AGGREGATOR_MAX_NEW_TOKENS}


def call_seed(seed: int, system: str, index: int) -> int:
    """A fixed seed per (run seed, system, task): a resumed run draws what the first one would have."""
    return zlib.crc32(f"{seed}:{system}:{index}".encode()) & 0x7FFFFFFF


def one_call(model, system_prompt: str, question: str, max_tokens: int, seed: int) -> tuple[str, int | None]:
    """(reply text, generated tokens from usage_metadata or None) of one chat call."""
    from langchain_core.messages import HumanMessage, SystemMessage

    message = model.invoke([SystemMessage(system_prompt), HumanMessage(question)], temperature=TEMPERATURE,
                           top_p=TOP_P, max_tokens=max_tokens, seed=seed)
    usage = getattr(message, "usage_metadata", None) or {}
    text = message.content if isinstance(message.content, str) else str(message.content)
    return text, usage.get("output_tokens")


def run_baseline(system: str, model, task, seed: int, run_code: Callable[[str], Any]) -> dict[str, Any]:
    """One task by the model alone. A call that raises is recorded as an error (and a wrong answer)."""
    from hierplan.eval.scoring import last_number, score
    from hierplan.rules.text import strip_code_fences

    prompt = {"cot": COT_SYSTEM, "program": PROGRAM_SYSTEM, "direct": DIRECT_SYSTEM}[system]
    record: dict[str, Any] = {"final": None, "generated_tokens": None, "error": None}
    start = time.perf_counter()
    try:
        text, record["generated_tokens"] = one_call(model, prompt, task.question, budgets()[system],
                                                       call_seed(seed, system, task.index))
        if system == "program":
            record["program"] = text
            result = run_code(strip_code_fences(text))
            record["program_ok"] = bool(result.ok)
            record["program_error"] = result.error
            # The answer is the last number the program printed (even if it failed after printing it).
            record["final"] = last_number(result.stdout)
        else:
            record["final"] = text
    except Exception as exc:  # noqa: BLE001 - one task's failure must not end the run
        record["error"] = f"{type(exc).__name__}: {exc}"[:500]
    record["seconds"] = round(time.perf_counter() - start, 3)
    record["predicted"], record["correct"] = score(record["final"], task.expected)
    if record["error"] and task.expected is not None:
        record["correct"] = False
    return record


HIERPLAN_KEYS = ("final", "predicted", "correct", "seconds", "generated_tokens", "plan_source",
                 "plan_valid_first_pass", "has_python_step", "steps", "python_steps", "python_ok", "model_calls",
                 "error")


def run_hierplan(graph, task, thread_id: str) -> dict[str, Any]:
    from hierplan.eval.harness import evaluate_task

    record = evaluate_task(graph, task, thread_id)  # tokens: the sum over the run's recorded calls
    return {key: record.get(key) for key in HIERPLAN_KEYS}


def run_task(system: str, task, *, model, graph, seed: int, run_code, prefix: str = "vs") -> dict[str, Any]:
    """One task by one system: the record written to --out."""
    from hierplan.eval.requirements import requirement_fields

    if system == "hierplan":
        body = run_hierplan(graph, task, f"{prefix}-{task.index}")
    else:
        body = run_baseline(system, model, task, seed, run_code)
    return {"system": system, "index": task.index, "question": task.question, "expected": task.expected,
            **body, **requirement_fields(task.requirements, body.get("final"))}


def run_bench(tasks, systems, *, model, graph, seed: int, run_code, done: dict | None = None,
              on_record: Callable[[dict[str, Any]], None] = lambda r: None,
              run_one: Callable[..., dict[str, Any]] = run_task) -> list[dict[str, Any]]:
    """Every task by every system, the systems' order rotating per task; ``done`` maps (system, index) to
    records of an earlier run, which are kept instead of rerun. ``run_one``: run_task, or another bench's
    record of one task (bench/check_costs.py)."""
    done = dict(done or {})
    records = []
    for position, task in enumerate(tasks):
        shift = position % len(systems)
        for system in (*systems[shift:], *systems[:shift]):
            record = done.get((system, task.index))
            if record is None:
                record = run_one(system, task, model=model, graph=graph, seed=seed, run_code=run_code)
                on_record(record)
            records.append(record)
    return records


# ------------------------------------------------------------------------------------------- figures


def summarize_system(records: list[dict[str, Any]]) -> dict[str, Any]:
    from hierplan.eval.report import wilson_interval

    def pct(num: int, den: int) -> float | None:
        return round(100.0 * num / den, 1) if den else None

    n = len(records)
    checked = [r for r in records if r.get("correct") is not None]
    correct = sum(1 for r in checked if r["correct"])
    counted = [r["generated_tokens"] for r in records if r.get("generated_tokens") is not None]
    # a plan written by rule asked the model for nothing (plan_valid_first_pass None): model plans only
    planned = [r for r in records if r.get("plan_valid_first_pass") is not None]
    met = sum(r.get("requirements_met") or 0 for r in records)
    required = sum(r.get("requirements_total") or 0 for r in records)
    return {
        "tasks": n, "errors": sum(1 for r in records if r.get("error")),
        "checked": len(checked), "correct": correct, "accuracy_pct": pct(correct, len(checked)),
        "accuracy_ci95_pct": wilson_interval(correct, len(checked)),
        "seconds_per_task": round(sum(r.get("seconds") or 0.0 for r in records) / n, 1) if n else None,
        # None when the model reports no usage (a fake, or a server without usage): unknown, not zero
        "tokens_per_task": round(sum(counted) / len(counted)) if counted else None,
        "requirements_met": met, "requirements_total": required, "requirements_met_pct": pct(met, required),
        "plan_valid_first_pass_pct": pct(sum(1 for r in planned if r.get("plan_valid_first_pass")), len(planned))
        if planned else None,
        "with_python_pct": pct(sum(1 for r in records if r.get("has_python_step")), n)
        if any("has_python_step" in r for r in records) else None,
    }


def summarize_all(records: list[dict[str, Any]], systems) -> dict[str, dict[str, Any]]:
    return {s: summarize_system([r for r in records if r["system"] == s]) for s in systems}


def paired(records: list[dict[str, Any]], system: str, baseline: str) -> dict[str, int]:
    """On the tasks both systems ran: how many ``system`` got right where ``baseline`` was wrong (wins) and the
    reverse (losses)."""
    right = {(r["system"], r["index"]): bool(r.get("correct")) for r in records if r.get("correct") is not None}
    both = [i for (s, i) in right if s == system and (baseline, i) in right]
    return {"tasks": len(both), "wins": sum(right[(system, i)] and not right[(baseline, i)] for i in both),
            "losses": sum(right[(baseline, i)] and not right[(system, i)] for i in both)}


def _cell(value: Any, suffix: str = "") -> str:
    return "–" if value is None else f"{value}{suffix}"


def render(summary: dict[str, dict[str, Any]], *, writing: bool, meta: dict[str, str]) -> str:
    systems = list(summary)
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [("tasks (failed with an error)",
                                                                lambda s: f"{s['tasks']} ({s['errors']})")]
    if writing:
        rows.append(("requirements met", lambda s: f"{_cell(s['requirements_met_pct'], '%')} "
                                                   f"({s['requirements_met']}/{s['requirements_total']})"))
    else:
        rows.append(("right (95% Wilson interval)", lambda s: f"{s['correct']}/{s['checked']} = "
                     f"{_cell(s['accuracy_pct'], '%')}" + (f" ({ci[0]}-{ci[1]}%)" if (ci := s["accuracy_ci95_pct"]) else "")))
    rows += [("seconds per task", lambda s: _cell(s["seconds_per_task"])),
             ("generated tokens per task", lambda s: _cell(s["tokens_per_task"])),
             ("plans valid on the first pass", lambda s: _cell(s["plan_valid_first_pass_pct"], "%")),
             ("tasks with a Python step", lambda s: _cell(s["with_python_pct"], "%"))]
    lines = [f"- {key}: {value}" for key, value in meta.items()] + [""]
    lines.append("| | " + " | ".join(f"{LABELS.get(s, s)} (`{s}`)" for s in systems) + " |")
    lines.append("|---|" + "---:|" * len(systems))
    lines += [f"| {label} | " + " | ".join(cell(summary[s]) for s in systems) + " |" for label, cell in rows]
    return "\n".join(lines)


def machine() -> str:
    cpu = "unknown CPU"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"nproc {nproc}, {cpu}, load average {os.getloadavg()[0]:.2f} at the end"


def write_doc(path: Path, key: str, title: str, body: str) -> None:
    """Replace this bench's marked section of ``path`` (or append it), leaving the rest untouched."""
    begin, end = f"<!-- bench/vs_model_alone.py {key}: begin -->", f"<!-- bench/vs_model_alone.py {key}: end -->"
    section = f"{begin}\n## {title}\n\n{body.strip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------- command line


def read_done(out: Path, settings: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """The records of an earlier run into ``out`` with the same settings; a different run there is refused."""
    if not out.exists() or not out.read_text(encoding="utf-8").strip():
        return {}
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    if lines[0].get("settings") != settings:
        raise SystemExit(f"{out} holds a run with other settings ({lines[0].get('settings')}); choose another --out")
    return {(r["system"], r["index"]): r for r in lines[1:]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--writing", action="store_true", help=f"writing tasks ({WRITING_TASKS.name}) instead of numeric")
    p.add_argument("--tasks", help=f"tasks file (default {GSM8K_TASKS}, or with --writing {WRITING_TASKS})")
    p.add_argument("--model", help="model spec for load_chat_model (default: the default model)")
    p.add_argument("--limit", type=int, help="the first N tasks only")
    p.add_argument("--part", choices=sorted(PARTS), help="numeric: tune = tasks 1-40 (the only ones tuned on), "
                   "validate = tasks 41-100 (not tuned on)")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--systems", help="comma-separated subset (numeric: cot,program,hierplan; writing: direct,hierplan)")
    p.add_argument("--out", help="per-task results, JSON lines (default eval-out/vs-model-alone-<kind>-<stamp>.jsonl)")
    p.add_argument("--doc", action="store_true", help="replace this bench's section of docs/eval.md")
    args = p.parse_args(argv)

    from hierplan.eval.tasks import load_tasks

    kind = "writing" if args.writing else "numeric"
    allowed = WRITING_SYSTEMS if args.writing else NUMERIC_SYSTEMS
    systems = tuple(s.strip() for s in args.systems.split(",")) if args.systems else allowed
    if not systems or set(systems) - set(allowed):
        p.error(f"--systems: choose from {','.join(allowed)}")
    tasks_path = args.tasks or str(WRITING_TASKS if args.writing else GSM8K_TASKS)
    tasks = load_tasks(tasks_path)
    if args.part:
        tasks = tasks[PARTS[args.part]]
    tasks = tasks[:args.limit] if args.limit else tasks
    out = Path(args.out or ROOT / "eval-out" / f"vs-model-alone-{kind}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    settings = {"kind": kind, "tasks": str(Path(tasks_path).resolve()), "model": args.model, "seed": args.seed}
    done = read_done(out, settings)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not done:
        out.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")
    print(f"{len(tasks)} {kind} tasks x {','.join(systems)}; {len(done)} records already in {out}", file=sys.stderr)

    from langgraph.checkpoint.memory import InMemorySaver

    from hierplan.config import SamplingConfig
    from hierplan.graph.builder import build_graph
    from hierplan.models import load_chat_model
    from hierplan.tools import run_python

    model = load_chat_model(args.model)  # once, shared by every system
    graph = build_graph(model, InMemorySaver(), sampling=SamplingConfig(seed=args.seed))
    started = time.strftime("%Y-%m-%d %H:%M %Z")

    def on_record(record: dict[str, Any]) -> None:
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        verdict = (f"requirements {record['requirements_met']}/{record['requirements_total']}"
                   if "requirements_total" in record else f"{record['predicted']} vs {record['expected']}")
        print(f"[{record['index']}] {record['system']:>8} {verdict} {record['seconds']:.1f}s "
              f"{record['generated_tokens']} tokens{' ' + record['error'] if record.get('error') else ''}",
              file=sys.stderr, flush=True)

    records, partial = [], ""
    try:
        records = run_bench(tasks, systems, model=model, graph=graph, seed=args.seed, run_code=run_python,
                            done=done, on_record=on_record)
    except KeyboardInterrupt:  # what finished is in --out; summarise it, marked partial
        records = read_done(out, settings).values()
        partial = " **Partial: stopped before every task ran.**"
    summary = summarize_all(list(records), systems)
    meta = {"command": "`" + shlex.join(["python", "bench/vs_model_alone.py", *(argv or sys.argv[1:])]) + "`",
            "tasks": f"{len(tasks)} of `{Path(tasks_path).name}`, every system on the same loaded model "
                     f"({args.model or 'the default model'}), one process, order rotating per task{partial}",
            "machine": machine(), "started": started, "ended": time.strftime("%Y-%m-%d %H:%M %Z"),
            "per-task results": f"`{out}`"}
    body = render(summary, writing=args.writing, meta=meta)
    if not args.writing and {"hierplan", "program"} <= set(systems):
        pair = paired(list(records), "hierplan", "program")
        body += (f"\nPaired on {pair['tasks']} tasks against one program: hierplan right where it was wrong on "
                 f"{pair['wins']}, wrong where it was right on {pair['losses']}.\n")
    out.with_suffix(".summary.json").write_text(json.dumps({"meta": meta, "summary": summary}, indent=2) + "\n")
    if args.doc:
        title = f"hierplan vs the model alone: {'writing tasks' if args.writing else 'numeric tasks'}"
        write_doc(EVAL_DOC, kind, title, body)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
