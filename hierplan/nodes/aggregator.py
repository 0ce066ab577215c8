"""The aggregator node: one final answer from the task, the plan and every step's result."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from hierplan.config import AGGREGATOR_CONTEXT_CHARS, SamplingConfig
from hierplan.nodes import prompts
from hierplan.nodes.answer_check import check_answer, computations
from hierplan.nodes.context import aggregator_results, format_results
from hierplan.nodes.events import emit
from hierplan.nodes.model_call import invoke_model
from hierplan.nodes.revise import revise
from hierplan.nodes.tool_choice import is_numeric_task


FINAL_LINE = "Final answer: {value}"
FINAL_LINE_RE = re.compile(r"\s*\**final answer\**\s*:", re.IGNORECASE)


def aggregator_messages(state: dict[str, Any]) -> list:
    results = state.get("results") or []
    if not is_numeric_task(state["task"]):
        notes = format_results(results, limit=AGGREGATOR_CONTEXT_CHARS, programs=True) or "(no results)"
        return [SystemMessage(prompts.AGGREGATOR_WRITING_SYSTEM),
                HumanMessage(prompts.AGGREGATOR_WRITING_USER.format(results=notes, goal=state["plan"]["goal"],
                                                                           task=state["task"]))]
    user = prompts.AGGREGATOR_USER.format(
        task=state["task"], goal=state["plan"]["goal"],
        results=aggregator_results(results, limit=AGGREGATOR_CONTEXT_CHARS) or "(no results)",
        request=prompts.AGGREGATOR_REQUEST_COMPUTED if computations(results) else prompts.AGGREGATOR_REQUEST,
    )
    return [SystemMessage(prompts.AGGREGATOR_SYSTEM), HumanMessage(user)]


def make_aggregator(model: BaseChatModel, sampling: SamplingConfig):
    def aggregator(state: dict[str, Any]) -> dict[str, Any]:
        emit("node_started", node="aggregator")
        text, call = invoke_model(model, aggregator_messages(state), sampling.aggregator, node="aggregator",
                                  seed=sampling.seed, on_text=lambda t: emit("final_token", text=t))
        final = text.strip()
        update: dict[str, Any] = {"final": final, "calls": [call.model_dump()]}
        check = check_answer(state["task"], final, state.get("results") or [])
        if check is not None:
            if not check["ok"] and not check["other_unit"]:
                # The computation is exact and was checked (vote.py); prose that ends on another number is the
                # model redoing arithmetic in words. The answer keeps the prose and ends on the computed value.
                kept = [line for line in final.splitlines() if not FINAL_LINE_RE.match(line)]
                final = update["final"] = "\n".join([*kept, FINAL_LINE.format(value=check["computed"])]).strip()
                check = {**check, "corrected": True,
                         "note": check["note"] + "; the answer now ends with the computed value"}
            update["answer_check"] = check
        elif not is_numeric_task(state["task"]):  # a numeric answer is checked against its computation instead
            final, checked, calls = revise(model, sampling.aggregator, state["task"], final, seed=sampling.seed)
            update.update(final=final, instruction_check=checked, calls=update["calls"] + calls)
        return update

    return aggregator
