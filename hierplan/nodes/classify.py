"""The classify node: the task's kind (numeric or writing), decided once; every branch reads it."""

from __future__ import annotations

from hierplan.graph.state import AgentState
from hierplan.nodes.events import emit
from hierplan.rules.kind import KINDS, task_kind


def make_classify(has_tools: bool = False):
    """The node, for a graph with registered tools (``has_tools``) or without: a run with the user's files or
    tools may ask for a quantity that only its data holds (rules.kind)."""

    def classify(state: AgentState) -> AgentState:
        """The caller's ``kind`` when the input gave one, else the rule's (rules.kind)."""
        given = state.get("kind")
        if given is not None and given not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {given!r}")
        kind = given or task_kind(state["task"], with_data=has_tools, with_files=bool(state.get("files")))
        emit("kind", kind=kind, given=given is not None)
        return {"kind": kind}

    return classify


classify = make_classify()
