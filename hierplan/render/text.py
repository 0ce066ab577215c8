"""A run's text, as `hierplan show`, the live terminal output and the web page print it: plain strings (the
terminal adds the colours), each built from a run's state values or one of its records."""

from __future__ import annotations

import json
from typing import Any, Mapping

from hierplan.config import BUILTIN_TOOLS


def describe_model(model: Mapping[str, Any]) -> str:
    """"name on engine (quantization)" for a run's recorded model."""
    where = f" on {model['engine']}" if model.get("engine") else ""
    quant = f" ({model['quantization']})" if model.get("quantization") else ""
    return f"{model.get('name', '?')}{where}{quant}"


def describe_models(model: Mapping[str, Any] | None, models: Mapping[str, Any] | None = None) -> str:
    """A run's recorded model, or each role's where they differ: "planner: A; executor, aggregator: B"."""
    if not models:
        return describe_model(model) if model else ""
    by_model: dict[str, list[str]] = {}
    for role, info in models.items():
        by_model.setdefault(describe_model(info) if info else "?", []).append(role)
    return "; ".join(f"{', '.join(roles)}: {text}" for text, roles in by_model.items())


def format_kind(kind: str | None) -> str:
    """Which branch the run takes: the task's kind (numeric or writing), once decided."""
    return f"kind: {kind or 'not decided yet'}"


def format_memory(turns: int, remembered: str | None, recalled: int) -> str:
    """What the memory node did: the earlier turns seen, the fact kept, the memories recalled ("" when none)."""
    parts = []
    if turns:
        parts.append(f"saw {turns} earlier turn{'s' if turns != 1 else ''}")
    if remembered:
        parts.append(f"remembered: {remembered}")
    if recalled:
        parts.append(f"recalled {recalled} memor{'ies' if recalled != 1 else 'y'}")
    return "memory: " + "; ".join(parts) if parts else ""


def plan_lines(plan: Mapping[str, Any]) -> list[str]:
    """One line per step: "  1. [python] Compute the total"."""
    return [f"  {step['id']}. [{step['tool']}] {step['title']}" for step in plan.get("steps") or []]


def planned_tool_calls(plan: Mapping[str, Any], tools: Mapping[str, str] | None = None) -> list[str]:
    """One line per step that calls a registered tool: which tool, and what the step asks of it (its arguments
    are written when the step runs, from this instruction)."""
    return [f"  step {step['id']} calls {step['tool']}: {step['instruction']}"
            + (f" ({tools[step['tool']]})" if tools and tools.get(step["tool"]) else "")
            for step in plan.get("steps") or [] if step["tool"] not in BUILTIN_TOOLS]


def format_tool_call(result: Mapping[str, Any]) -> str | None:
    """A registered tool's step: "call: NAME {arguments}" (None for other steps, or when it was never called)."""
    if result.get("tool_args") is None:
        return None
    return f"call: {result['tool']} {json.dumps(result['tool_args'], ensure_ascii=False)}"


def revision_title(revision: Mapping[str, Any]) -> str:
    return f"Replan after step {revision['failed_step']} failed"


def revision_lines(revision: Mapping[str, Any]) -> list[str]:
    """One replan: the new steps, or why there were none."""
    lines = []
    if not revision["applied"]:
        reason = f" ({revision['parse_error']})" if revision.get("parse_error") else ""
        lines.append(f"the model gave no usable revision{reason}; the plan goes on as it was")
    return lines + plan_lines(revision)


def format_check(check: Mapping[str, Any]) -> str:
    """One line: what the independent programs of a step's check printed (the vote on its number)."""
    answers = ", ".join("failed" if a is None else str(a) for a in check.get("answers") or [])
    verdict = "kept" if not check.get("changed") else "changed to"
    by = check.get("decided_by")
    source = "" if by is None else (" (the step's own program)" if by == 0 else f" (whole-task program {by})")
    return (f"check: {check.get('programs')} programs printed {answers}; {check.get('agreed')} agree, "
            f"{verdict} {check.get('chosen')}{source}")


