"""The checker node: one program that solves a numeric task on its own (not from the plan's steps), run in the
sandbox, for the vote node to weigh against the plan's computed number.

The first visit draws the check at the code temperature; each later one, sent back by the vote while no number
has a majority, draws a tie-break warmer (config.WARM_TEMPERATURE: at the code temperature it mostly repeats the
check).
"""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Sequence
from typing import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from hierplan.config import WARM_TEMPERATURE, SamplingConfig
from hierplan.graph.state import AgentState, FileDict
from hierplan.nodes.context import asked, files_note
from hierplan.nodes import prompts
from hierplan.nodes.events import emit
from hierplan.nodes.model_call import invoke_model
from hierplan.options import RunOptions, run_options
from hierplan.rules.text import strip_code_fences
from hierplan.schema import CodeAttempt


def check_messages(task: str, outline: str | None = None, files: Sequence[FileDict] = ()) -> list[BaseMessage]:
    """The request for one program that solves the whole task (system prompt first and fixed: it caches);
    ``outline``: a model-written or edited plan's instruction, for its one Python step (rules.plan.plan_outline;
    a plan by rule sends none, and its step's request is this one). ``files``: the user's files, which the
    program reads (their previews follow the task)."""
    user = prompts.CHECK_USER.format(task=task)
    if outline:
        user += prompts.PLAN_OUTLINE.format(instruction=outline)
    if files:
        return [SystemMessage(prompts.DATA_CHECK_SYSTEM), HumanMessage(user + files_note(files, code=True))]
    return [SystemMessage(prompts.CHECK_SYSTEM), HumanMessage(user)]


def make_checker(model: BaseChatModel, base: SamplingConfig, run_alone: Callable[[str], CodeAttempt]):
    """``run_alone(code, files)``: check and run one program on its own, with the user's files (the run's
    FileDicts) at ./data/ (python_step.run_with_outputs with the runner)."""

    def checker(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        sampling = run_options(runtime.context).sampling(base)
        drawn = len(state.get("checks") or [])
        emit("node_started", node="checker")
        files = state.get("files") or []
        code = sampling.code_for(bool(files))
        if drawn == 0:
            node_sampling, seed_key = code, ("check", 0)
        else:
            node_sampling = replace(code, temperature=max(code.temperature, WARM_TEMPERATURE))
            seed_key = (state["vote"]["step_id"], "tie-break", drawn - 1)
        text, call = invoke_model(model, check_messages(asked(state), files=files), node_sampling,
                                  node="python_check", seed=sampling.seed, seed_key=seed_key)
        program = run_alone(strip_code_fences(text), files)
        return {"checks": [program.model_dump(mode="json")], "calls": [call.model_dump()]}

    return checker
