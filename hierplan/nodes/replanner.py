"""The replanner node: after a failed step, revise the unfinished steps given what is known."""

from __future__ import annotations

from typing import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from hierplan.config import SamplingConfig
from hierplan.graph.state import AgentState, PlanDict, ReplanDict, ResultDict, StepDict
from hierplan.nodes import prompts
from hierplan.nodes.context import asked, format_results, tools_offered, truncate
from hierplan.nodes.model_call import structured_or_text
from hierplan.nodes.planner import parse_plan
from hierplan.options import RunOptions, run_options
from hierplan.schema import MAX_STEPS, plan_models, short_error

ERROR_CHARS = 400


def unhandled_failure(state: AgentState) -> ResultDict | None:
    """The first failed result no revision has answered yet, or None."""
    handled = {r["failed_step"] for r in state.get("replans") or []}
    return next((r for r in state.get("results") or [] if not r["ok"] and r["step_id"] not in handled), None)


def revise_steps(plan: PlanDict, done_ids: set[int], new_steps: list[StepDict]) -> list[StepDict]:
    """Finished steps stay; unfinished ones are replaced by the new steps, numbered after every existing id.

    New steps depend on every earlier step (the sequential default): a revision is a recovery, not a fan-out.
    """
    kept = [s for s in plan["steps"] if s["id"] in done_ids]
    next_id = max(s["id"] for s in plan["steps"]) + 1
    room = max(MAX_STEPS - len(kept), 0)
    renumbered = [{**s, "id": next_id + i, "depends_on": None} for i, s in enumerate(new_steps[:room])]
    return kept + renumbered


def make_replanner(model: BaseChatModel, base: SamplingConfig, tools: Sequence[BaseTool] = ()):
    """Build the replanner node; with the run's ``constrain`` it asks for a structured DraftRevision first (the text
    reply is parsed either way, so a model without structured output simply answers in text). ``tools``: the
    registered tools, offered as the planner offers them."""
    names = tuple(t.name for t in tools)
    models = plan_models(names)
    offered = tools_offered(tools)

    def replanner(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        options = run_options(runtime.context)
        sampling = options.sampling(base)
        failed = unhandled_failure(state)
        if failed is None:
            raise RuntimeError("replanner was routed to without an unhandled failed step")
        plan = state["plan"]
        done_ids = {r["step_id"] for r in state.get("results") or []}
        pending = [s for s in plan["steps"] if s["id"] not in done_ids]
        user = prompts.REPLANNER_USER.format(
            task=asked(state), goal=plan["goal"],
            done=format_results([r for r in state["results"] if r["ok"]]) or "(none)",
            failed_id=failed["step_id"], failed_title=failed["title"],
            error=truncate(failed.get("error") or "failed", ERROR_CHARS),
            pending="; ".join(f"{s['title']} [{s['tool']}]" for s in pending) or "(none)") + offered
        messages = [SystemMessage(prompts.REPLANNER_SYSTEM), HumanMessage(user)]
        key = (failed["step_id"],)
        got = structured_or_text(model, messages, sampling.planner, models.draft_revision,
                                 constrain=options.constrain, node="replanner", seed=sampling.seed, seed_key=key)
        text, call = got.text, got.call
        revision: ReplanDict = {"failed_step": failed["step_id"], "error": failed.get("error"),
                                    "raw": text, "applied": False}
        try:
            new_steps = parse_plan(text, models.revision, names).model_dump(mode="json")["steps"]
        except ValueError as exc:  # NoJSONFound and pydantic's ValidationError are ValueErrors
            revision["parse_error"] = short_error(exc)
            return {"replans": [revision], "calls": [call.model_dump()]}
        steps = revise_steps(plan, done_ids, new_steps)
        revision.update(applied=True, steps=[s for s in steps if s["id"] not in done_ids])
        return {"plan": {**plan, "steps": steps}, "replans": [revision], "calls": [call.model_dump()]}

    return replanner
