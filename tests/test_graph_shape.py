"""The graph's shape, pinned by a Mermaid snapshot (update it deliberately when the wiring changes)."""

from __future__ import annotations

import os
from pathlib import Path

from hierplan.cli.inspect_cmd import drawable_graph

SNAPSHOT = Path(__file__).parent / "snapshots" / "graph.mmd"


def test_graph_matches_the_mermaid_snapshot():
    mermaid = drawable_graph().draw_mermaid(with_styles=False)
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(mermaid)
    assert mermaid == SNAPSHOT.read_text()


def test_graph_has_its_nodes_and_the_scheduler_loop():
    graph = drawable_graph()
    assert set(graph.nodes) == {"__start__", "planner", "checker", "scheduler", "python_step", "llm_step",
                                "replanner", "aggregator", "__end__"}
    edges = {(e.source, e.target, e.conditional) for e in graph.edges}
    assert {("scheduler", t, True) for t in ("python_step", "llm_step", "replanner", "aggregator")} <= edges
    assert {("planner", "scheduler", False), ("python_step", "scheduler", False), ("llm_step", "scheduler", False),
            ("replanner", "scheduler", False), ("aggregator", "__end__", False)} <= edges
    # The checker starts with the planner and ends on its own: nothing waits on it but the vote, which reads state.
    assert {("__start__", "checker", False), ("checker", "__end__", False)} <= edges


def test_readme_shows_the_current_graph():
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    block = readme.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block.strip() == SNAPSHOT.read_text().strip()
