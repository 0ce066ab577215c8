"""Outputs: results.jsonl (one object per task, written as each task ends) and summary.md (totals)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from hierplan.eval.metrics import NODES

PLAN_SOURCES = ("rule", "constrained", "model", "retry", "fallback")
ORPHANS_KEY = "orphaned_mcp_processes"
"""Measured after the run, not read from the records (hierplan.eval.orphans): kept when the summary is rewritten."""
AFTER_RUN_KEYS = (ORPHANS_KEY,)


class ResultsWriter:
    """Appends one JSON line per task and flushes, so a killed evaluation keeps what it finished."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _pct(num: int, den: int) -> float | None:
    return round(100.0 * num / den, 1) if den else None


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion, in percent (95% with the default z); None when n is 0.
    Unlike the normal approximation it stays inside 0..100 and is usable at 0 or n successes."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return round(100 * max(centre - half, 0.0), 1), round(100 * min(centre + half, 1.0), 1)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over task records. Percentages are None when their denominator is 0."""
    n = len(records)
    checked = [r for r in records if r.get("correct") is not None]
    planned = [r for r in records if r.get("plan_source") is not None]
    python_run = sum(r.get("python_steps_run") or 0 for r in records)
    first = sum(r.get("python_ok_first_try") or 0 for r in records)
    ok = sum(r.get("python_ok") or 0 for r in records)
    seconds = round(sum(r.get("seconds") or 0.0 for r in records), 1)
    node_seconds: dict[str, float] = {}
    for r in records:
        for node, s in (r.get("node_seconds") or {}).items():
            node_seconds[node] = round(node_seconds.get(node, 0.0) + s, 1)
    tokens = sum(r.get("generated_tokens") or 0 for r in records)
    correct = sum(1 for r in checked if r["correct"])
    with_python = sum(1 for r in records if r.get("has_python_step"))
    checks = [r["answer_check"] for r in records if r.get("answer_check")]
    writing = [r for r in records if r.get("requirements_total")]
    met = sum(r["requirements_met"] for r in writing)
    required = sum(r["requirements_total"] for r in writing)
    writing_python = sum(1 for r in writing if r.get("has_python_step"))
    calls = [c for r in records for c in r.get("tool_calls") or []]
    needing = [r for r in records if r.get("needs_tools")]
    named = [r for r in records if r.get("sub_total")]
    sub_right, sub_total = sum(r["sub_right"] for r in named), sum(r["sub_total"] for r in named)
    return {
        "tasks": n,
        "errors": sum(1 for r in records if r.get("error")),
        "checked": len(checked),
        "correct": correct,
        "accuracy_pct": _pct(correct, len(checked)),
        "accuracy_ci95_pct": wilson_interval(correct, len(checked)),
        # tasks with named answers: accuracy above is by question (all names right); this is by name
        "sub_answers_right": sub_right, "sub_answers": sub_total,
        "sub_answers_pct": _pct(sub_right, sub_total),
        "numeric_tasks": sum(1 for r in records if r.get("numeric_task")),
        "tasks_with_python": with_python,
        "tasks_with_python_pct": _pct(with_python, n),
        "plan_valid_first_pass_pct": _pct(sum(1 for r in planned if r.get("plan_valid_first_pass")),
                                          sum(1 for r in planned if r.get("plan_valid_first_pass") is not None)),
        "plan_sources": dict(Counter(r["plan_source"] for r in planned)),
        "steps": sum(r.get("steps") or 0 for r in records),
        "python_steps": python_run,
        "python_ok_first_try": first,
        "python_ok": ok,
        "checks": sum(r.get("checks") or 0 for r in records),
        "checks_changed": sum(r.get("checks_changed") or 0 for r in records),
        "python_ok_first_try_pct": _pct(first, python_run),
        "python_ok_pct": _pct(ok, python_run),
        # Writing tasks (records with requirements): the share of requirements met, and of tasks with a
        # Python step (a writing task should not need one).
        "requirement_tasks": len(writing),
        "requirements_met": met,
        "requirements_total": required,
        "requirements_met_pct": _pct(met, required),
        "requirement_tasks_all_met": sum(1 for r in writing if r["requirements_met"] == r["requirements_total"]),
        "requirement_tasks_with_python": writing_python,
        "requirement_tasks_with_python_pct": _pct(writing_python, len(writing)),
        # The user's tools and data: tool calls made (and failed), files attached to runs and withheld from them.
        "tool_steps": sum(r.get("tool_steps") or 0 for r in records),
        "tool_calls": len(calls),
        "tool_calls_failed": sum(1 for c in calls if not c.get("ok")),
        "tasks_with_tool_calls": sum(1 for r in records if r.get("tool_calls")),
        "tasks_needing_tools": len(needing),
        "tasks_needing_tools_called": sum(1 for r in needing if r.get("needed_tools_called")),
        "files_attached": sum(len(r.get("files") or []) for r in records),
        "files_in_code": sum(len(r.get("files_in_code") or []) for r in records),
        "tasks_with_files": sum(1 for r in records if r.get("files")),
        "files_withheld": sum(len(r.get("files_withheld") or []) for r in records),
        "answer_checks": len(checks),
        "answer_check_contradictions": sum(1 for c in checks if not c.get("ok")),
        "model_calls": sum(r.get("model_calls") or 0 for r in records),
        "calls_at_budget": sum(r.get("calls_at_budget") or 0 for r in records),
        "generated_tokens": tokens,
        "tokens_per_task": round(tokens / n) if n else None,
        "seconds": seconds,
        "seconds_per_task": round(seconds / n, 1) if n else None,
        "node_seconds": node_seconds,
    }


