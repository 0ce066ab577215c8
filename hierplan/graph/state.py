"""The graph's state: a TypedDict of JSON-safe values, validated through hierplan.schema models."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


def merge_results(existing: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append step results; a result for a step already present replaces it, so a re-run never duplicates.

    Kept in plan order (by step id) whatever order results land in.
    """
    by_step = {r["step_id"]: r for r in existing or []}
    for result in new or []:
        by_step[result["step_id"]] = result
    return [by_step[k] for k in sorted(by_step)]


class InputState(TypedDict):
    task: str
    """What the user asked for."""


class AgentState(InputState, total=False):
    plan: dict[str, Any]
    """The plan (hierplan.schema.Plan as a dict)."""
    plan_source: str
    """Which path produced the plan: constrained, model, retry or fallback."""
    plan_failures: list[dict[str, Any]]
    """Raw text and parse error of each planner attempt that did not give a valid plan."""
    results: Annotated[list[dict[str, Any]], merge_results]
    """One hierplan.schema.StepResult dict per executed step, in plan order."""
    approval: str
    """With approve=True: approved, edited or rejected."""
    replans: Annotated[list[dict[str, Any]], operator.add]
    """Every revision after a failed step: failed_step, error, raw reply, applied, the new steps."""
    checks: list[dict[str, Any]]
    """For a numeric task: the whole-task programs the checker drew beside the planner (hierplan.schema.
    CodeAttempt dicts), which the last Python step's number is voted on with (hierplan.nodes.vote)."""
    calls: Annotated[list[dict[str, Any]], operator.add]
    """Model calls of the planner, replanner and aggregator (steps keep theirs in their result)."""
    final: str
    """The aggregator's answer."""
    answer_check: dict[str, Any]
    """For a numeric task with a successful computation: whether the answer's last number equals the last
    computed one ({"ok", "answer_number", "computed", "step_id", "note"}; hierplan.nodes.answer_check)."""
    instruction_check: dict[str, Any]
    """For a task that states checkable instructions (counts, lengths, forbidden words, ...): what the first
    answer broke, each revision round, and what the kept answer still breaks (hierplan.nodes.revise)."""
