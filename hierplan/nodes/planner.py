"""The planner node: task -> validated plan, by constrained decoding, parsing, a strict retry, or a fallback."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from pydantic import ValidationError

from hierplan.config import RETRY_TEMPERATURE, SamplingConfig
from hierplan.graph.state import AgentState, PlanFailureDict
from hierplan.nodes import prompts
from hierplan.nodes.context import asked, file_names, files_note, tools_offered
from hierplan.nodes.events import emit
from hierplan.nodes.json_extract import NoJSONFound, extract_json_object
from hierplan.nodes.model_call import invoke_model, invoke_structured
from hierplan.options import RunOptions, run_options
from hierplan.rules.kind import WRITING
from hierplan.rules.plan import RULE_SOURCE, plan_size, whole_task_plan
from hierplan.tools.files import preview
from hierplan.schema import (BUILTIN_TOOLS, MAX_GOAL_CHARS, Plan, Revision, Step, plan_models,
                             short_error)

def fallback_plan(task: str) -> Plan:
    """The original tutorial's fixed plan: analyse, execute, refine, all LLM steps."""
    goal = task.strip()[:MAX_GOAL_CHARS] or "Complete the task"
    return Plan(
        goal=goal,
        assumptions=["The model could not produce a valid plan; a generic three-step plan is used."],
        steps=[
            Step(id=1, title="Analyse the task", tool="llm",
                 instruction="Identify the requirements, constraints and what a complete answer must contain.",
                 expected_output="A short list of requirements and constraints."),
            Step(id=2, title="Execute", tool="llm",
                 instruction="Produce the main content or solution for the task, using the analysis.",
                 expected_output="A draft answer that covers every requirement."),
            Step(id=3, title="Refine", tool="llm",
                 instruction="Check the draft against the requirements, fix errors and make it clear and complete.",
                 expected_output="The refined answer."),
        ],
    )


def parse_plan(text: str, schema: type[Plan] | type[Revision] = Plan, tools: Sequence[str] = ()):
    """Parse and validate a plan (or a replanner's Revision) from model text; tool names (the built-in ones and
    the registered ``tools``) are normalised: spaces and case.
    Raises ValueError (NoJSONFound, ValidationError) with a readable reason."""
    data = extract_json_object(text)
    names = {name.lower(): name for name in (*BUILTIN_TOOLS, *tools)}
    for step in data.get("steps") or []:
        if isinstance(step, dict) and isinstance(step.get("tool"), str):
            written = step["tool"].strip()
            step["tool"] = names.get(written.lower(), written)
    return schema.model_validate(data)


# How the model constrained a structured plan (response_metadata["hierplan_structured"]) -> plan_source.
# "none": a model server refused every structured request shape, so the reply is the text path's ("model").
STRUCTURED_SOURCES = {"grammar": "constrained", "json_schema": "json_schema", "json_object": "json_object",
                      "tool_calling": "tool_calling", "none": "model"}