def _fmt(value: Any, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value}{suffix}"


def render_summary(summary: dict[str, Any], meta: dict[str, Any] | None = None) -> str:
    """summary.md: a header with what was run, then one Markdown table of the totals."""
    s = summary
    sources = ", ".join(f"{k} {s['plan_sources'][k]}" for k in (*PLAN_SOURCES, *sorted(set(s["plan_sources"]) - set(PLAN_SOURCES)))
                        if s["plan_sources"].get(k)) or "none"
    nodes = ", ".join(f"{k} {v}" for k, v in s["node_seconds"].items() if k in NODES or v) or "none"
    rows = [
        ("tasks", f"{s['tasks']} ({s['errors']} failed with an error)"),
        ("accuracy", f"{_fmt(s['accuracy_pct'], '%')} ({s['correct']}/{s['checked']})"
         + (f", 95% Wilson interval {ci[0]}-{ci[1]}%" if (ci := s.get("accuracy_ci95_pct")) else "")),
        *([("named answers right (by name; accuracy counts a task when all are)",
            f"{_fmt(s['sub_answers_pct'], '%')} ({s['sub_answers_right']}/{s['sub_answers']})")]
          if s.get("sub_answers") else []),
        ("plan valid on first pass", _fmt(s["plan_valid_first_pass_pct"], "%")),
        ("plan sources", sources),
        ("steps (python)", f"{s['steps']} ({s['python_steps']})"),
        ("tasks with at least one Python step",
         f"{_fmt(s.get('tasks_with_python_pct'), '%')} ({s.get('tasks_with_python')}/{s['tasks']}; "
         f"{s.get('numeric_tasks')} ask for a quantity)"),
        ("python ok first try", f"{_fmt(s['python_ok_first_try_pct'], '%')} ({s['python_ok_first_try']}/{s['python_steps']})"),
        ("python ok after repair", f"{_fmt(s['python_ok_pct'], '%')} ({s['python_ok']}/{s['python_steps']})"),
        ("computed answers checked by whole-task programs (number changed by the vote)",
         f"{s.get('checks', 0)} ({s.get('checks_changed', 0)})"),
        ("answer contradicts the last computation", f"{s.get('answer_check_contradictions')} of "
         f"{s.get('answer_checks')} checked"),
        ("model calls (ended at the token budget)", f"{s.get('model_calls')} ({s.get('calls_at_budget')})"),
        ("generated tokens (per task)", f"{s['generated_tokens']} ({_fmt(s['tokens_per_task'])})"),
        ("seconds total (per task)", f"{s['seconds']} ({_fmt(s['seconds_per_task'])})"),
        ("seconds per node", nodes),
    ]
    if s.get("requirement_tasks"):
        rows[2:2] = [
            ("requirements met (writing tasks)", f"{_fmt(s['requirements_met_pct'], '%')} ({s['requirements_met']}/"
             f"{s['requirements_total']}; all met in {s['requirement_tasks_all_met']}/{s['requirement_tasks']} tasks)"),
            ("writing tasks with a Python step", f"{_fmt(s['requirement_tasks_with_python_pct'], '%')} "
             f"({s['requirement_tasks_with_python']}/{s['requirement_tasks']})"),
        ]
    if (s.get("tool_steps") or s.get("files_attached") or s.get("files_withheld") or s.get("tasks_needing_tools")
            or ORPHANS_KEY in s):
        rows[2:2] = tools_rows(s)
    lines = ["# Evaluation summary", ""]
    for key, value in (meta or {}).items():
        lines.append(f"- {key}: {value}")
    if meta:
        lines.append("")
    lines += ["| metric | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows), ""]
    return "\n".join(lines)


def tools_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The summary's rows on the user's tools and data (shown when a task had files or tool steps, or MCP servers
    were given)."""
    rows = [
        ("tool calls made (failed)", f"{s.get('tool_calls', 0)} ({s.get('tool_calls_failed', 0)}) in "
         f"{s.get('tasks_with_tool_calls', 0)}/{s['tasks']} tasks; {s.get('tool_steps', 0)} tool steps"),
        ("files attached (named in a program)", f"{s.get('files_attached', 0)} ({s.get('files_in_code', 0)}) in "
         f"{s.get('tasks_with_files', 0)}/{s['tasks']} tasks"),
    ]
    if s.get("tasks_needing_tools"):
        rows.append(("tasks that need a tool and called it",
                     f"{s['tasks_needing_tools_called']}/{s['tasks_needing_tools']}"))
    if s.get("files_withheld"):
        rows.append(("files withheld (--withhold)", str(s["files_withheld"])))
    if ORPHANS_KEY in s:
        left = s[ORPHANS_KEY]
        rows.append(("MCP server processes left after the run", "not checked (no /proc)" if left is None else str(left)))
    return rows


def write_summary(path: str | Path, records: list[dict[str, Any]], meta: dict[str, Any] | None = None,
                  after: dict[str, Any] | None = None) -> dict:
    """Totals of ``records`` (and ``after``: what was measured after the run, AFTER_RUN_KEYS) to summary.md."""
    summary = {**summarize(records), **(after or {})}
    Path(path).write_text(render_summary(summary, meta), encoding="utf-8")
    return summary


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """The records of a results.jsonl (e.g. of an evaluation that was killed before it wrote its summary)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    """``python -m hierplan.eval DIR``: (re)write DIR/summary.md from DIR/results.jsonl."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m hierplan.eval DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    records = read_results(folder / "results.jsonl")
    meta, after = {}, {}
    if (folder / "summary.json").exists():
        saved = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        meta = saved.get("meta", {})
        after = {k: v for k, v in (saved.get("summary") or {}).items() if k in AFTER_RUN_KEYS}
    summary = write_summary(folder / "summary.md", records, meta, after)
    (folder / "summary.json").write_text(json.dumps({"meta": meta, "summary": summary}, indent=2) + "\n",
                                         encoding="utf-8")
    print(render_summary(summary, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
