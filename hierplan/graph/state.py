"""The graph's state and the messages its nodes pass: TypedDicts of JSON-safe values, built from the run's
records (hierplan.records, re-exported here for the graph's readers).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from hierplan.records import (AnswerCheckDict, ArtifactDict, AttemptDict, CallDict, FileDict,  # noqa: F401
                              InstructionCheckDict, InstructionRoundDict, MemoryDict, PlanDict, PlanFailureDict,
                              ReplanDict, ResultDict, StepDict, StructuredCheckDict,
                              Tool, TurnDict, VoteDict)  # ArtifactDict, InstructionRoundDict, Tool: re-exported
from hierplan.rules.kind import TaskKind


def merge_results(existing: list[ResultDict], new: list[ResultDict]) -> list[ResultDict]:
    """Append step results; a result for a step already present replaces it, so a re-run never duplicates.

    Kept in plan order (by step id) whatever order results land in.
    """
    by_step = {r["step_id"]: r for r in existing or []}
    for result in new or []:
        by_step[result["step_id"]] = result
    return [by_step[k] for k in sorted(by_step)]


class ToolCallDict(TypedDict):
    """A registered tool's call whose arguments the model wrote, kept in the state before a person approves it
    (RunOptions.approve_tools): a run killed while it waits shows the same call on resume, the model not asked
    again."""

    step: StepDict
    """The step it was written for: a revised step of the same id (the replanner's) is written again."""
    tool: str
    args: dict[str, Any]
    """The arguments to call it with: the model's, or the person's edit."""
    calls: list[CallDict]
    """The model calls that wrote the model's arguments (the step's result keeps them)."""
    seconds: float
    """How long writing them took."""
    decision: NotRequired[Literal["approved", "edited", "rejected"]]
    """The person's decision; absent while the call waits for one."""
    proposed: NotRequired[dict[str, Any]]
    """The model's arguments, where the person edited them."""


def merge_tool_calls(existing: dict[str, ToolCallDict], new: dict[str, ToolCallDict]) -> dict[str, ToolCallDict]:
    """By step id (a string: JSON object keys): a step's newer call replaces its older one."""
    return {**(existing or {}), **(new or {})}


class InputState(TypedDict):
    task: str
    """What the user asked for."""
    kind: NotRequired[TaskKind]
    """The caller's word on the task's kind; without it the classify node decides."""
    files: NotRequired[list[FileDict]]
    """The user's files (hierplan.tools.files.load_files reads and checks paths into these records)."""
    history: NotRequired[list[TurnDict]]
    """The earlier turns of the conversation this run continues (hierplan.app.threads), oldest first."""


class AgentState(TypedDict, total=False):
    """The whole run. Every node returns a partial AgentState."""

    task: str
    """What the user asked for."""
    kind: TaskKind
    """numeric or writing: decided once (classify), read by every branch."""
    files: list[FileDict]
    """The user's files, from the input; never changed by a node."""
    history: list[TurnDict]
    """The earlier turns of the conversation this run continues, from the input; never changed by a node."""
    memories: list[MemoryDict]
    """The user's long-term memories the memory node read from the graph's store, newest first."""
    remembered: MemoryDict
    """What this run's task asked to be remembered (rules.conversation), as the memory node stored it."""
    conversation: str
    """The earlier turns and the memories as the prompts show them before the task ("" when there are none)."""
    plan: PlanDict
    plan_source: str
    """Which path produced the plan: constrained, model, retry, fallback, edited, or a server's structured mode."""
    plan_reason: str
    """Why the plan has the size it has (rules.plan.plan_size)."""
    plan_failures: list[PlanFailureDict]
    requirements: list[dict]
    """A writing task's requirements about its answer (nodes.read_requirements): the instruction dicts of
    rules.instructions, those the model read marked ``read_by: "model"`` with the task's words as ``quote``."""
    results: Annotated[list[ResultDict], merge_results]
    """One per executed step, in plan order (a re-run step replaces its result)."""
    approval: Literal["approved", "edited", "rejected"]
    tool_calls: Annotated[dict[str, ToolCallDict], merge_tool_calls]
    """With approve_tools: each registered tool's call, by step id, as written, then as the person decided it."""
    replans: Annotated[list[ReplanDict], operator.add]
    checks: Annotated[list[AttemptDict], operator.add]
    """A numeric task's whole-task programs (the checker's), the first one and any tie-breaks, in order."""
    vote: VoteDict
    calls: Annotated[list[CallDict], operator.add]
    """Model calls of the nodes that keep no result of their own (steps keep theirs in their result)."""
    final: str
    """The answer: the aggregator's, as the checks after it left it."""
    answer_check: AnswerCheckDict
    instruction_check: InstructionCheckDict
    revision: str
    """The reviser's latest rewrite, waiting to be checked."""
    revision_kind: Literal["parts", "rewrite", "plain"]
    """How it was written: by the reviser, the answer anew or only some parts of it, under the grammar; by
    plain_answer, the task answered plainly (nodes.revise)."""
    structured_response: dict[str, Any]
    """With build_graph's ``response_format``: the final answer as that schema, validated (JSON-safe; a pydantic
    class's ``model_dump(mode="json")``); absent when no reply validated (``structured_check`` says why)."""
    structured_check: StructuredCheckDict


class StepPayload(TypedDict):
    """What the scheduler sends a Python step or a registered tool's step: the run so far and the step to run."""

    task: str
    kind: TaskKind
    plan: PlanDict
    results: list[ResultDict]
    files: NotRequired[list[FileDict]]
    """The user's files, when the run has any."""
    conversation: NotRequired[str]
    """The earlier turns and memories the prompts show, when the run has any."""
    step: StepDict
    call: NotRequired[ToolCallDict]
    """A registered tool's step whose call a person decided (approve_tools): tool_step calls it as decided;
    approve_tool: the call that waits for the decision."""


class LlmStepsPayload(TypedDict):
    """What the scheduler sends the LLM step node: the ready LLM (and "none") steps, answered together."""

    task: str
    kind: TaskKind
    plan: PlanDict
    results: list[ResultDict]
    files: NotRequired[list[FileDict]]
    """The user's files, when the run has any."""
    conversation: NotRequired[str]
    """The earlier turns and memories the prompts show, when the run has any."""
    steps: list[StepDict]
