"""What a node sees of the plan and earlier results."""

from __future__ import annotations

from typing import Any

from hierplan.config import STEP_CONTEXT_CHARS


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


def next_step(state: dict[str, Any]) -> dict[str, Any] | None:
    """The first plan step that has no result yet, or None when every step is done."""
    done = {r["step_id"] for r in state.get("results") or []}
    for step in state["plan"]["steps"]:
        if step["id"] not in done:
            return step
    return None


def prior_results(state: dict[str, Any], step: dict[str, Any]) -> list[dict[str, Any]]:
    """Results this step may use: those named in depends_on, or all earlier ones when it is unset."""
    wanted = step.get("depends_on")
    return [r for r in state.get("results") or []
            if r["step_id"] < step["id"] and (wanted is None or r["step_id"] in wanted)]


def format_results(results: list[dict[str, Any]], limit: int = STEP_CONTEXT_CHARS) -> str:
    """Each result's output, truncated to ``limit`` characters; failed steps are marked as such."""
    lines = []
    for r in results:
        status = "" if r["ok"] else " (FAILED: do not rely on it)"
        lines.append(f"Step {r['step_id']} - {r['title']}{status}:\n{truncate(r['output'], limit)}")
    return "\n\n".join(lines)
