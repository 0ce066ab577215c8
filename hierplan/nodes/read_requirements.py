"""The read_requirements node: a writing task's requirements about its answer, read by the regex readers
(rules.instructions) and by the model under the grammar (schema.Checklist), the model's items kept only where the
task bears them out (rules.checklist). check_instructions checks the answer against this list, and the one-step
plan of a single piece of writing carries it to the writer.

A model failure (no structured output, a reply that does not validate) leaves the regex readers' list: the run
goes on, and the call is recorded."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import ValidationError

from hierplan.config import READ_MAX_NEW_TOKENS, SamplingConfig
from hierplan.graph.state import AgentState
from hierplan.nodes import prompts
from hierplan.nodes.context import file_names
from hierplan.nodes.events import emit
from hierplan.nodes.json_extract import NoJSONFound, extract_json_object
from hierplan.nodes.model_call import structured_or_text
from hierplan.options import RunOptions, run_options
from hierplan.rules.checklist import grounded, merge
from hierplan.rules.instructions import read_instructions
from hierplan.rules.plan import planned_by_rule
from hierplan.schema import Checklist


def requirement_messages(task: str) -> list:
    example_task, example = prompts.READ_REQUIREMENTS_EXAMPLE
    return [SystemMessage(prompts.READ_REQUIREMENTS_SYSTEM),
            HumanMessage(prompts.READ_REQUIREMENTS_USER.format(task=example_task)),
            AIMessage(json.dumps(example, separators=(",", ":"), ensure_ascii=False)),
            HumanMessage(prompts.READ_REQUIREMENTS_USER.format(task=task))]


def parse_checklist(text: str) -> list[dict]:
    """The items of a checklist reply; [] when it holds none that validate."""
    try:
        return [r.model_dump() for r in Checklist.model_validate(extract_json_object(text)).requirements]
    except (NoJSONFound, ValidationError, ValueError):
        return []


def make_read_requirements(model: BaseChatModel, base: SamplingConfig):
    def read_requirements(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        options = run_options(runtime.context)
        sampling = options.sampling(base)
        task = state["task"]
        emit("node_started", node="read_requirements")
        # greedy, and within the run's cap (sampling.planner carries --max-new-tokens when one is given)
        reading = replace(sampling.planner, temperature=0.0,
                          max_new_tokens=min(READ_MAX_NEW_TOKENS, sampling.planner.max_new_tokens))
        got = structured_or_text(model, requirement_messages(task), reading, Checklist, constrain=options.constrain,
                                 node="read_requirements", seed=sampling.seed)
        items = ([r.model_dump() for r in got.parsed.requirements] if got.parsed is not None
                 else parse_checklist(got.text))
        by_model = [g for g in (grounded(item, task) for item in items) if g is not None]
        requirements = merge(read_instructions(task), by_model)
        emit("requirements", requirements=requirements, read_by_model=len(by_model), offered_by_model=len(items))
        return {"requirements": requirements, "calls": [got.call.model_dump()]}

    return read_requirements


def make_after_requirements(registered: tuple[str, ...] = ()):
    def after_requirements(state: AgentState, runtime: Runtime[RunOptions]) -> Literal["planner", "whole_task_plan"]:
        """One piece of writing is planned by rule (rules.plan rule 1b), a deliverable with parts too unless the
        run's ``split_writing`` lets the model plan it."""
        split = run_options(runtime.context).split_writing
        if planned_by_rule(state["kind"], state["task"], file_names(state), registered, split):
            return "whole_task_plan"
        return "planner"

    return after_requirements
