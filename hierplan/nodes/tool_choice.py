"""The tool_choice node, after the planner and after the replanner: each undecided step's tool by rule
(rules.tools), with its reason. A step that already has a reason (an earlier decision, a person's edit), or that
names a registered tool, keeps its tool. Then a first plan that splits one numeric question over several steps
becomes one Python step (rules.plan)."""

from __future__ import annotations

from typing import Collection, Literal, Mapping

from langgraph.runtime import Runtime

from hierplan.graph.state import AgentState
from hierplan.nodes.context import file_names
from hierplan.options import RunOptions, run_options
from hierplan.rules.plan import one_program
from hierplan.rules.tools import choose_tools


def make_tool_choice(registered: Collection[str] | Mapping[str, str] = ()):
    """The node, for a graph with these registered tools: their names, or each name with its description (the
    rule reads a tool's description to tell tools apart, rules.tools rule 7)."""
    names = dict(registered) if isinstance(registered, Mapping) else tuple(registered)  # as choose_tools takes them

    def tool_choice(state: AgentState) -> AgentState:
        files = file_names(state)
        plan = choose_tools(state["plan"], state["kind"], names, files, state["task"])
        if not state.get("results"):  # a revision replaces steps after some ran: it is never merged
            decided = [s["id"] for s in state["plan"]["steps"] if s.get("tool_reason")]
            plan = one_program(plan, state["kind"], state["task"], files, decided)
        return {"plan": plan}

    return tool_choice


tool_choice = make_tool_choice()


def after_tool_choice(state: AgentState, runtime: Runtime[RunOptions]) -> Literal["approval", "scheduler"]:
    """A first plan waits for a person when the run asks for approval; a revised one goes on."""
    if run_options(runtime.context).approve and "approval" not in state:
        return "approval"
    return "scheduler"
