"""The graph, wired top to bottom: planner -> scheduler -> (python_step | llm_step | replanner)* -> aggregator,
and beside the planner the checker (whole-task programs a numeric answer is voted on with)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from hierplan.config import RECURSION_LIMIT, SamplingConfig
from hierplan.graph.state import AgentState, InputState
from hierplan.nodes.aggregator import make_aggregator
from hierplan.nodes.approval import after_approval, approval
from hierplan.nodes.context import ready_steps
from hierplan.nodes.llm_step import make_llm_step
from hierplan.nodes.planner import make_planner
from hierplan.nodes.checker import make_checker
from hierplan.nodes.python_step import MAX_CODE_REPAIRS, CodeRunner, default_runner, make_python_step, run_attempt
from hierplan.nodes.replanner import MAX_REPLANS, make_replanner, unhandled_failure

# "sync" writes each step's checkpoint before the next step starts, which is what makes resume lose nothing.
# LangGraph takes it as an invoke/stream argument; build_graph binds it (Runnable.bind) as the default.
DURABILITY = "sync"


def make_dispatch(parallel: bool, max_replans: int = MAX_REPLANS):
    def dispatch(state: AgentState) -> list[Send] | Literal["replanner", "aggregator"]:
        """A failed step first goes to the replanner (at most max_replans times); then every ready step is
        sent on its way (only the first one when sequential); when none is left, the aggregator.

        Ready LLM steps travel together in one Send, so they are generated in one batched pass.
        """
        if len(state.get("replans") or []) < max_replans and unhandled_failure(state):
            return "replanner"
        ready = ready_steps(state)
        if not ready:
            return "aggregator"
        if not parallel:
            ready = ready[:1]
        context = {"task": state["task"], "plan": state["plan"], "results": state.get("results") or [],
                   "checks": state.get("checks") or []}
        sends = [Send("python_step", {**context, "step": s}) for s in ready if s["tool"] == "python"]
        llm = [s for s in ready if s["tool"] in ("llm", "none")]
        if len(sends) + len(llm) != len(ready):
            raise ValueError(f"unknown tool in steps {[s['id'] for s in ready]}")
        if llm:
            sends.append(Send("llm_step", {**context, "steps": llm}))
        return sends

    return dispatch


def scheduler(state: AgentState) -> dict[str, Any]:
    """A join point: parallel steps land here once per superstep, and dispatch runs once after them."""
    return {}


def wire(model: BaseChatModel | None, sampling: SamplingConfig, *, run_code: CodeRunner = default_runner,
         constrain: bool = True, max_repairs: int = MAX_CODE_REPAIRS,
         parallel: bool = True, max_replans: int = MAX_REPLANS, approve: bool = False) -> StateGraph:
    """The uncompiled graph. Nodes hold the model and only call it when they run."""
    graph = StateGraph(AgentState, input_schema=InputState)
    graph.add_node("planner", make_planner(model, sampling, constrain))
    graph.add_node("checker", make_checker(model, sampling, lambda code: run_attempt(code, run_code)))
    graph.add_node("scheduler", scheduler)
    graph.add_node("python_step", make_python_step(model, sampling, run_code, max_repairs))
    graph.add_node("llm_step", make_llm_step(model, sampling))
    graph.add_node("replanner", make_replanner(model, sampling, constrain))
    graph.add_node("aggregator", make_aggregator(model, sampling))

    graph.add_edge(START, "planner")
    graph.add_edge(START, "checker")  # beside the planner: a numeric task's whole-task programs (vote.py)
    graph.add_edge("checker", END)
    if approve:
        graph.add_node("approval", approval)
        graph.add_edge("planner", "approval")
        graph.add_conditional_edges("approval", after_approval, ["scheduler", END])
    else:
        graph.add_edge("planner", "scheduler")
    graph.add_conditional_edges("scheduler", make_dispatch(parallel, max_replans),
                                ["python_step", "llm_step", "replanner", "aggregator"])
    graph.add_edge("python_step", "scheduler")
    graph.add_edge("llm_step", "scheduler")
    graph.add_edge("replanner", "scheduler")
    graph.add_edge("aggregator", END)
    return graph


def build_graph(model: BaseChatModel, checkpointer: BaseCheckpointSaver | None = None, *,
                sampling: SamplingConfig | None = None, run_code: CodeRunner = default_runner,
                constrain: bool = True, max_repairs: int = MAX_CODE_REPAIRS, parallel: bool = True,
                max_replans: int = MAX_REPLANS, approve: bool = False) -> Any:
    """Compile the agent.

    ``model``: any LangChain chat model. ``checkpointer``: any LangGraph checkpointer; None gives an
    in-memory one, so ``graph.invoke(None, same_config)`` resumes within this process (use
    ``hierplan.open_checkpointer(path)`` for a SQLite file that survives the process).
    ``parallel=False`` runs one step at a time (``--sequential``); ``max_replans`` bounds how often a failed
    step makes the replanner revise the unfinished steps (0: never). ``approve=True`` stops after planning
    until ``graph.invoke(Command(resume={"action": "approve" | "edit" | "reject", ...}), config)``.
    """
    if not isinstance(model, BaseChatModel):
        raise TypeError(f"model must be a LangChain BaseChatModel, got {type(model).__name__}")
    graph = wire(model, sampling or SamplingConfig(), run_code=run_code,
                 constrain=constrain, max_repairs=max_repairs,
                 parallel=parallel, max_replans=max_replans, approve=approve)
    compiled = graph.compile(checkpointer=checkpointer if checkpointer is not None else InMemorySaver(),
                             name="hierplan")
    # bind: invoke/stream/batch get durability="sync" unless the caller passes their own; the binding forwards
    # get_state, update_state, get_graph and the rest to the compiled graph.
    return compiled.with_config({"recursion_limit": RECURSION_LIMIT}).bind(durability=DURABILITY)
