"""`hierplan runs`, `hierplan show` and `hierplan graph`: read-only, and none of them imports torch."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hierplan.cli.common import db_path
from hierplan.errors import UsageError


def add_parsers(sub, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("runs", parents=[parent], help="list runs: id, status, started, thread, task")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--thread", metavar="T", help="only the turns of thread T, first turn first")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("show", parents=[parent], help="show a run: plan, each step's output, final answer")
    p.add_argument("run_id", metavar="RUN_ID", nargs="?")
    p.add_argument("--thread", metavar="T", help="show the turns of thread T instead: each one's task and answer")
    p.add_argument("--json", action="store_true", help="print the run's state as JSON")
    p.add_argument("--history", action="store_true", help="list the run's checkpoints (for hierplan fork --at)")
    p.add_argument("--artifacts", metavar="DIR", help="write the files its Python steps saved under out/ into "
                                                      "DIR/step-N/NAME")
    picture = p.add_argument_group("a picture of the run (its plan as a graph, each step's status colour-coded)")
    picture.add_argument("--mermaid", action="store_true", help="print it as Mermaid text (GitHub Markdown renders it)")
    picture.add_argument("--png", metavar="FILE", help="write it as a PNG (rendered locally)")
    picture.add_argument("--svg", metavar="FILE", help="write it as an SVG (rendered locally)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("graph", parents=[parent], help="draw the agent's graph")
    p.add_argument("--format", choices=["mermaid", "ascii"], default="mermaid")
    p.add_argument("--png", metavar="FILE", help="also write a PNG (rendered locally, no web service)")
    p.add_argument("--svg", metavar="FILE", help="also write an SVG (rendered locally, no web service)")
    p.set_defaults(func=cmd_graph)


def cmd_runs(args: argparse.Namespace) -> int:
    from hierplan.store import RunStore

    store = RunStore.open(db_path(args))
    try:
        if args.thread is not None:
            from hierplan.app.threads import thread_turns

            runs = thread_turns(store, args.thread)
            if not runs:
                raise UsageError(f"no thread {args.thread!r} in this database (start one with: hierplan run "
                                 f"--thread {args.thread} TASK)")
        else:
            runs = store.list()
    finally:
        store.close()
    if args.json:
        print(json.dumps([r.as_json() for r in runs], ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table

    from hierplan.render.text import describe_model

    table = Table("id", "status", "started", "model", "thread", "task", box=None)
    for r in runs:
        row = r.as_json()
        table.add_row(r.id, r.status, row["started"].replace("T", " "),
                      describe_model(r.model) if r.model else "", f"{r.thread} #{r.turn}" if r.thread else "",
                      _one_line(r.task, 60))
    Console(highlight=False).print(table if runs else "no runs yet; start one with: hierplan run TASK")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    pictures = args.mermaid or args.png or args.svg
    if (args.run_id is None) == (args.thread is None):
        raise UsageError("show takes a RUN_ID or --thread T (one of them)")
    if args.thread is not None:
        if pictures or args.history or args.artifacts:
            raise UsageError("--thread lists a thread's turns; --history, --artifacts and the pictures take a RUN_ID")
        return show_thread(db_path(args), args.thread, args.json)
    if pictures and (args.json or args.history):
        raise UsageError("--mermaid, --png and --svg draw the run; they do not go with --json or --history")
    if args.history:
        from hierplan.cli.history_cmd import print_history

        return print_history(db_path(args), args.run_id, args.json)
    if pictures:
        from hierplan.cli.pictures import show_run_picture

        return show_run_picture(db_path(args), args.run_id, mermaid=args.mermaid, png=args.png, svg=args.svg)
    from hierplan.app.runs import run_state

    from hierplan.tools.files import artifact_listing, save_artifacts

    record, values = run_state(db_path(args), args.run_id)
    if args.artifacts:
        from hierplan.store import open_file_store

        for path in save_artifacts(values, args.artifacts, open_file_store(db_path(args))):
            print(path)
        return 0
    if args.json:
        print(json.dumps({"run": record.as_json(), "state": values, "artifacts": artifact_listing(values)},
                         ensure_ascii=False, default=str))
        return 0
    print_run(record, values)
    return 0


def show_thread(db: str, thread: str, as_json: bool) -> int:
    """`hierplan show --thread T`: each turn's run, status, task and final answer, first turn first."""
    from hierplan.app.threads import thread_turns
    from hierplan.store import RunStore, open_checkpointer, read_checkpoint

    store = RunStore.open(db)
    try:
        turns = thread_turns(store, thread)
    finally:
        store.close()
    if not turns:
        raise UsageError(f"no thread {thread!r} in this database (start one with: hierplan run --thread {thread} TASK)")
    saver = open_checkpointer(db)
    finals = [read_checkpoint(saver, r.id, db).get("final") for r in turns]
    if as_json:
        print(json.dumps([{**r.as_json(), "turn": r.turn or 1, "final": final} for r, final in zip(turns, finals)],
                         ensure_ascii=False))
        return 0
    from rich.console import Console

    console = Console(highlight=False)
    console.print(f"[bold]Thread {thread}[/bold]: {len(turns)} turn{'s' if len(turns) != 1 else ''}")
    for r, final in zip(turns, finals):
        console.rule(f"Turn {r.turn or 1}: run {r.id} ({r.status})", style="dim")
        console.print(f"asked: {r.task}", markup=False)
        console.print(f"answer: {final}" if final else "no answer yet", markup=False)
    return 0


