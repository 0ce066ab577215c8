"""hierplan against the same model alone on questions about tables (InfiAgent-DABench), one process, one run.

Two systems on the same loaded model: ``program`` (the model alone: one chat call, given the task and the same
preview of the table hierplan shows, writes one pandas program, run once in hierplan's sandbox with the table at
./data/NAME; its printed output is the answer) and ``hierplan`` (build_graph, in-memory checkpoints, the table
attached as ``hierplan run --file`` attaches it). The order of the systems alternates from question to question.

    python bench/vs_dabench.py tasks            # writes bench-out/dabench/{tune,validate}.jsonl (hierplan eval form)
    python bench/vs_dabench.py run --part validate --out bench-out/dabench-validate.jsonl
    python bench/vs_dabench.py summary bench-out/dabench-validate.jsonl
    python bench/vs_dabench.py programs bench-out/dabench-validate.jsonl   # each of hierplan's programs scored alone
    python bench/vs_dabench.py replay bench-out/dabench-own1-1.jsonl     # its failed programs again, with the fixes by rule

The task a system sees is the question, its constraints and its answer format, as the data set's README says.
Scored as the benchmark's own closed-form scorer does (hierplan.eval.scoring.score_named): every ``@name[value]``
of the answer; a question is right (ABQ) when all its named answers are. The parts are drawn once, before any
tuning (seed 40 over the dev ids): ``tune`` the first 25, ``validate`` the next 80, ``fresh`` the other 110 (kept
for a second validation once validate had been looked at); a part is never tuned on after it has been looked at.
``own1``, ``own2``, ``own3``: 60 new questions each in the same form over the dev tables (bench/data/own_tables/README.md),
written once every dev question had been looked at. The baseline prompt below is a baseline, not product.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vs_model_alone import call_seed, machine, one_call, paired, read_done, run_bench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DABENCH = ROOT.parent / "shared" / "eval" / "dabench"
TASKS_DIR = ROOT / "bench-out" / "dabench"
PART_SEED = 40
# fresh: the rest, drawn with the others but first run only after validate had been looked at (a second validation)
PARTS = {"tune": slice(0, 25), "validate": slice(25, 105), "fresh": slice(105, None)}
# Sets in DABench's form written for this project by helpers that did not read the product (their README says how),
# over the dev tables: run whole, in file order.
OWN = {part: ROOT / "bench" / "data" / "own_tables" / f"dabench_{part}.jsonl" for part in ("own1", "own2", "own3")}
SYSTEMS = ("program", "hierplan")

PROGRAM_SYSTEM = ("You answer questions about the user's data file by writing one Python program. The file is at "
                  "./data/{name}. Use pandas (numpy, scipy and scikit-learn are installed too). The program must "
                  "not read input. It prints the answer in exactly the format the task asks for. Reply with the "
                  "program only, in one ```python code block.")


def task_text(row: dict[str, Any]) -> str:
    """What a system is asked: the question, its constraints and its answer format."""
    return f"{row['question'].strip()}\n\nConstraints: {row['constraints'].strip()}\n\nAnswer format: " \
           f"{row['format'].strip()}"


def write_tasks(out: Path = TASKS_DIR) -> dict[str, Path]:
    """The dev questions as `hierplan eval` tasks (question, files, answers), split into the parts."""
    rows = [json.loads(line) for line in (DABENCH / "dev.jsonl").read_text().splitlines() if line.strip()]
    ids = sorted(r["id"] for r in rows)
    random.Random(PART_SEED).shuffle(ids)
    by_id = {r["id"]: r for r in rows}
    out.mkdir(parents=True, exist_ok=True)
    parts = {part: [by_id[i] for i in ids[cut]] for part, cut in PARTS.items()}
    parts.update({part: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
                  for part, path in OWN.items()})
    paths = {}
    for part, part_rows in parts.items():
        lines = [json.dumps({"id": r["id"], "question": task_text(r),
                             "files": [str((DABENCH / "tables" / r["file_name"]).resolve())],
                             "answers": r["answers"], "level": r["level"]})
                 for r in part_rows]
        paths[part] = out / f"{part}.jsonl"
        paths[part].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def run_program(model, task, seed: int, run_code) -> dict[str, Any]:
    """The model alone: one program, given the task and the table's preview, run once."""
    from hierplan.config import DATA_CODE_MAX_NEW_TOKENS  # hierplan's budget for a program over the user's files
    from hierplan.eval.scoring import score_named
    from hierplan.nodes.python_step import run_with_outputs
    from hierplan.rules.text import strip_code_fences
    from hierplan.store.files import process_store
    from hierplan.tools.files import sandbox_data

    [file] = task.files
    record: dict[str, Any] = {"final": None, "generated_tokens": None, "error": None}
    start = time.perf_counter()
    try:
        prompt = f"{task.question}\n\nThe file {file['name']} ({file['size']:,} bytes):\n{file['preview']}"
        text, record["generated_tokens"] = one_call(model, PROGRAM_SYSTEM.format(name=file["name"]), prompt,
                                                       DATA_CODE_MAX_NEW_TOKENS, call_seed(seed, "program", task.index))
        record["program"] = text
        # run as the model wrote it: no fixes by rule (hierplan's rules.repair.mend)
        attempt, _ = run_with_outputs(strip_code_fences(text), run_code, (),
                                      sandbox_data(task.files, process_store()), max_mends=0)
        record["program_ok"], record["program_error"] = attempt.ok, attempt.error
        record["final"] = attempt.stdout
    except Exception as exc:  # noqa: BLE001 - one question's failure must not end the run
        record["error"] = f"{type(exc).__name__}: {exc}"[:500]
    record["seconds"] = round(time.perf_counter() - start, 3)
    given, record["correct"], record["sub_right"] = score_named(record["final"], task.named)
    record["predicted"] = "; ".join(f"@{n}[{v}]" for n, v in given.items()) or None
    record["sub_total"] = len(task.named)
    return record


