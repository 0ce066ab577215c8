"""``hierplan eval TASKS.jsonl``: run the agent over JSONL tasks and report accuracy, plan and code quality, costs.

Only argparse at import time; the model (torch, transformers) loads inside ``run``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from hierplan.app.agent import close_tools, with_absolute_paths
from hierplan.cli.common import add_common_options
from hierplan.errors import UsageError
from hierplan.options import RunOptions
from hierplan.roles import ROLES, option_name

DEFAULT_OUT_ROOT = "eval-out"
DEFAULT_CONCURRENCY = 1


def add_parser(subparsers, parent: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Register ``eval``. Without ``parent`` (a parser holding --db and --debug) it adds its own: its --db
    defaults to in-memory checkpoints, not the run database."""
    p = subparsers.add_parser(
        "eval", parents=[parent] if parent is not None else [],
        help="evaluate the agent on JSONL tasks (GSM8K form)",
        description="Run the agent over JSONL tasks ({\"question\": ..., \"answer\": ...}; the expected number "
                    "follows '####' as in GSM8K) and write DIR/results.jsonl (one object per task) and "
                    "DIR/summary.md (totals). The model is loaded once; each task runs in its own thread "
                    "(--concurrency N: N of them at once). A task may carry \"files\" (paths relative to the "
                    "tasks file, attached as `hierplan run --file` attaches them) and \"answer_text\" (a name "
                    "the answer must state); --mcp FILE offers every task the servers' tools, and --withhold "
                    "runs the same tasks without their files and tools (the control).")
    p.add_argument("tasks", metavar="TASKS.jsonl",
                   help="one JSON object per line with 'question' and optional 'answer' or 'answer_text', "
                        "'files', 'requirements'")
    p.add_argument("--limit", type=int, metavar="N", help="evaluate the first N tasks only")
    p.add_argument("--out", metavar="DIR", help=f"output folder (default: {DEFAULT_OUT_ROOT}/<timestamp>)")
    if parent is None:
        add_common_options(p, db_help="keep each task's checkpoints in this database: a SQLite file PATH or a "
                                     "postgresql:// URL (default: in memory)")
    p.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"run N tasks at once, sharing the one model (default {DEFAULT_CONCURRENCY})")
    p.add_argument("--json", action="store_true", help="print the totals as one JSON object on stdout")
    from hierplan.app.fields import add_arguments

    add_arguments(p, skip=("approve",))  # nobody is there to approve a plan
    p.add_argument("--withhold", action="store_true",
                   help="the control: run the same tasks without their files and without the --mcp servers' tools "
                        "(no server is started); a task that needs them should then score near 0")
    from hierplan.eval.distributed import add_ray_options  # argparse only: Ray loads when --ray is used

    add_ray_options(p)
    # main() sets argv to the real command line (for the summary); None when the parser is used on its own
    p.set_defaults(func=run, argv=None)
    return p


