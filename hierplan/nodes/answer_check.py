"""The answer_check node: a numeric answer whose last number disagrees with the voted computation (and is not
the same value in another unit) keeps its prose and ends on ``Final answer: <computed>``; recorded either way."""

from __future__ import annotations

from hierplan.graph.state import AgentState
from hierplan.rules.answer import check_answer, ending_on


def answer_check(state: AgentState) -> AgentState:
    check = check_answer(state["final"], state.get("results") or [])
    if check is None:  # nothing computed a number: nothing to compare
        return {}
    if check["ok"] or check["other_unit"]:
        return {"answer_check": check}
    corrected = {**check, "corrected": True, "note": check["note"] + "; the answer now ends with the computed value"}
    return {"answer_check": corrected, "final": ending_on(state["final"], check["computed"])}