HIERPLAN_KEYS = ("final", "predicted", "correct", "sub_right", "sub_total", "seconds", "generated_tokens",
                 "plan_source", "steps", "python_steps", "python_ok", "model_calls", "error")


def programs_run(graph, thread_id: str) -> dict[str, Any]:
    """What the run's programs wrote and printed, and the vote: to read a question's losses afterwards."""
    values = graph.get_state({"configurable": {"thread_id": thread_id}}).values or {}

    def brief(attempt: dict[str, Any]) -> dict[str, Any]:
        return {"code": attempt.get("code"), "ok": attempt.get("ok"), "stdout": (attempt.get("stdout") or "")[:800],
                "error": (attempt.get("error") or "")[:400], "mended": attempt.get("mended") or []}

    steps = [brief(a) for r in values.get("results") or [] for a in r.get("attempts") or []]
    calls = [{k: c.get(k) for k in ("node", "prompt_tokens", "generated_tokens", "seconds")}
             for c in values.get("calls") or []]
    return {"steps": steps, "checks": [brief(a) for a in values.get("checks") or []], "vote": values.get("vote"),
            "calls": calls}


def make_run_one(ids: dict[int, int]):
    def run_one(system: str, task, *, model, graph, seed: int, run_code) -> dict[str, Any]:
        if system == "hierplan":
            from hierplan.eval.harness import evaluate_task

            full = evaluate_task(graph, task, f"dabench-{task.index}")
            body = {k: full.get(k) for k in HIERPLAN_KEYS}
            body["programs"] = programs_run(graph, f"dabench-{task.index}")
        else:
            body = run_program(model, task, seed, run_code)
        return {"system": system, "index": task.index, "id": ids[task.index], "expected": task.expected_answer,
                **body}

    return run_one