def run(args: argparse.Namespace) -> int:
    from hierplan.eval.harness import progress_line, run_eval
    from hierplan.eval.report import ResultsWriter, render_summary, write_summary
    from hierplan.eval.requirements import requirement_fields
    from hierplan.eval.tasks import load_tasks
    from hierplan.app.fields import from_args
    from hierplan.models.catalog import DEFAULT

    from hierplan.eval.distributed import check_ray_args  # imports no Ray

    options = with_absolute_paths(RunOptions.from_dict(from_args(args)))
    if options.mcp and args.ray is not None:
        raise UsageError("--mcp does not work with --ray yet: the actors would each start the servers, and "
                         "their leftover processes could not be counted here")
    check_ray_args(args.ray, args.actors, args.db)  # before anything is written
    # the tasks' files go to the run database's store, where every graph (a Ray actor's too) reads them
    file_store = None
    if args.db:
        from hierplan.store import open_file_store

        file_store = open_file_store(args.db)
    tasks = load_tasks(args.tasks, args.limit, file_store)  # a missing file fails before any model loads
    concurrency = args.concurrency
    if concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {concurrency}")
    withheld = {t.index: [f["name"] for f in t.files] for t in tasks} if args.withhold else {}
    if args.withhold:
        tasks = [t.without_files() for t in tasks]
    tools = offered_tools(options, args.withhold)  # before the model loads: a server that fails, fails fast
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or Path(DEFAULT_OUT_ROOT) / stamp)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "command": shlex.join(["hierplan", *args.argv]) if args.argv is not None else None,
        "tasks file": args.tasks,
        "model": options.model or os.environ.get("HIERPLAN_MODEL") or f"embedded {DEFAULT.short}",
        **{f"{role} model": getattr(options, option_name(role)) for role in ROLES
           if getattr(options, option_name(role))},
        "constrain": options.constrain,
        "parallel steps": options.parallel,
        "seed": options.seed,
        **({"model server": options.base_url} if options.base_url else {}),
        "max replans": options.max_replans,
        "max repairs": options.max_repairs,
        "concurrency": concurrency,
        **tools_meta(options, tools, args.withhold, sum(map(len, withheld.values()))),
        **ray_meta(args.ray, args.actors),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
    }
    log(f"{len(tasks)} tasks from {args.tasks}; writing {out}/results.jsonl")
    # The meta goes down first, so `python -m hierplan.eval DIR` can summarise a killed evaluation.
    (out / "summary.json").write_text(json.dumps({"meta": meta, "summary": None}, indent=2) + "\n",
                                      encoding="utf-8")
    # The graph's options name no servers: the tools were loaded above (none with --withhold).
    graph = build_eval_graph(replace(options, mcp=None), args.db, tools) if args.ray is None else None
    writer = ResultsWriter(out / "results.jsonl")
    records: list[dict[str, Any]] = []
    by_index = {task.index: task for task in tasks}

    def on_result(record: dict[str, Any], position: int, total: int) -> None:
        # Writing tasks are scored here, on the final answer, so local and --ray runs are scored alike.
        record.update(requirement_fields(by_index[record["index"]].requirements, record.get("final")))
        if args.withhold:
            record["files_withheld"] = withheld[record["index"]]
        writer.write(record)
        records.append(record)
        line = progress_line(record, position, total)
        if "requirements_total" in record:
            line += f" requirements met {record['requirements_met']}/{record['requirements_total']}"
        log(line)

    try:
        if graph is None:  # --ray: the actors build their own graphs
            from hierplan.eval.distributed import run_eval_on_ray

            run_eval_on_ray(tasks, options.to_dict(), db=args.db, address=args.ray, actors=args.actors,
                            thread_prefix=f"eval-{stamp}", on_result=on_result, log=log)
        else:
            run_eval(graph, tasks, thread_prefix=f"eval-{stamp}", on_result=on_result, concurrency=concurrency)
    finally:  # Ctrl-C: what finished is already in results.jsonl; summarise it too
        writer.close()
        close_tools(tools)  # the MCP servers' sessions end here, so the count below sees what they leave behind
        after = {}
        if options.mcp:  # with --withhold too: no server should have been started at all
            from hierplan.eval.orphans import orphaned_servers
            from hierplan.eval.report import ORPHANS_KEY

            after[ORPHANS_KEY] = orphaned_servers(options.mcp)
        summary = write_summary(out / "summary.md", records, meta, after)
        (out / "summary.json").write_text(json.dumps({"meta": meta, "summary": summary}, indent=2) + "\n",
                                          encoding="utf-8")
    if args.json:
        print(json.dumps(summary, separators=(",", ":")))
    else:
        print(render_summary(summary, meta))
        print(f"results: {out / 'results.jsonl'}\nsummary: {out / 'summary.md'}")
    return 0


def offered_tools(options: RunOptions, withhold: bool) -> list[Any]:
    """The registered tools every task is offered: the --mcp servers', loaded as ``hierplan run --mcp`` loads
    them (hierplan.app.agent.load_tools); none without --mcp, and none with --withhold, where the file is only
    read and checked and no server is started."""
    if not options.mcp:
        return []
    if withhold:
        from hierplan.tools.mcp import read_config

        read_config(options.mcp)
        return []
    from hierplan.app import agent  # looked up at call time: tests watch agent.load_tools

    return agent.load_tools(options)


def tools_meta(options: RunOptions, tools: list[Any], withhold: bool, files_withheld: int) -> dict[str, Any]:
    """What the summary says of the tools and files (nothing when there were none to give or withhold)."""
    if withhold:
        return {"withheld (the control)": f"{files_withheld} files"
                + (f" and the tools of {options.mcp}" if options.mcp else "")}
    if not options.mcp:
        return {}
    return {"mcp servers": options.mcp, "tools": ", ".join(t.name for t in tools) or "none"}


def build_eval_graph(options: RunOptions, db: str | None, tools: list[Any] = ()) -> Any:
    """One model (or one per role) for every task, offered ``tools``; checkpoints and files in memory, or in
    ``db``."""
    from hierplan.app.agent import load_models
    from hierplan.graph.builder import build_graph

    log("loading the model")
    checkpointer = file_store = None
    if db:
        from hierplan.store import open_checkpointer, open_file_store

        checkpointer, file_store = open_checkpointer(db), open_file_store(db)
    return build_graph(load_models(options), checkpointer, options=options, tools=tools, file_store=file_store)


def ray_meta(address: str | None, actors: int | None) -> dict[str, Any]:
    """What the summary says of --ray: the address and actors as given (no --ray: nothing)."""
    if address is None:
        return {}
    return {"ray": address or "default ($RAY_ADDRESS, a running local cluster, or a new one)",
            "actors": actors if actors is not None else "default (one per CPU, or per GPU; at most one per task)"}


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
