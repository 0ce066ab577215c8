"""The answer_check node: a numeric answer whose last number disagrees with the voted computation (and is not
the same value in another unit) keeps its prose and ends on ``Final answer: <computed>``; recorded either way."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END

from hierplan.graph.state import AgentState
from hierplan.rules.answer import check_answer, ending_on, numeric_instructions


def answer_check(state: AgentState) -> AgentState:
    check = check_answer(state["final"], state.get("results") or [])
    if check is None:  # nothing computed a number: nothing to compare
        return {}
    if check["ok"] or check["other_unit"]:
        return {"answer_check": check}
    corrected = {**check, "corrected": True, "note": check["note"] + "; the answer now ends with the computed value"}
    return {"answer_check": corrected, "final": ending_on(state["final"], check["computed"])}


def after_answer_check(state: AgentState) -> Literal["check_instructions", "__end__"]:
    """A numeric answer whose task states a form (rules.answer.numeric_instructions: quotes, case, a postscript...)
    goes on to have it checked and, where a program can, applied; any other ends here, and so does the answer to a
    question about the user's files (what its program printed, in the format the question asked)."""
    return "check_instructions" if numeric_instructions(state["task"], bool(state.get("files"))) else END