def print_run(record: Any, values: dict[str, Any]) -> None:
    """`hierplan show`'s text: the run, its plan, each step, replans, the final answer and its checks, costs."""
    from rich.console import Console
    from rich.text import Text

    from hierplan.cli.output import print_revision, print_structured
    from hierplan.render import text

    console = Console(highlight=False)
    console.print(f"[bold]Run {record.id}[/bold] ({record.status}): {record.task}")
    if record.thread:
        console.print(f"thread: {record.thread}, turn {record.turn} (the turns: hierplan show --thread "
                      f"{record.thread})", markup=False)
    if line := text.format_memory(len(values.get("history") or []), (values.get("remembered") or {}).get("text"),
                                  len(values.get("memories") or [])):
        console.print(line, markup=False)
    for f in values.get("files") or []:
        console.print(f"file: {f['name']} ({f['size']:,} bytes, sha256 {f['sha256'][:12]})", markup=False)
    if record.model or record.models:
        console.print(f"model: {text.describe_models(record.model, record.models)}", markup=False)
    if values.get("kind"):
        console.print(text.format_kind(values["kind"]), markup=False)
    if record.error:
        console.print(f"[red]error:[/red] {record.error}", markup=True)
    plan = values.get("plan")
    if not plan:
        console.print("no plan yet")
        return
    console.rule(f"Plan ({values.get('plan_source')})")
    console.print(f"Goal: {plan['goal']}", markup=False)
    results = {r["step_id"]: r for r in values.get("results") or []}
    for step in plan["steps"]:
        r = results.get(step["id"])
        status = "pending" if r is None else ("ok" if r["ok"] else "FAILED")
        console.rule(Text(f"Step {step['id']} [{step['tool']}] {step['title']}: {status}"), style="dim")
        if r:
            if r.get("code"):
                console.print(r["code"], markup=False, style="cyan")
            if call := text.format_tool_call(r):
                console.print(call, markup=False, style="cyan")
            console.print(r["output"], markup=False)
            if r.get("check"):
                console.print(text.format_check(r["check"]), markup=False)
            for a in r.get("artifacts") or []:
                console.print(text.format_artifact(a), markup=False, style="green")
    for revision in values.get("replans") or []:
        print_revision(console, revision)
    if values.get("final"):
        console.rule("Final answer")
        console.print(values["final"], markup=False)
    if values.get("answer_check"):
        console.print(text.format_answer_check(values["answer_check"]), markup=False)
    if values.get("instruction_check"):
        console.print(text.describe_instructions(values["instruction_check"]), markup=False)
    print_structured(console, values)
    console.rule("Model calls", style="dim")
    console.print(text.format_calls(values), markup=False)


def drawable_graph():
    """The graph's shape, without a model: nodes are built but never run."""
    from hierplan.graph.builder import build_graph

    return build_graph(None, checkpointer=False).get_graph()


def cmd_graph(args: argparse.Namespace) -> int:
    from hierplan.cli.pictures import write_pictures
    from hierplan.render.picture import from_langgraph

    graph = drawable_graph()
    # files first: when drawing fails, nothing but the error line is printed
    write_pictures(from_langgraph(graph), png=args.png, svg=args.svg)
    print(graph.draw_ascii() if args.format == "ascii" else graph.draw_mermaid(with_styles=False))
    return 0


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
