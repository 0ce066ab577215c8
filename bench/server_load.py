"""Load on one LangGraph Server: N runs submitted by C concurrent langgraph-sdk clients to `hierplan serve` on a
throwaway Postgres, with a fast scripted model (tests/server_graph.py), so what is measured is the server,
the graph's orchestration and the checkpoint writes, not generation.

Every run's final state is then read back once: a task is lost if no thread holds its answer, duplicated if
more than one thread (or more than one run, or more than one input checkpoint) does.

    python bench/server_load.py [--runs 50] [--clients 8] [--jobs 8] [--model scripted-llm] [--no-write]

A second table runs 16 tasks whose LLM steps each wait SLOW_SECONDS (as on a remote model) with
--n-jobs 1 and with --jobs: what `--n-jobs-per-worker` buys when runs wait rather than compute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from report import machine_line, write_section  # noqa: E402
from server_fixtures import start_server  # noqa: E402
from pg_cluster import missing as pg_missing  # noqa: E402
from pg_cluster import running_cluster  # noqa: E402

TITLE = "LangGraph Server under load (Postgres)"
SLOW_RUNS = 16
SLOW_SECONDS = 0.5


async def submit_all(url: str, tasks: list[str], clients: int) -> list[dict]:
    """Each client (its own SDK client and HTTP connection pool) takes the next task until none is left."""
    from langgraph_sdk import get_client

    queue: asyncio.Queue[str] = asyncio.Queue()
    for task in tasks:
        queue.put_nowait(task)
    done: list[dict] = []

    async def worker(n: int) -> None:
        c = get_client(url=url)
        while not queue.empty():
            task = queue.get_nowait()
            start = time.perf_counter()
            thread = await c.threads.create(metadata={"bench": "server_load", "task": task})
            await c.runs.wait(thread["thread_id"], "hierplan", input={"task": task}, durability="sync",
                              raise_error=False)
            done.append({"task": task, "thread_id": thread["thread_id"], "client": n,
                         "seconds": time.perf_counter() - start})

    await asyncio.gather(*(worker(n) for n in range(clients)))
    return done


async def audit(url: str, tasks: list[str]) -> dict:
    """Read every thread of the benchmark once; count answers per task, runs and input checkpoints per thread."""
    from langgraph_sdk import get_client

    c = get_client(url=url)
    threads = await c.threads.search(metadata={"bench": "server_load"}, limit=len(tasks) * 2 + 10)
    answers: Counter[str] = Counter()
    extra_runs = extra_inputs = failed_runs = 0
    for thread in threads:
        tid = thread["thread_id"]
        state = await c.threads.get_state(tid)
        final = state["values"].get("final") or ""
        for task in tasks:
            if final.startswith(f"FINAL for [{task}]"):
                answers[task] += 1
        runs = await c.runs.list(tid)
        extra_runs += len(runs) - 1
        failed_runs += sum(1 for r in runs if r["status"] != "success")
        history = await c.threads.get_history(tid, limit=200)
        extra_inputs += sum(1 for h in history if h["metadata"].get("source") == "input") - 1
    return {"threads": len(threads), "lost": sum(1 for t in tasks if answers[t] == 0),
            "duplicated": sum(1 for t in tasks if answers[t] > 1), "extra_runs": extra_runs,
            "extra_inputs": extra_inputs, "failed_runs": failed_runs}


def waiting_runs(db: str, jobs: int, clients: int) -> float:
    """Wall seconds for SLOW_RUNS runs of the "scripted-slow" model (steps that wait) at this --n-jobs."""
    tasks = [f"slow task {i:03d}-{uuid.uuid4().hex[:6]}" for i in range(SLOW_RUNS)]
    with tempfile.TemporaryDirectory(prefix="hierplan-load-") as work:
        server = start_server(Path(work), db=db, model="scripted-slow", jobs=jobs,
                              env={"HIERPLAN_TEST_SLOW_SECONDS": str(SLOW_SECONDS)})
        try:
            start = time.perf_counter()
            done = asyncio.run(submit_all(server.url, tasks, clients))
            wall = time.perf_counter() - start
        finally:
            server.stop()
    assert len(done) == SLOW_RUNS
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=8, help="hierplan serve --n-jobs")
    parser.add_argument("--model", default="scripted-llm", help="a script of tests/server_graph.py")
    parser.add_argument("--no-write", action="store_true", help="do not touch docs/benchmarks.md")
    args = parser.parse_args()
    if reason := pg_missing():
        raise SystemExit(f"server_load: {reason}")

    tag = uuid.uuid4().hex[:6]
    tasks = [f"load task {i:03d}-{tag}" for i in range(args.runs)]
    load_before = os.getloadavg()[0]
    with running_cluster() as cluster, tempfile.TemporaryDirectory(prefix="hierplan-load-") as work:
        db = cluster.url()
        server = start_server(Path(work), db=db, model=args.model, jobs=args.jobs)
        try:
            start = time.perf_counter()
            done = asyncio.run(submit_all(server.url, tasks, args.clients))
            wall = time.perf_counter() - start
            result = asyncio.run(audit(server.url, tasks))
        finally:
            server.stop()
        import psycopg

        with psycopg.connect(db) as conn:
            pg_threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        slow = {jobs: waiting_runs(db, jobs, args.clients) for jobs in (1, args.jobs)}

    seconds = sorted(d["seconds"] for d in done)
    p50 = statistics.median(seconds)
    p95 = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))]
    load_after = os.getloadavg()[0]
    busy = max(load_before, load_after) > (os.cpu_count() or 1)
    rows = [
        ("runs submitted / answered", f"{len(tasks)} / {len(done)}"),
        ("lost (no thread holds the task's answer)", result["lost"]),
        ("duplicated (answer in more than one thread)", result["duplicated"]),
        ("threads on the server / threads in Postgres", f"{result['threads']} / {pg_threads}"),
        ("runs beyond one per thread / runs not `success`", f"{result['extra_runs']} / {result['failed_runs']}"),
        ("input checkpoints beyond one per thread", result["extra_inputs"]),
        ("latency per run (create thread + run to the end), p50", f"{p50:.2f} s"),
        ("latency p95 / max", f"{p95:.2f} s / {seconds[-1]:.2f} s"),
        ("wall time, all runs / throughput", f"{wall:.1f} s / {len(done) / wall * 60:.0f} runs/min"),
    ]
    table = "| measure | value |\n| --- | ---: |\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
    machine = machine_line() + f"; load avg before {load_before:.2f}"
    if busy:
        machine += " (BUSY: load above the core count, so latencies are upper bounds, not this server's speed)"
    body = (f"{args.runs} runs of hierplan's graph with a scripted model (`{args.model}`: a 3-step plan, "
            f"no generation) submitted by {args.clients} concurrent langgraph-sdk clients to one "
            f"`hierplan serve --n-jobs {args.jobs}` on a throwaway PostgreSQL 15 (Unix socket), each run "
            "`durability=\"sync\"`; then every thread's final state, runs and history read back once.\n\n"
            f"Command: `python bench/server_load.py --runs {args.runs} --clients {args.clients} "
            f"--jobs {args.jobs}`\nMachine: {machine}\n\n{table}\n")
    slow_rows = "\n".join(f"| {jobs} | {wall:.1f} s | {SLOW_RUNS / wall * 60:.0f} |" for jobs, wall in slow.items())
    body += (f"\n{SLOW_RUNS} runs whose two LLM steps each wait {SLOW_SECONDS} s (`scripted-slow`, as when the "
             f"model is a remote server), same {args.clients} clients:\n\n"
             f"| --n-jobs | wall time | runs/min |\n| ---: | ---: | ---: |\n{slow_rows}\n")
    print(body)
    if not args.no_write:
        write_section(TITLE, body)


if __name__ == "__main__":
    main()
