"""`hierplan show RUN_ID --history` (the run's checkpoints) and `hierplan fork RUN_ID --at CHECKPOINT`
(a new run from an earlier checkpoint: LangGraph time travel onto a new thread)."""

from __future__ import annotations

import argparse
import json

from hierplan.cli.common import db_path


def add_parsers(sub, parent: argparse.ArgumentParser) -> None:
    from hierplan.cli.run_cmd import add_run_options

    p = sub.add_parser("fork", parents=[parent], help="start a new run from an earlier checkpoint of a run")
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--at", required=True, metavar="CHECKPOINT", help="a checkpoint id from: hierplan show RUN_ID --history")
    p.add_argument("--run-id", dest="new_run_id", help="id of the new run (default: a random one)")
    add_run_options(p, skip=("approve",))  # the fork keeps the run's approval setting
    p.set_defaults(func=cmd_fork, decision=None)


def print_history(db: str, run_id: str, as_json: bool) -> int:
    from hierplan.app.runs import checkpoints, run_record

    rows = checkpoints(db, run_record(db, run_id).id)
    if as_json:
        print(json.dumps(rows))
        return 0
    print(f"{'step':>4}  {'checkpoint':<36}  {'time (UTC)':<19}  state")
    for r in rows:
        state = "final answer" if r["final"] else (f"plan, {r['results']} step results" if r["plan"] else "task")
        print(f"{r['step']:>4}  {r['checkpoint']:<36}  {r['time'][:19].replace('T', ' '):<19}  {state}")
    return 0


def cmd_fork(args: argparse.Namespace) -> int:
    from hierplan.app.fields import from_args
    from hierplan.app.service import RunService
    from hierplan.cli.run_cmd import execute

    service = RunService(db_path(args))
    run = service.fork(args.run_id, args.at, from_args(args), args.new_run_id)
    return execute(service, run, args)
