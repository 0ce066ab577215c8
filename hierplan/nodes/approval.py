"""Human approval of the plan: the run stops after planning until a person approves, edits or rejects it."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, Sequence, TypedDict

from langgraph.graph import END
from langgraph.types import interrupt
from pydantic import ValidationError

from hierplan.graph.state import AgentState, PlanDict
from hierplan.nodes.context import tool_description
from hierplan.schema import plan_models, short_error

class ApprovalRequest(TypedDict):
    """What a run waiting for approval shows (the interrupt's value)."""

    plan: PlanDict
    plan_source: str | None
    error: NotRequired[str]
    """Why the last decision could not be used."""
    tools: NotRequired[dict[str, str]]
    """The registered tools a step may name, name -> description (absent when the graph has none)."""


REJECTED_FINAL = "The plan was rejected; no step was run."
USER_TOOL_REASON = "set in the edited plan"


def keep_user_tools(edited: PlanDict, proposed: PlanDict) -> PlanDict:
    """An edited plan runs with the tools the person wrote: each step whose tool differs from the proposed
    step with its id, or that has no reason, gets tool_reason USER_TOOL_REASON, so the tool rule
    (the tool_choice node, which skips steps with a reason) never overrides it."""
    before = {s["id"]: s for s in proposed.get("steps") or []}
    steps = []
    for step in edited["steps"]:
        old = before.get(step["id"])
        same = old is not None and old.get("tool") == step["tool"] and step.get("tool_reason")
        steps.append(step if same else {**step, "tool_reason": USER_TOOL_REASON})
    return {**edited, "steps": steps}


def make_approval(tools: Sequence[Any] = ()):
    """The node, for a graph with these registered tools: an edited plan may name them (and no other)."""
    plan_model = plan_models(tuple(t.name for t in tools)).plan
    offered = {t.name: tool_description(t) for t in tools}

    def approval(state: AgentState) -> AgentState:
        return _approval(state, plan_model, offered)

    return approval


def _approval(state: AgentState, plan_model: Any, offered: dict[str, str]) -> AgentState:
    """Waits (LangGraph interrupt) for {"action": "approve" | "edit" | "reject", "plan": {...} for edit}.

    On resume LangGraph re-runs this node from the start and each interrupt() returns its stored answer in
    order; an unusable answer (invalid edited plan, unknown action) asks again, with the reason, so the
    run waits once more instead of failing.
    """
    request: ApprovalRequest = {"plan": state["plan"], "plan_source": state.get("plan_source"),
                                **({"tools": offered} if offered else {})}
    while True:
        decision = interrupt(request)
        action = decision.get("action") if isinstance(decision, dict) else decision
        if action == "approve":
            return {"approval": "approved"}
        if action == "reject":
            return {"approval": "rejected", "final": REJECTED_FINAL}
        if action == "edit":
            try:
                plan = plan_model.model_validate(decision.get("plan"))
            except ValidationError as exc:
                request = {**request, "error": f"the edited plan is invalid: {short_error(exc)}"}
                continue
            return {"approval": "edited", "plan": keep_user_tools(plan.model_dump(mode="json"), state["plan"]),
                    "plan_source": "edited"}
        request = {**request, "error": f"unknown decision {decision!r}: use approve, edit (with a plan) or reject"}


approval = make_approval()


def after_approval(state: AgentState) -> Literal["scheduler", "__end__"]:
    return END if state.get("approval") == "rejected" else "scheduler"
