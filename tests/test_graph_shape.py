"""The graph's shape, pinned by a Mermaid snapshot (update it deliberately when the wiring changes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hierplan.graph.builder import build_graph

SNAPSHOT = Path(__file__).parent / "snapshots" / "graph.mmd"


def drawn():
    return build_graph(None, checkpointer=False).get_graph()


def test_graph_matches_the_mermaid_snapshot():
    mermaid = drawn().draw_mermaid(with_styles=False)
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(mermaid)
    assert mermaid == SNAPSHOT.read_text()


def test_every_node_that_calls_a_model_or_changes_the_answer_is_drawn():
    graph = drawn()
    assert set(graph.nodes) == {"__start__", "memory", "classify", "read_requirements", "planner", "whole_task_plan", "tool_choice", "approval", "scheduler",
                                "python_step", "llm_step", "tool_step", "approve_tool", "replanner", "checker", "vote",
                                "stated_answer", "aggregator", "answer_check", "check_instructions", "reviser", "plain_answer",
                                "__end__"}
    edges = {(e.source, e.target, e.conditional) for e in graph.edges}
    # The user's memories are kept and recalled first (and a thread's earlier turns noted); the kind is decided
    # next; a writing task's requirements are read next; a task one step does is planned
    # by rule, anything else by the model; tool choice follows either plan and the replanner.
    assert {("__start__", "memory", False), ("memory", "classify", False), ("classify", "planner", True), ("classify", "whole_task_plan", True),
            ("classify", "read_requirements", True), ("read_requirements", "planner", True),
            ("read_requirements", "whole_task_plan", True),
            ("planner", "tool_choice", False), ("whole_task_plan", "tool_choice", False),
            ("replanner", "tool_choice", False)} <= edges
    assert {("tool_choice", "approval", True), ("tool_choice", "scheduler", True)} <= edges
    # The scheduler loop, and where it ends: the checker's programs join the vote; the vote loops for tie-breaks.
    assert {("scheduler", t, True)
            for t in ("python_step", "llm_step", "tool_step", "approve_tool", "replanner", "checker", "aggregator")
            } <= edges
    assert {("python_step", "scheduler", False), ("llm_step", "scheduler", False), ("tool_step", "scheduler", False),
            ("approve_tool", "scheduler", False),  # a tool call waits for a person between writing and calling it
            ("checker", "vote", False),
            ("vote", "checker", True), ("vote", "aggregator", True), ("vote", "stated_answer", True),
            ("stated_answer", "answer_check", False)} <= edges
    # After the answer: a numeric one is checked against its computation (then against a form its task states), a
    # writing one revised in a loop.
    assert {("aggregator", "answer_check", True), ("aggregator", "check_instructions", True),
            ("answer_check", "__end__", True), ("answer_check", "check_instructions", True),
            ("check_instructions", "reviser", True), ("check_instructions", "plain_answer", True),
            ("reviser", "check_instructions", False), ("plain_answer", "check_instructions", False),
            ("check_instructions", "__end__", True)} <= edges


STRUCTURED_SNAPSHOT = Path(__file__).parent / "snapshots" / "graph_structured.mmd"
SCHEMA = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}


def test_a_graph_with_a_response_format_draws_structured_answer_after_the_settled_answer():
    graph = build_graph(None, checkpointer=False, response_format=SCHEMA).get_graph()
    mermaid = graph.draw_mermaid(with_styles=False)
    if os.environ.get("UPDATE_SNAPSHOTS"):
        STRUCTURED_SNAPSHOT.write_text(mermaid)
    assert mermaid == STRUCTURED_SNAPSHOT.read_text()
    assert set(graph.nodes) == set(drawn().nodes) | {"structured_answer"}
    edges = {(e.source, e.target, e.conditional) for e in graph.edges}
    # where the answer ended the run, it goes on to be written as the schema; only that node ends it now
    assert {("answer_check", "structured_answer", True), ("check_instructions", "structured_answer", True),
            ("check_instructions", "reviser", True), ("check_instructions", "plain_answer", True),
            ("structured_answer", "__end__", False)} <= edges
    assert {s for s, t, _ in edges if t == "__end__"} == {"approval", "structured_answer"}  # a rejected plan


@pytest.mark.parametrize("doc", ["README.md", "docs/architecture.md"])
def test_the_docs_show_the_current_graph(doc):
    text = (Path(__file__).parent.parent / doc).read_text()
    block = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block.strip() == SNAPSHOT.read_text().strip()
