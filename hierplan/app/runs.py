"""Reading a run from its database: its record and latest state (``show``, the web page), its checkpoints
(``show --history``, the page's fork table) and every earlier state (the run picture's replaced steps)."""

from __future__ import annotations

from typing import Any

from hierplan.store import RunStore, check_run_id, database_errors, open_checkpointer, read_checkpoint
from hierplan.store.runs import RunRecord


def run_record(db: str, run_id: str) -> RunRecord:
    store = RunStore.open(db)
    try:
        return store.get(check_run_id(run_id))
    finally:
        store.close()


def run_state(db: str, run_id: str) -> tuple[RunRecord, dict[str, Any]]:
    """The run's record and its latest checkpointed state values (empty before the first checkpoint)."""
    record = run_record(db, run_id)
    return record, read_checkpoint(open_checkpointer(db), record.id, db)


def approval_request(db: str, run_id: str) -> dict[str, Any] | None:
    """What a run waiting for approval asked (the approval node's interrupt: the plan, and ``tools``, the
    registered tools an edited plan may name; or approve_tool's: a tool call, nodes.tool_approval), read through
    the graph's own state; None when it asks nothing. Of calls waiting side by side, the one a decision goes to
    (the run service resumes the first)."""
    from hierplan.graph.builder import build_graph

    record = run_record(db, run_id)
    graph = build_graph(None, open_checkpointer(db))  # no model: the graph only reads the run's state here
    with database_errors(db):
        state = graph.get_state({"configurable": {"thread_id": record.id}})
    return dict(state.interrupts[0].value) if state.interrupts else None


def history(saver: Any, run_id: str) -> list[dict[str, Any]]:
    """Every checkpoint of a run, newest first: id, step, time, and how far the run was."""
    rows = []
    for tup in saver.list({"configurable": {"thread_id": run_id}}):
        values = tup.checkpoint["channel_values"]
        rows.append({"checkpoint": tup.config["configurable"]["checkpoint_id"],
                     "step": tup.metadata.get("step"), "source": tup.metadata.get("source"),
                     "time": tup.checkpoint["ts"], "plan": "plan" in values,
                     "results": len(values.get("results") or []), "final": bool(values.get("final"))})
    return rows


def checkpoints(db: str, run_id: str) -> list[dict[str, Any]]:
    """``history`` of a run in this database; database failures are one line."""
    saver = open_checkpointer(db)
    with database_errors(db):  # the saver raises raw database errors (locked, malformed)
        return history(saver, run_id)


def past_states(db: str, run_id: str) -> list[dict[str, Any]]:
    """Every checkpoint's state values, newest first (the run picture takes replaced steps' titles and tools
    from them)."""
    saver = open_checkpointer(db)
    with database_errors(db):
        return [dict(t.checkpoint["channel_values"]) for t in saver.list({"configurable": {"thread_id": run_id}})]