def whole_task_planner(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
    """The plan of a task one step does (rules.plan rule 1: a question one program answers, or one piece of
    writing), written by rule: no model call."""
    emit("planning", attempt="rule", max_steps=1)
    plan = whole_task_plan(state["task"], state["kind"], state.get("requirements"), file_names(state),
                           run_options(runtime.context).split_writing)
    return {"plan": plan, "plan_source": RULE_SOURCE, "plan_reason": plan["steps"][0]["tool_reason"],
            "plan_failures": [], "calls": []}


def make_planner(model: BaseChatModel, base: SamplingConfig, tools: Sequence[BaseTool] = ()):
    """Build the planner node. The run's ``constrain=False`` turns structured (constrained) planning off.

    With ``constrain``, the first attempt asks ``model.with_structured_output(DraftPlan)``; a model without it
    (NotImplementedError) gets the plain text prompt instead. Either way a failed first attempt gets one
    stricter retry at temperature 0, then the fallback plan.

    ``tools``: registered tools, offered after the task (name and description); a step may name one, and the
    plan models (the grammar and a server's schema included) take their names (schema.plan_models).
    """

    with_tools = tool_example_turns() if tools else []
    # by kind, then with files or without: the examples a run is shown are fixed, so the engine reuses their prefix.
    # Those with files are made at a run's first plan with files: their file's preview imports pandas, which a graph
    # only drawn or read (`hierplan graph`, `--help`) never needs.
    examples = {(kind, False): example_turns(kind) + with_tools for kind in prompts.PLANNER_EXAMPLES}
    names = tuple(t.name for t in tools)
    models = plan_models(names)
    offered = tools_offered(tools)

    def planner(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        options = run_options(runtime.context)
        sampling = options.sampling(base)
        task = state["task"]
        kind = state.get("kind") or WRITING
        files = bool(state.get("files"))
        if (kind, files) not in examples:
            examples[kind, files] = example_turns(kind) + file_example_turns() + with_tools
        shown = examples[kind, files]
        # a task one step does is planned under a one-step grammar (rules.plan): the model cannot split it
        bound, reason = plan_size(kind, task, file_names(state), names, options.split_writing)
        failures: list[PlanFailureDict] = []
        calls = []
        user = HumanMessage(prompts.PLANNER_USER.format(task=asked(state)) + files_note(state.get("files") or []) + offered)
        first = None
        if options.constrain:
            got = invoke_structured(model, [SystemMessage(prompts.PLANNER_SYSTEM), *shown, user],
                                    sampling.planner, models.draft,
                                    node="planner", seed=sampling.seed, seed_key=("constrained",),
                                    on_start=lambda: emit("planning", attempt="constrained", max_steps=bound))
            if got is not None:
                calls.append(got.call.model_dump())
                first = (STRUCTURED_SOURCES.get(got.method or "", got.method or "structured"), got.text)
        attempts = [
            ("model", prompts.PLANNER_SYSTEM, sampling.planner),
            # The stricter retry runs at temperature 0, unconstrained, as the original did.
            ("retry", prompts.PLANNER_RETRY_SYSTEM, replace(sampling.planner, temperature=RETRY_TEMPERATURE)),
        ]
        for source, system, node_sampling in attempts:
            if source == "model" and first is not None:
                source, text = first
            else:
                emit("planning", attempt=source)
                messages = [SystemMessage(system), *shown, user]
                text, call = invoke_model(model, messages, node_sampling, node="planner",
                                          seed=sampling.seed, seed_key=(source,))
                calls.append(call.model_dump())
            try:
                plan = parse_plan(text, models.plan, names)
            except (NoJSONFound, ValidationError, ValueError) as exc:
                failures.append({"source": source, "raw": text, "error": short_error(exc)})
                continue
            return {"plan": plan.model_dump(mode="json"), "plan_source": source, "plan_reason": reason,
                    "plan_failures": failures, "calls": calls}
        return {"plan": fallback_plan(task).model_dump(mode="json"), "plan_source": "fallback",
                "plan_reason": reason, "plan_failures": failures, "calls": calls}

    return planner


def tool_example_turns() -> list:
    """The worked examples of plans that call a registered tool (prompts.TOOL_EXAMPLES), for graphs with tools."""
    turns: list = []
    for task, tool_lines, plan in prompts.TOOL_EXAMPLES:
        turns += [HumanMessage(prompts.PLANNER_USER.format(task=task) + prompts.TOOLS_OFFERED.format(tools=tool_lines)),
                  AIMessage(json.dumps(plan, separators=(",", ":"), ensure_ascii=False))]
    return turns


def file_example_turns() -> list:
    """The worked example of a plan over the user's file (prompts.FILE_EXAMPLE), for runs with files; its file
    is previewed as the run's files are."""
    task, name, data, plan = prompts.FILE_EXAMPLE
    note = files_note([{"name": name, "size": len(data), "preview": preview(name, data)}])
    return [HumanMessage(prompts.PLANNER_USER.format(task=task) + note),
            AIMessage(json.dumps(plan, separators=(",", ":"), ensure_ascii=False))]


def example_turns(kind: str) -> list:
    """The worked examples for a task of this kind (rules.kind) as earlier chat turns, each plan in the compact
    JSON the grammar produces."""
    turns: list = []
    for task, plan in prompts.PLANNER_EXAMPLES[kind]:
        turns += [HumanMessage(prompts.PLANNER_USER.format(task=task)),
                  AIMessage(json.dumps(plan, separators=(",", ":"), ensure_ascii=False))]
    return turns
