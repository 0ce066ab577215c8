"""`hierplan run`, `hierplan demo` and `hierplan resume`: execute the graph with live output."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hierplan.cli.options import (add_model_options, build, load_model, model_options, open_store,
                                  overridden_options)
from hierplan.errors import DatabaseError, HierplanError, UsageError
from hierplan.store import RunStore, check_run_id, open_checkpointer

DEMO_TASK = (
    "Write a practical, lightweight checklist for launching a small multi-agent logistics system in Python: "
    "one planner agent, two executor agents (one for routing, one for inventory) and a memory store of "
    "past decisions. Keep it simple enough for a small team to ship in a week."
)
MAX_TASK_CHARS = 20_000


class RunFailed(HierplanError):
    """A node raised (the model failed, say); the run is saved and can be resumed."""


def add_run_options(p: argparse.ArgumentParser) -> None:
    add_model_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON event per line instead of text")


def add_parsers(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("run", parents=[parent], help="plan and run a task")
    p.add_argument("task", nargs="?", help="the task; omitted: asked for interactively (or read from stdin)")
    p.add_argument("--run-id", help="name the run (default: a random 8-character id)")
    p.add_argument("--approve", action="store_true", help="stop after planning until the plan is approved")
    add_run_options(p)
    p.set_defaults(func=cmd_run, decision=None)

    p = sub.add_parser("demo", parents=[parent], help="run the demo task (a logistics multi-agent checklist)")
    p.add_argument("--approve", action="store_true", help="stop after planning until the plan is approved")
    add_run_options(p)
    p.set_defaults(func=cmd_demo, task=DEMO_TASK, run_id=None, decision=None)

    p = sub.add_parser("resume", parents=[parent], help="continue an interrupted run where it stopped")
    p.add_argument("run_id", metavar="RUN_ID")
    choice = p.add_mutually_exclusive_group()
    for flag in ("approve", "edit", "reject"):
        choice.add_argument(f"--{flag}", dest="decision", action="store_const", const=flag,
                            help=f"{flag} the plan of a run that waits for approval")
    add_run_options(p)
    p.set_defaults(func=cmd_resume)


def read_task(task: str | None) -> str:
    if task is None:
        if sys.stdin.isatty():
            task = input("Enter your task: ")
        else:
            raw = sys.stdin.buffer.read()
            try:
                task = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(f"the task on stdin is not valid UTF-8 (byte {exc.start})") from exc
    try:
        task.encode("utf-8")
    except UnicodeEncodeError as exc:  # undecodable bytes in argv arrive as lone surrogates
        raise UsageError(f"the task is not valid UTF-8 (character {exc.start})") from exc
    task = task.strip()
    if not task:
        raise UsageError("the task is empty")
    if len(task) > MAX_TASK_CHARS:
        raise UsageError(f"the task is {len(task):,} characters; the limit is {MAX_TASK_CHARS:,}")
    return task


def cmd_run(args: argparse.Namespace) -> int:
    task = read_task(args.task)
    db, store = open_store(args)
    options = {**model_options(args), "approve": args.approve}
    run_id = store.create(task, options, args.run_id)
    return execute(run_id, {"task": task}, options, db, store, args, resumed=False)


def cmd_demo(args: argparse.Namespace) -> int:
    return cmd_run(args)


def cmd_resume(args: argparse.Namespace) -> int:
    db, store = open_store(args)
    record, options = prepare_resume(store, args.run_id, args)
    return execute(record.id, None, options, db, store, args, resumed=True, task=record.task)


def prepare_resume(store: RunStore, run_id: str, args: argparse.Namespace):
    """(record, options) of a run to continue, marked running; refused while it still runs. Shared with the
    web page (hierplan.ui), whose Resume and approval buttons are this command."""
    record = store.get(check_run_id(run_id))
    if record.status == "running":
        raise UsageError(f"run {record.id} is still running (pid {record.pid}); wait for it or stop it first")
    options = overridden_options(record.options, args)
    store.set_status(record.id, "running")
    return record, options


def model_info(model: Any) -> dict[str, Any] | None:
    """Name, engine and quantization of a loaded chat model, as it records them (None for one that does not)."""
    info = (getattr(model, "metadata", None) or {}).get("hierplan_model") or {}
    brief = {k: info.get(k) for k in ("name", "engine", "quantization", "device") if info.get(k) is not None}
    return brief or None


def execute(run_id: str, graph_input: dict | None, options: dict[str, Any], db: str, store: RunStore,
            args: argparse.Namespace, *, resumed: bool, task: str | None = None, reporter=None, load=None) -> int:
    """Run the graph to its end or its approval stop. ``reporter`` and ``load`` (options -> model) default to
    the terminal's; the web page passes its own: its live events, and the one model its server loaded."""
    from hierplan.cli.output import make_reporter

    reporter = reporter or make_reporter(args.json)
    try:
        reporter.status("loading the model")
        model = (load or load_model)(options)
        info = model_info(model)
        if info:
            store.set_model(run_id, info)
        reporter.run_started(run_id, task or graph_input["task"], resumed=resumed, model=info)
        reporter.status("planning")
        graph = build(options, open_checkpointer(db), model=model)
        config = {"configurable": {"thread_id": run_id}}
        if resumed and graph.get_state(config).created_at is None:
            graph_input = {"task": task}  # interrupted before the first checkpoint: start over
        while True:
            for mode, chunk in graph.stream(graph_input, config, stream_mode=["updates", "custom"], durability="sync"):
                if mode == "custom":
                    reporter.live(chunk)
                    continue
                for node, update in chunk.items():
                    if isinstance(update, dict) and update:
                        reporter.update(node, update)
            state = graph.get_state(config)
            if not state.interrupts:
                break
            graph_input = _approval(state.interrupts[0].value, run_id, args, reporter, resumed)
            if graph_input is None:
                store.set_status(run_id, "waiting")
                reporter.run_finished(run_id, "waiting")
                print(f"run {run_id} waits for approval; continue with: hierplan resume {run_id} "
                      "--approve | --edit | --reject", file=sys.stderr)
                return 0
        final = state.values.get("final")
    except KeyboardInterrupt:
        reporter.close()
        _record_status(store, run_id, "interrupted")
        reporter.run_finished(run_id, "interrupted", error="interrupted by the user")
        print(f"interrupted; continue with: hierplan resume {run_id}", file=sys.stderr)
        return 130
    except UsageError:  # an unusable approval decision (e.g. an invalid edited plan): the run still waits
        reporter.close()
        _record_status(store, run_id, "waiting")
        raise
    except Exception as exc:
        reporter.close()
        error = f"{type(exc).__name__}: {exc}"
        _record_status(store, run_id, "failed", error)
        reporter.run_finished(run_id, "failed", error=error)
        if args.debug:
            raise
        raise RunFailed(f"run {run_id} failed: {error}; what finished is saved, continue with: "
                        f"hierplan resume {run_id}") from exc
    store.set_status(run_id, "done")
    reporter.run_finished(run_id, "done", final=final)
    return 0


def _approval(request: dict[str, Any], run_id: str, args: argparse.Namespace, reporter, resumed: bool):
    """The Command that resumes a run waiting for approval, or None to leave it waiting."""
    from langgraph.types import Command

    from hierplan.cli.decide import decide

    reporter.close()
    if resumed and not args.json and args.decision is None:
        reporter.update("planner", {"plan": request["plan"], "plan_source": request.get("plan_source")})
    if args.json:
        reporter.emit("approval_needed", run_id=run_id, plan=request["plan"], error=request.get("error"))
    decision = decide(request, args.decision, interactive=not args.json and sys.stdin.isatty())
    args.decision = None  # used once: an invalid edit asks again
    return None if decision is None else Command(resume=decision)


def _record_status(store: RunStore, run_id: str, status: str, error: str | None = None) -> None:
    """Best effort while handling another error: the database may be what failed (locked, full)."""
    try:
        store.set_status(run_id, status, error=error)
    except DatabaseError:
        pass  # the runs list shows the run as interrupted once this process is gone
