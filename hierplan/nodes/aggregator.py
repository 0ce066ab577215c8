"""The aggregator node: one final answer from the task, the plan and every step's result. What checks the
answer afterwards is drawn after it: answer_check for a numeric task, check_instructions for a writing one."""

from __future__ import annotations

from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from hierplan.config import AGGREGATOR_CONTEXT_CHARS, SamplingConfig
from hierplan.graph.state import AgentState
from hierplan.nodes import prompts
from hierplan.nodes.context import asked, aggregator_results, artifacts_note, format_results, plain_messages
from hierplan.nodes.events import emit
from hierplan.nodes.model_call import invoke_model
from hierplan.options import RunOptions, run_options
from hierplan.rules.answer import computations, numeric_instructions, prose_asked
from hierplan.rules.checklist import describe
from hierplan.rules.checks import CASE_KINDS, PLACED_KINDS, program_cased
from hierplan.rules.kind import NUMERIC


def requirements_note(requirements: list[dict]) -> str:
    """The task's requirements as a list for the writer ("" when none were read); a letter case for the whole
    answer is not among them but said to be the program's (rules.checks.CASE_KINDS), and what a program puts in
    place is not said at all (rules.checks.PLACED_KINDS)."""
    listed = [r for r in requirements if r.get("kind") not in (*CASE_KINDS, *PLACED_KINDS)]
    note = prompts.REQUIREMENTS_NOTE.format(items="\n".join(f"- {describe(r)}" for r in listed)) if listed else ""
    return note + (prompts.CASE_BY_PROGRAM if program_cased(requirements) else "")


def aggregator_messages(state: AgentState) -> list:
    results = state.get("results") or []
    if state["kind"] != NUMERIC:
        if state.get("plan_source") == "rule":
            # One piece of writing, planned by rule: drafted as the person asked it, so that the checks that follow
            # change only what breaks the task's instructions. Told the task as "Task:" with its requirements
            # listed, the draft read worse than the model's plain reply where no check changed it (the notebook).
            return plain_messages(asked(state))
        # a step left to the final answer (tool "none") is no material: shown, a small model copied its
        # instruction as the reply
        material = [r for r in results if r.get("tool") != "none"]
        notes = format_results(material, limit=AGGREGATOR_CONTEXT_CHARS, programs=True) + artifacts_note(results)
        return [SystemMessage(prompts.AGGREGATOR_WRITING_SYSTEM),
                HumanMessage(prompts.AGGREGATOR_WRITING_USER.format(
                    notes=prompts.AGGREGATOR_WRITING_NOTES.format(results=notes.strip()) if notes.strip() else "",
                    goal=prompts.AGGREGATOR_WRITING_GOAL.format(goal=state["plan"]["goal"]),
                    task=asked(state),
                    requirements=requirements_note(state.get("requirements") or [])))]
    if not computations(results):
        request = prompts.AGGREGATOR_REQUEST
    elif prose_asked(state["task"], bool(state.get("files"))):  # the working, in the form asked
        request = requirements_note(numeric_instructions(state["task"])) + prompts.AGGREGATOR_REQUEST_WORKING
    else:
        request = prompts.AGGREGATOR_REQUEST_COMPUTED
    user = prompts.AGGREGATOR_USER.format(
        task=asked(state), goal=state["plan"]["goal"],
        results=((aggregator_results(results, limit=AGGREGATOR_CONTEXT_CHARS) or "(no results)")
                 + artifacts_note(results)),
        request=request,
    )
    return [SystemMessage(prompts.AGGREGATOR_SYSTEM), HumanMessage(user)]


def make_aggregator(model: BaseChatModel, base: SamplingConfig):
    def aggregator(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        sampling = run_options(runtime.context).sampling(base)
        emit("node_started", node="aggregator")
        text, call = invoke_model(model, aggregator_messages(state), sampling.aggregator, node="aggregator",
                                  seed=sampling.seed, stream=True)
        return {"final": text.strip(), "calls": [call.model_dump()]}

    return aggregator


def after_aggregator(state: AgentState) -> Literal["answer_check", "check_instructions"]:
    """A numeric answer is checked against its computation; any other against the task's instructions."""
    return "answer_check" if state["kind"] == NUMERIC else "check_instructions"
