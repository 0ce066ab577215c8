"""`hierplan run`, `hierplan demo` and `hierplan resume`: a run through the run service, with live output."""

from __future__ import annotations

import argparse
import sys

from hierplan.app.agent import check_models
from hierplan.app.service import Ask, Run, RunFailed, RunService, check_task, read_schema
from hierplan.cli.common import db_path
from hierplan.errors import UsageError

DEMO_TASK = (
    "Write a practical, lightweight checklist for launching a small multi-agent logistics system in Python: "
    "one planner agent, two executor agents (one for routing, one for inventory) and a memory store of "
    "past decisions, runnable in Colab. Keep it simple enough for a small team to ship in a week."
)


def add_run_options(p: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    """Every RunOptions field as a flag (hierplan.app.fields), and --json."""
    from hierplan.app.fields import add_arguments

    add_arguments(p, skip=skip)
    p.add_argument("--json", action="store_true", help="print one JSON event per line instead of text")


def add_file_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--file", dest="files", action="append", default=[], metavar="PATH",
                   help="a file for the run (repeat for more): the planner and the steps see a preview, a Python "
                        "step reads it at ./data/NAME; copied into the run, so a resumed run reads the same bytes")


def add_kind_option(p: argparse.ArgumentParser) -> None:
    from hierplan.rules.kind import KINDS

    p.add_argument("--kind", choices=KINDS, help="the task's kind, which decides its branch of the graph "
                                                 "(default: decided from the task's words)")


def add_parsers(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("run", parents=[parent], help="plan and run a task")
    p.add_argument("task", nargs="?", help="the task; omitted: asked for interactively (or read from stdin)")
    p.add_argument("--run-id", help="name the run (default: a random 8-character id; in a thread, T-N)")
    p.add_argument("--thread", metavar="T", help="a turn of conversation T: the task sees T's earlier turns (their "
                                                 "tasks, answers, files and artifacts); a new T starts one")
    add_kind_option(p)
    add_file_option(p)
    p.add_argument("--schema", metavar="FILE.json",
                   help="a JSON Schema (of an object) the final answer is also written as, under the grammar, and "
                        "validated: `show --json`'s structured_response (docs/usage.md)")
    add_run_options(p)
    p.set_defaults(func=cmd_run, decision=None)

    p = sub.add_parser("demo", parents=[parent], help="run the demo task (a logistics multi-agent checklist)")
    add_kind_option(p)
    add_file_option(p)
    add_run_options(p)
    p.set_defaults(func=cmd_run, task=DEMO_TASK, run_id=None, decision=None, schema=None, thread=None)

    p = sub.add_parser("resume", parents=[parent], help="continue an interrupted run where it stopped")
    p.add_argument("run_id", metavar="RUN_ID")
    choice = p.add_mutually_exclusive_group()
    for flag in ("approve", "edit", "reject"):
        choice.add_argument(f"--{flag}", dest="decision", action="store_const", const=flag,
                            help=f"{flag} the plan, or the tool call, a run waits at")
    add_run_options(p, skip=("approve",))  # --approve is the decision here
    p.set_defaults(func=cmd_resume)


def read_task(task: str | None) -> str:
    """The task as given, else typed at the terminal, else read from stdin; checked."""
    if task is None:
        if sys.stdin.isatty():
            task = input("Enter your task: ")
        else:
            raw = sys.stdin.buffer.read()
            try:
                task = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(f"the task on stdin is not valid UTF-8 (byte {exc.start})") from exc
    return check_task(task)


def cmd_run(args: argparse.Namespace) -> int:
    from hierplan.app.fields import from_args
    from hierplan.options import RunOptions

    task = read_task(args.task)
    schema = read_schema(args.schema) if args.schema else None  # a bad file is one line, before any model loads
    options = RunOptions.from_dict(from_args(args))
    check_models(options)  # an engine that is not installed is one line, before the run is recorded
    service = RunService(db_path(args))
    run = service.start(task, options, kind=args.kind, run_id=args.run_id, files=args.files,
                        response_format=schema, thread=args.thread)
    return execute(service, run, args)


def cmd_resume(args: argparse.Namespace) -> int:
    from hierplan.app.fields import from_args

    decided = {"action": args.decision} if args.decision in ("approve", "reject") else None
    service = RunService(db_path(args))
    run = service.resume(args.run_id, from_args(args), decision=decided)
    check_models(run.options)
    return execute(service, run, args)


def execute(service: RunService, run: Run, args: argparse.Namespace) -> int:
    """Run it with the terminal's reporter and approval question; the exit code."""
    from hierplan.cli.output import make_reporter

    try:
        status = service.execute(run, make_reporter(args.json), ask=terminal_ask(args))
    except KeyboardInterrupt:
        print(f"interrupted; continue with: hierplan resume {run.id}", file=sys.stderr)
        return 130
    except RunFailed as exc:
        if args.debug and exc.__cause__ is not None:
            raise exc.__cause__  # the node's own error, with its traceback
        raise
    if status == "waiting":
        print(f"run {run.id} waits for approval; continue with: hierplan resume {run.id} "
              "--approve | --edit | --reject", file=sys.stderr)
    return 0


def terminal_ask(args: argparse.Namespace) -> Ask:
    """At an approval stop: --edit's editor (once), then the terminal's question; none with --json or without
    a terminal (the run is left waiting)."""
    edit = [args.decision == "edit"]

    def ask(request: dict) -> dict | None:
        from hierplan.cli.decide import decide

        first, edit[0] = edit[0], False  # an invalid edit asks again, at the terminal
        return decide(request, edit=first, interactive=not args.json and sys.stdin.isatty())

    return ask
