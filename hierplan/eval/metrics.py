"""Per-task metrics read from the graph's final (or partial) state."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hierplan.rules.kind import NUMERIC, task_kind
from hierplan.rules.plan import RULE_SOURCE
from hierplan.schema import BUILTIN_TOOLS

NODES = ("planner", "llm_step", "python_step", "aggregator")
# A plan that parsed on the first try: the local grammar, a server-side constraint, or a free-text reply.
VALID_FIRST_PASS = ("constrained", "json_schema", "json_object", "tool_calling", "model")
ERROR_CHARS = 200


def all_calls(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Every model call of a run: the planner's and aggregator's (state ``calls``) and each step's."""
    calls = list(state.get("calls") or [])
    for result in state.get("results") or []:
        calls.extend(result.get("calls") or [])
    return calls


def _batch(result: dict[str, Any]) -> int:
    """How many steps shared this step's generate pass (LLM steps ready together are batched)."""
    return max([int(c.get("batch") or 1) for c in result.get("calls") or []] or [1])


def node_seconds(state: dict[str, Any]) -> dict[str, float]:
    """Wall time per node: model-call seconds for planner and aggregator, step seconds for the steps
    (a Python step's time includes its sandbox runs and repairs). LLM steps batched together all report the
    batch's seconds, so each counts its share and the batch is counted once. Steps that run in parallel
    overlap, so the nodes can add up to more than the task's wall time."""
    seconds: dict[str, float] = defaultdict(float)
    for call in state.get("calls") or []:
        seconds[call.get("node") or "?"] += float(call.get("seconds") or 0.0) / max(int(call.get("batch") or 1), 1)
    for result in state.get("results") or []:
        tool = result.get("tool")
        node = "python_step" if tool == "python" else "llm_step" if tool in BUILTIN_TOOLS else "tool_step"
        seconds[node] += float(result.get("seconds") or 0.0) / _batch(result)
    return {node: round(seconds.get(node, 0.0), 3) for node in (*NODES, *sorted(set(seconds) - set(NODES)))}


def node_tokens(state: dict[str, Any]) -> dict[str, int]:
    tokens: dict[str, int] = defaultdict(int)
    for call in all_calls(state):
        tokens[call.get("node") or "?"] += int(call.get("generated_tokens") or 0)
    return {node: tokens.get(node, 0) for node in (*NODES, *sorted(set(tokens) - set(NODES)))}


def tool_steps(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The results of steps that named a registered tool (an MCP server's, a LangChain tool)."""
    return [r for r in state.get("results") or [] if r.get("tool") not in (None, *BUILTIN_TOOLS)]


def tool_calls(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Every registered tool's call of a run, in step order: the tool, the arguments the model wrote, and the
    result (JSON-safe, as the step keeps it) or the error. A tool step whose arguments never validated made no
    call and is not listed (``tool_steps`` counts it)."""
    return [{"step_id": r.get("step_id"), "tool": r["tool"], "args": r["tool_args"], "ok": bool(r.get("ok")),
             "result": r.get("tool_result"), "error": r.get("error")}
            for r in tool_steps(state) if r.get("tool_args") is not None]


def attached_files(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The user's files that reached the run (its input's ``files``): name, size and sha256, no bytes."""
    return [{"name": f.get("name"), "size": f.get("size"), "sha256": f.get("sha256")} for f in state.get("files") or []]


def files_in_code(state: dict[str, Any]) -> list[str]:
    """The attached files whose name appears in a program a Python step ran (any attempt): the programs that
    could have read them. The sandbox does not trace reads; a program that builds a name bit by bit is missed."""
    programs = [a.get("code") or "" for r in state.get("results") or [] if r.get("tool") == "python"
                for a in r.get("attempts") or []]
    return [f["name"] for f in state.get("files") or [] if any(f["name"] in code for code in programs)]


def task_metrics(state: dict[str, Any]) -> dict[str, Any]:
    """Counts for one run. Works on a partial state too (a run that raised): missing parts count as 0/None."""
    plan = state.get("plan") or {}
    results = state.get("results") or []
    source = state.get("plan_source")
    python = [r for r in results if r.get("tool") == "python"]
    calls = all_calls(state)
    python_planned = sum(1 for s in plan.get("steps") or [] if s.get("tool") == "python")
    return {
        "numeric_task": (state.get("kind") or task_kind(state["task"])) == NUMERIC if state.get("task") else None,
        "plan_source": source,
        # a plan written by rule (rules.plan) asked the model for nothing: not a model's plan, valid or not
        "plan_valid_first_pass": None if source in (None, RULE_SOURCE) else source in VALID_FIRST_PASS,
        "plan_failures": len(state.get("plan_failures") or []),
        "plan_errors": [f"{f.get('source')}: {(f.get('error') or '')[:ERROR_CHARS]}"
                        for f in state.get("plan_failures") or []],
        "steps": len(plan.get("steps") or []),
        "steps_done": len(results),
        "python_steps": python_planned,
        "python_steps_run": len(python),
        "has_python_step": python_planned > 0 or bool(python),
        "python_ok_first_try": sum(1 for r in python if (r.get("attempts") or [{}])[0].get("ok")),
        "python_ok": sum(1 for r in python if r.get("ok")),
        "checks": sum(1 for r in python if r.get("check")),
        "checks_changed": sum(1 for r in python if (r.get("check") or {}).get("changed")),
        "python_attempts": sum(len(r.get("attempts") or []) for r in python),
        "python_errors": [(a.get("error") or "")[:ERROR_CHARS] for r in python for a in r.get("attempts") or []
                          if not a.get("ok")],
        "model_calls": len(calls),
        "calls_at_budget": sum(1 for c in calls if c.get("finish_reason") == "length"),
        "generated_tokens": sum(int(c.get("generated_tokens") or 0) for c in calls),
        "node_seconds": node_seconds(state),
        "node_tokens": node_tokens(state),
        "answer_check": state.get("answer_check"),
        "files": attached_files(state),
        "files_in_code": files_in_code(state),
        "tool_steps": len(tool_steps(state)),
        "tool_calls": tool_calls(state),
    }
