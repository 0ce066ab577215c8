"""`hierplan show RUN_ID --history` (the run's checkpoints) and `hierplan fork RUN_ID --at CHECKPOINT`
(a new run from an earlier checkpoint: LangGraph time travel onto a new thread)."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

from hierplan.errors import UsageError
from hierplan.store import RunStore, check_run_id, database_errors, open_checkpointer


def add_parsers(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("fork", parents=[parent], help="start a new run from an earlier checkpoint of a run")
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--at", required=True, metavar="CHECKPOINT", help="a checkpoint id from: hierplan show RUN_ID --history")
    p.add_argument("--run-id", dest="new_run_id", help="id of the new run (default: a random one)")
    from hierplan.cli.run_cmd import add_run_options

    add_run_options(p)
    p.set_defaults(func=cmd_fork, decision=None)


def history(saver, run_id: str) -> list[dict[str, Any]]:
    """Every checkpoint of a run, newest first: id, step, time, and how far the run was."""
    rows = []
    for tup in saver.list({"configurable": {"thread_id": run_id}}):
        values = tup.checkpoint["channel_values"]
        rows.append({"checkpoint": tup.config["configurable"]["checkpoint_id"],
                     "step": tup.metadata.get("step"), "source": tup.metadata.get("source"),
                     "time": tup.checkpoint["ts"], "plan": "plan" in values,
                     "results": len(values.get("results") or []), "final": bool(values.get("final"))})
    return rows


def print_history(db: str, run_id: str, as_json: bool) -> int:
    record = RunStore.open(db).get(check_run_id(run_id))
    saver = open_checkpointer(db)
    with database_errors(db):  # the saver raises raw sqlite3 errors (locked, malformed)
        rows = history(saver, record.id)
    if as_json:
        print(json.dumps(rows))
        return 0
    print(f"{'step':>4}  {'checkpoint':<36}  {'time (UTC)':<19}  state")
    for r in rows:
        state = "final answer" if r["final"] else (f"plan, {r['results']} step results" if r["plan"] else "task")
        print(f"{r['step']:>4}  {r['checkpoint']:<36}  {r['time'][:19].replace('T', ' '):<19}  {state}")
    return 0


def find_checkpoint(saver, run_id: str, checkpoint_id: str):
    tup = saver.get_tuple({"configurable": {"thread_id": run_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}})
    if tup is None:
        raise UsageError(f"run {run_id} has no checkpoint {checkpoint_id!r} (list them: hierplan show {run_id} --history)")
    return tup


def copy_checkpoint(saver, tup, run_id: str, checkpoint_id: str, new_run_id: str) -> None:
    """Put a checkpoint (with its pending writes) at the head of a new thread; the original is untouched."""
    metadata = {**tup.metadata, "source": "fork", "forked_from": f"{run_id}@{checkpoint_id}"}
    config = saver.put({"configurable": {"thread_id": new_run_id, "checkpoint_ns": ""}}, tup.checkpoint, metadata,
                       tup.checkpoint["channel_versions"])
    by_task: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    for task_id, channel, value in tup.pending_writes or []:
        by_task[task_id].append((channel, value))
    for task_id, writes in by_task.items():
        saver.put_writes(config, writes, task_id)


def cmd_fork(args: argparse.Namespace) -> int:
    from hierplan.cli.options import open_store
    from hierplan.cli.run_cmd import execute

    db, store = open_store(args)
    record, new_id, options = prepare_fork(db, store, args.run_id, args.at, args.new_run_id, args)
    return execute(new_id, None, options, db, store, args, resumed=True, task=record.task)


def prepare_fork(db: str, store: RunStore, run_id: str, at: str, new_run_id: str | None, args: argparse.Namespace):
    """(original record, new run id, options): a new run whose head is checkpoint ``at`` of ``run_id``, ready
    to execute. Shared with the web page's Fork button."""
    from hierplan.cli.options import overridden_options

    record = store.get(check_run_id(run_id))
    options = {**overridden_options(record.options, args), "forked_from": record.id}
    saver = open_checkpointer(db)
    with database_errors(db):
        tup = find_checkpoint(saver, record.id, at)
    new_id = store.create(record.task, options, new_run_id)
    with database_errors(db, writing=True):
        copy_checkpoint(saver, tup, record.id, at, new_id)
    return record, new_id, options
