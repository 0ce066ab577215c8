"""The LLM step node: answer one plan step from the goal, assumptions and earlier results."""

from __future__ import annotations

import time

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from hierplan.config import TASK_CONTEXT_CHARS, SamplingConfig
from hierplan.graph.state import AgentState, LlmStepsPayload, StepDict
from hierplan.nodes import prompts
from hierplan.nodes.context import asked, files_note, prior_results, step_request
from hierplan.nodes.events import emit
from hierplan.nodes.model_call import invoke_batch
from hierplan.options import RunOptions, run_options
from hierplan.schema import StepResult


def step_messages(state: LlmStepsPayload, step: StepDict) -> list:
    plan = state["plan"]
    system = prompts.STEP_SYSTEM.format(task=asked(state, TASK_CONTEXT_CHARS), goal=plan["goal"],
                                        assumptions="; ".join(plan["assumptions"]) or "none")
    user = step_request(prior_results(state, step), step) + files_note(state.get("files") or [])
    return [SystemMessage(system), HumanMessage(user)]


# What a step with tool "none" records: it needs no tool; its instruction is left to the final answer.
NO_TOOL_OUTPUT = "Left to the final answer: {instruction}"


def make_llm_step(model: BaseChatModel, base: SamplingConfig):
    """LLM steps that are ready together arrive in one payload and are generated in one batched pass; steps
    with tool "none" among them are recorded as done without a model call."""

    def llm_step(payload: LlmStepsPayload, runtime: Runtime[RunOptions]) -> AgentState:
        sampling = run_options(runtime.context).sampling(base)
        results = [StepResult(step_id=s["id"], title=s["title"], tool=s["tool"], output=NO_TOOL_OUTPUT.format(instruction=s["instruction"]),
                              ok=True).model_dump(mode="json") for s in payload["steps"] if s["tool"] == "none"]
        steps = [s for s in payload["steps"] if s["tool"] != "none"]
        if not steps:
            return {"results": results}
        emit("steps_started", step_ids=[s["id"] for s in steps], tool="llm", batch=len(steps))
        start = time.perf_counter()
        answers = invoke_batch(model, [step_messages(payload, step) for step in steps], sampling.llm_step,
                               node="llm_step", seed=sampling.seed, seed_key=tuple(s["id"] for s in steps),
                               stream=True, step_ids=[s["id"] for s in steps])
        seconds = round(time.perf_counter() - start, 3)
        for step, (text, call) in zip(steps, answers):
            output = text.strip()
            results.append(StepResult(
                step_id=step["id"], title=step["title"], tool=step["tool"], output=output,
                ok=bool(output), error=None if output else "the model returned an empty answer",
                calls=[call], seconds=seconds,
            ).model_dump(mode="json"))
        return {"results": results}

    return llm_step