def summarize(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for s in SYSTEMS:
        rs = [r for r in records if r.get("system") == s]
        if not rs:
            continue
        right = sum(1 for r in rs if r.get("correct"))
        sub_right, sub_total = sum(r.get("sub_right") or 0 for r in rs), sum(r.get("sub_total") or 0 for r in rs)
        tokens = [r["generated_tokens"] for r in rs if r.get("generated_tokens") is not None]
        out[s] = {"questions": len(rs), "errors": sum(1 for r in rs if r.get("error")), "right": right,
                  "abq_pct": round(100 * right / len(rs), 1), "sub_right": sub_right, "sub_total": sub_total,
                  "sub_pct": round(100 * sub_right / sub_total, 1) if sub_total else None,
                  "seconds_per_question": round(sum(r.get("seconds") or 0 for r in rs) / len(rs), 1),
                  "tokens_per_question": round(sum(tokens) / len(tokens)) if tokens else None}
    return out


def render(summary: dict[str, dict[str, Any]], records: list[dict[str, Any]], meta: dict[str, str]) -> str:
    lines = [f"- {k}: {v}" for k, v in meta.items()] + ["", "| | model alone, one program (`program`) | hierplan |",
                                                         "|---|---:|---:|"]
    p, h = summary.get("program", {}), summary.get("hierplan", {})

    def cell(s, key, suffix=""):
        return "–" if s.get(key) is None else f"{s[key]}{suffix}"

    lines += [f"| questions (errors) | {cell(p, 'questions')} ({cell(p, 'errors')}) | {cell(h, 'questions')} "
              f"({cell(h, 'errors')}) |",
              f"| ABQ (all named answers right) | {cell(p, 'right')} = {cell(p, 'abq_pct', '%')} | "
              f"{cell(h, 'right')} = {cell(h, 'abq_pct', '%')} |",
              f"| named answers right | {cell(p, 'sub_right')}/{cell(p, 'sub_total')} = {cell(p, 'sub_pct', '%')} | "
              f"{cell(h, 'sub_right')}/{cell(h, 'sub_total')} = {cell(h, 'sub_pct', '%')} |",
              f"| seconds per question | {cell(p, 'seconds_per_question')} | {cell(h, 'seconds_per_question')} |",
              f"| generated tokens per question | {cell(p, 'tokens_per_question')} | "
              f"{cell(h, 'tokens_per_question')} |"]
    if p and h:
        pair = paired(records, "hierplan", "program")
        ratio = h["seconds_per_question"] / p["seconds_per_question"] if p["seconds_per_question"] else None
        lines += ["", f"Paired on {pair['tasks']} questions: hierplan right where the program was wrong on "
                      f"{pair['wins']}, wrong where it was right on {pair['losses']}; "
                      f"{ratio:.2f}x the program's seconds." if ratio else ""]
    return "\n".join(lines)


def read_programs(records: list[dict[str, Any]], tasks_path: Path) -> dict[str, Any]:
    """What hierplan's programs printed, each scored alone (the answer put into the task's template, as
    stated_answer does): per question a row (S right, s wrong, x failed; the step's attempts | the checker's
    programs), and counts: step repairs tried and right, questions some program answered right (an oracle's
    bound), questions where the kept answer was wrong while some program was right."""
    from hierplan.eval.scoring import score_named
    from hierplan.eval.tasks import load_tasks
    from hierplan.rules.template import fit_template

    tasks = {t.index: t for t in load_tasks(tasks_path, None)}
    rows, repairs, repaired_right, oracle, missed = {}, 0, 0, 0, 0
    for r in records:
        if r.get("system") != "hierplan" or not r.get("programs"):
            continue
        task = tasks[r["index"]]

        def right(a: dict[str, Any]) -> bool:
            return bool(a["ok"]) and score_named(fit_template(task.question, a["stdout"]), task.named)[1]

        steps, checks = r["programs"]["steps"], r["programs"]["checks"]
        marks = ["x" if not a["ok"] else "S" if right(a) else "s" for a in steps]
        marks += ["|"] + ["x" if not a["ok"] else "C" if right(a) else "c" for a in checks]
        rows[r["index"]] = "".join(marks)
        repairs += max(0, len(steps) - 1)
        repaired_right += sum(1 for a in steps[1:] if right(a))
        some = any(right(a) for a in steps + checks)
        oracle += some
        missed += some and not r.get("correct")
    return {"rows": rows, "step_repairs": repairs, "step_repairs_right": repaired_right,
            "some_program_right": oracle, "kept_wrong_while_some_right": missed, "questions": len(rows)}


def replay_failed(records: list[dict[str, Any]], tasks_path: Path) -> dict[str, Any]:
    """The programs of hierplan's that failed in a run, run again with the fixes by rule of the code as it is now
    (rules.repair.mend): per program a line (question, step or check, what was fixed, ran or failed, right), and
    counts: failed programs, fixed, ran once fixed, right once fixed, and questions hierplan got wrong on which a
    fixed program is right."""
    from hierplan.eval.scoring import score_named
    from hierplan.eval.tasks import load_tasks
    from hierplan.nodes.python_step import run_with_outputs
    from hierplan.rules.template import fit_template
    from hierplan.store.files import process_store
    from hierplan.tools import run_python
    from hierplan.tools.files import sandbox_data

    tasks = {t.index: t for t in load_tasks(tasks_path, None)}
    lines, failed, fixed, ran, right, wrong_questions = [], 0, 0, 0, 0, set()
    for r in records:
        if r.get("system") != "hierplan" or not r.get("programs"):
            continue
        task = tasks[r["index"]]
        data = sandbox_data(task.files, process_store())
        for kind in ("steps", "checks"):
            for a in r["programs"][kind]:
                if a["ok"] or not a.get("code") or a.get("mended"):
                    continue
                failed += 1
                attempt, _ = run_with_outputs(a["code"], run_python, (), data)
                if not attempt.mended:
                    continue
                fixed += 1
                ran += attempt.ok
                is_right = attempt.ok and score_named(fit_template(task.question, attempt.stdout), task.named)[1]
                right += is_right
                if is_right and not r.get("correct"):
                    wrong_questions.add(r["index"])
                lines.append(f"{r['index']:>3} {kind[:-1]:<5} {'ran' if attempt.ok else 'failed':<6} "
                             f"{'right' if is_right else '':<5} {'; '.join(attempt.mended)}")
    return {"lines": lines, "failed": failed, "fixed": fixed, "ran_once_fixed": ran, "right_once_fixed": right,
            "wrong_questions_with_a_fixed_program_right": sorted(wrong_questions)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("tasks")
    r = sub.add_parser("run")
    r.add_argument("--part", choices=sorted([*PARTS, *OWN]), required=True)
    r.add_argument("--limit", type=int)
    r.add_argument("--start", type=int, default=1,
                   help="the part's first question to run (1-based): the rest of a part an earlier run stopped in")
    r.add_argument("--model")
    r.add_argument("--seed", type=int, default=11)
    r.add_argument("--systems", default=",".join(SYSTEMS))
    r.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("summary")
    s.add_argument("out", type=Path)
    g = sub.add_parser("programs", help="what hierplan's programs printed, each scored alone")
    g.add_argument("out", type=Path)
    f = sub.add_parser("replay", help="hierplan's failed programs run again with today's fixes by rule")
    f.add_argument("out", type=Path)
    args = p.parse_args(argv)
    if args.command == "tasks":
        for part, path in write_tasks().items():
            print(f"{part}: {path}")
        return 0
    if args.command in ("programs", "replay"):
        lines = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()]
        part = lines[0]["settings"]["part"]
        tasks_path = TASKS_DIR / f"{part}.jsonl"
        tasks_path = tasks_path if tasks_path.exists() else write_tasks()[part]
        records = [x for x in lines[1:] if "system" in x]
        if args.command == "replay":
            found = replay_failed(records, tasks_path)
            print("\n".join(found.pop("lines")))
            print(json.dumps(found))
            return 0
        found = read_programs(records, tasks_path)
        for index, row in found.pop("rows").items():
            print(f"{index:>3} {row}")
        print(json.dumps(found))
        return 0
    if args.command == "summary":
        lines = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()]
        records = [x for x in lines[1:] if "system" in x]
        print(render(summarize(records), records, {"per-question results": f"`{args.out}`"}))
        return 0

    from langgraph.checkpoint.memory import InMemorySaver

    from hierplan.config import SamplingConfig
    from hierplan.eval.tasks import load_tasks
    from hierplan.graph.builder import build_graph
    from hierplan.models import load_chat_model
    from hierplan.tools import run_python

    systems = tuple(x.strip() for x in args.systems.split(","))
    if set(systems) - set(SYSTEMS):
        p.error(f"--systems: choose from {','.join(SYSTEMS)}")
    path = write_tasks()[args.part]
    tasks = load_tasks(path, args.limit)
    ids = {t.index: json.loads(line)["id"] for t, line in zip(tasks, path.read_text().splitlines())}
    tasks = [t for t in tasks if t.index >= args.start]
    settings = {"part": args.part, "model": args.model, "seed": args.seed,
                **({"start": args.start} if args.start != 1 else {})}
    done = read_done(args.out, settings)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not done:
        args.out.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")
    print(f"{len(tasks)} questions x {','.join(systems)}; {len(done)} records already in {args.out}", file=sys.stderr)
    model = load_chat_model(args.model)
    graph = build_graph(model, InMemorySaver(), sampling=SamplingConfig(seed=args.seed))
    started = time.strftime("%Y-%m-%d %H:%M %Z")

    def on_record(record: dict[str, Any]) -> None:
        with args.out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(f"[{record['index']}] {record['system']:>8} {record.get('sub_right')}/{record.get('sub_total')} "
              f"{'right' if record.get('correct') else 'wrong'} {record['seconds']:.1f}s "
              f"{record.get('generated_tokens')} tokens{' ' + record['error'] if record.get('error') else ''}",
              file=sys.stderr, flush=True)

    records = run_bench(tasks, systems, model=model, graph=graph, seed=args.seed, run_code=run_python, done=done,
                        on_record=on_record, run_one=make_run_one(ids))
    meta = {"command": "`" + shlex.join(["python", "bench/vs_dabench.py", *(argv or sys.argv[1:])]) + "`",
            "questions": f"{len(tasks)} of the {args.part} part, both systems on the same loaded model "
                         f"({args.model or 'the default model'}), one process, order alternating per question",
            "machine": machine(), "started": started, "ended": time.strftime("%Y-%m-%d %H:%M %Z"),
            "per-question results": f"`{args.out}`"}
    summary = summarize(records)
    args.out.with_suffix(".summary.json").write_text(json.dumps({"meta": meta, "summary": summary}, indent=2))
    print(render(summary, records, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
