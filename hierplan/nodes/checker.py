"""The checker node: beside the planner, the whole-task programs a numeric task's answer is voted on with.

It starts with the planner (the graph sends the task to both), so the plan's last Python step finds its programs
ready (vote.py); with a GPU the engine answers both on its slots at once, on a CPU one after the other. A task
that asks for no quantity is not checked: the node returns at once, without a model call.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from hierplan.config import SamplingConfig
from hierplan.nodes.events import emit
from hierplan.nodes.tool_choice import is_numeric_task
from hierplan.nodes.vote import draw_checks


def make_checker(model: BaseChatModel, sampling: SamplingConfig, run_attempt):
    """``run_attempt(code)``: check and run one program on its own (python_step.run_attempt with its runner)."""

    def checker(state: dict[str, Any]) -> dict[str, Any]:
        if not is_numeric_task(state["task"]):
            return {}
        emit("node_started", node="checker")
        programs, calls = draw_checks(model, state["task"], sampling.code, run_attempt, seed=sampling.seed)
        return {"checks": [p.model_dump(mode="json") for p in programs], "calls": [c.model_dump() for c in calls]}

    return checker
