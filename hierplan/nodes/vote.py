"""The vote node: a numeric task's computed number against the checker's whole-task programs (rules.vote).

It keeps the number most programs printed; while none has a majority it sends the run back to the checker for a
tie-break (at most config.MAX_TIE_BREAKS). The decision is recorded on that step (``check``: which program's
number was kept and what it printed) and in the run's ``vote``; the step's own code and output stay what its
program wrote and printed (rules.answer.computed_output reads the kept number's output).
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from hierplan.config import MAX_TIE_BREAKS
from hierplan.graph.state import AgentState, AttemptDict, ResultDict, VoteDict
from hierplan.nodes.events import emit
from hierplan.nodes.python_step import last_python_step
from hierplan.options import RunOptions, run_options
from hierplan.rules.answer import prose_asked
from hierplan.rules.numbers import last_number
from hierplan.rules.plan import whole_task_step
from hierplan.rules.vote import has_majority, names_spelled, tally, voted


def data_question(state: AgentState) -> bool:
    """A question about the user's files planned as one program (rules.plan rule 1): its program is voted on
    with the checker's even when it failed, instead of a replan (a plan rewritten around a failed program
    reading a table took minutes and answered worse)."""
    return bool(state.get("files")) and whole_task_step(state["kind"], state["plan"])


def computed_step(state: AgentState) -> ResultDict | None:
    """The plan's last Python step when it printed a number (what a numeric task's vote is about; with the user's
    files, any values it printed: a question about a table may ask for several, or for a name), else None. A
    data question's step counts when it failed too: the checker's programs may still answer it."""
    plan = state["plan"]
    if not any(s["tool"] == "python" for s in plan["steps"]):
        return None
    step_id = last_python_step(plan)
    result = next((r for r in state.get("results") or [] if r["step_id"] == step_id), None)
    if result is None:
        return None
    if data_question(state):
        return result
    if voted(result["ok"], result["stdout"]) is None:
        return None
    return result


def vote(state: AgentState) -> AgentState:
    result = computed_step(state)
    if result is None:
        raise ValueError("vote was routed to without a computed number to vote on")
    plan_program: AttemptDict = result["attempts"][-1]
    programs = [plan_program, *(state.get("checks") or [])]
    keys = [voted(p["ok"], p["stdout"], every_value=bool(state.get("files"))) for p in programs]
    decided = has_majority(keys) or len(programs) >= 2 + MAX_TIE_BREAKS
    # a data question whose every program failed keeps the plan's failure (stated_answer says so)
    spelled = [names_spelled(state["task"], p["stdout"]) if p["ok"] else 0 for p in programs]
    index, agreed = (tally(keys, spelled, plan_first=data_question(state)) if any(k is not None for k in keys)
                     else (0, 0))
    chosen = programs[index]
    record: VoteDict = {"kind": "vote", "step_id": result["step_id"],
                        "answers": [last_number(p["stdout"]) if p["ok"] else None for p in programs],
                        "chosen": last_number(chosen["stdout"]), "agreed": agreed, "programs": len(programs),
                        "changed": keys[index] != keys[0], "decided": decided}
    if not decided:
        return {"vote": record}
    record = {**record, "decided_by": index, "stdout": chosen["stdout"] if chosen["ok"] else ""}
    emit("step_check", step_id=result["step_id"],
         **{k: v for k, v in record.items() if k not in ("step_id", "stdout")})
    kept: ResultDict = {**result, "check": record}
    return {"vote": record, "results": [kept]}


def after_vote(state: AgentState, runtime: Runtime[RunOptions]) -> Literal["checker", "stated_answer", "aggregator"]:
    """Back to the checker for a tie-break while the vote is undecided; a decided number is stated by rule, or
    written by the aggregator model when the run asks for an explanation (``explain``) or the task asks for the
    working or a form (rules.answer.prose_asked)."""
    if not state["vote"]["decided"]:
        return "checker"
    if run_options(runtime.context).explain or prose_asked(state["task"], bool(state.get("files"))):
        return "aggregator"
    return "stated_answer"
