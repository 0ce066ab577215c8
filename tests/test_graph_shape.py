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


def test_graph_has_the_four_nodes_and_conditional_routing():
    graph = drawable_graph()
    assert set(graph.nodes) == {"__start__", "planner", "python_step", "llm_step", "aggregator", "__end__"}
    conditional = {(e.source, e.target) for e in graph.edges if e.conditional}
    for source in ("planner", "python_step", "llm_step"):
        for target in ("python_step", "llm_step", "aggregator"):
            assert (source, target) in conditional