def format_answer_check(check: Mapping[str, Any]) -> str:
    """One line: does the answer's number agree with what the run computed (and was the answer corrected)."""
    verdict = "ok" if check.get("ok") else ("corrected" if check.get("corrected") else "MISMATCH")
    line = f"Answer check: {verdict} (answer {check.get('answer_number')}, computed {check.get('computed')})"
    return f"{line}: {check['note']}" if check.get("note") else line


def structured_lines(values: Mapping[str, Any]) -> list[str]:
    """The answer as build_graph's response_format (nodes.structured_answer): its JSON, then one line on how it
    was got; or the one line saying why no reply fit the schema. [] for a run without a schema."""
    check = values.get("structured_check")
    if not check:
        return []
    if not check["ok"]:
        return [f"Structured answer: none ({check['error']})"]
    tries = f", {check['attempts']} attempts" if check["attempts"] > 1 else ""
    return [json.dumps(values.get("structured_response"), ensure_ascii=False, indent=2),
            f"Structured answer: valid against {check['schema']}{tries}"]


def describe_instructions(check: Mapping[str, Any]) -> str:
    """One line: which of the task's checkable instructions the first answer broke, what was done about it,
    and what the kept answer still breaks."""
    n = len(check["instructions"])
    if not check["draft_problems"]:
        return f"instructions check: the answer met all {n} checkable instructions of the task"
    rewrites = [r for r in check["revisions"] if r.get("kind") != "by_program"]
    by_program = len(rewrites) < len(check["revisions"])
    done = ["fixed by program"] if by_program else []
    done += [f"written anew {len(rewrites)} time(s)"] if rewrites else []
    done += ["once from the task alone"] if any(r.get("kind") == "plain" for r in rewrites) else []
    what = ", ".join(done) or "not revised"
    state = "now meets all" if check["ok"] else f"still breaks {len(check['problems'])} of"
    return (f"instructions check: the first answer broke {len(check['draft_problems'])} of {n} checkable "
            f"instructions ({'; '.join(check['draft_problems'])}); {what}, it {state} {n}"
            + (f" ({'; '.join(check['problems'])})" if check["problems"] else ""))


def all_calls(values: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every model call of a run: the nodes' own and those each step result keeps."""
    calls = list(values.get("calls") or [])
    for result in values.get("results") or []:
        calls.extend(result.get("calls") or [])
    return calls


def format_calls(values: Mapping[str, Any]) -> str:
    """A table: calls, tokens and seconds per node and in total."""
    totals: dict[str, list[float]] = {}
    for c in all_calls(values):
        t = totals.setdefault(c["node"], [0, 0, 0, 0.0])
        t[0] += 1
        t[1] += c.get("prompt_tokens") or 0
        t[2] += c.get("generated_tokens") or 0
        t[3] += c["seconds"]
    lines = [f"{'node':<18} {'calls':>5} {'prompt tok':>10} {'gen tok':>8} {'seconds':>8}"]
    for node, (n, p, g, s) in totals.items():
        lines.append(f"{node:<18} {n:>5} {p:>10} {g:>8} {s:>8.1f}")
    n, p, g, s = (sum(t[i] for t in totals.values()) for i in range(4))
    lines.append(f"{'total':<18} {n:>5} {p:>10} {g:>8} {s:>8.1f}")
    return "\n".join(lines)


def format_artifact(artifact: Mapping[str, Any]) -> str:
    """One file a Python step saved under out/ (``hierplan show --artifacts DIR`` writes it out)."""
    return f"saved out/{artifact['name']} ({artifact['media_type']}, {artifact['size']:,} bytes)"


def step_lines(result: Mapping[str, Any]) -> list[str]:
    """One finished step as plain lines: "step 2 [inventory, ok]", then a registered tool's call with what it
    returned, or the step's output; then the files it saved under out/."""
    status = "ok" if result["ok"] else f"failed: {result.get('error')}"
    lines = [f"step {result['step_id']} [{result['tool']}, {status}]"]
    if call := format_tool_call(result):
        returned = result.get("tool_result")
        shown = returned if isinstance(returned, str) else json.dumps(returned, ensure_ascii=False)
        lines.append(f"    {call} -> {shown}")
    else:
        lines.append(f"    {str(result.get('output') or '').strip()}")
    return lines + [f"    {format_artifact(a)}" for a in result.get("artifacts") or []]
