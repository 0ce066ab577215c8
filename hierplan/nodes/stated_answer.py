"""The stated_answer node: a numeric answer that the programs' vote decided, stated from the voted number
without a model call (the run's ``explain`` option sends it to the aggregator model instead). An answer about the
user's files is what the kept program printed, put into the template the task spells for it (rules.template).

The aggregator's prose added nothing the vote had not decided: its number was checked against the computation
and corrected when it differed (answer_check), and it cost a model call in every numeric run
(bench/notes/eval-notebook.md, "After the stated answer", has the time measured with and without it).
"""

from __future__ import annotations

from hierplan.graph.state import AgentState
from hierplan.nodes.events import emit
from hierplan.rules.answer import stated_answer as state_number
from hierplan.rules.template import fit_template


NO_DATA_ANSWER = "No program could answer the question from the files. The last error: {error}"


def stated_answer(state: AgentState) -> AgentState:
    record = state.get("vote")
    if not record or not record["decided"]:
        raise ValueError("stated_answer was routed to without a decided vote")
    emit("node_started", node="stated_answer")
    if state.get("files"):  # a question about the user's data: the kept program printed the answers, as asked
        if not record["stdout"].strip():
            failed = next((r for r in state.get("results") or [] if r["step_id"] == record["step_id"]), None)
            return {"final": NO_DATA_ANSWER.format(error=(failed or {}).get("error") or "it printed nothing")}
        return {"final": fit_template(state["task"], record["stdout"].strip())}
    if record["chosen"] is None:
        raise ValueError("stated_answer was routed to without a decided vote on a number")
    return {"final": state_number(state["plan"]["goal"], record["chosen"], record["agreed"], record["programs"])}
