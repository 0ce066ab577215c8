"""What survives a restart of `hierplan serve` (LangGraph Server's in-memory dev runtime), with and without a
Postgres --db: for each way of stopping, a thread is run, the server stopped and started again on the same
work directory (and database), and the thread read back. docs/server.md holds the table this prints.

    python bench/server_restart.py [--slow-seconds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from server_fixtures import start_server  # noqa: E402
from pg_cluster import missing as pg_missing  # noqa: E402
from pg_cluster import running_cluster  # noqa: E402

# The dev runtime pickles its store every 10 s (langgraph_runtime_inmem._persistence._flush_interval).
AFTER_A_FLUSH_S = 12
RESUMED_WAIT_S = 40


async def start_run(url: str, slow: bool) -> tuple[str, str]:
    from langgraph_sdk import get_client

    c = get_client(url=url)
    thread = await c.threads.create()
    config = {"configurable": {"model": "scripted-slow"}} if slow else None
    run = await c.runs.create(thread["thread_id"], "hierplan", input={"task": "t"}, config=config,
                              durability="sync")
    if not slow:
        await c.runs.join(thread["thread_id"], run["run_id"])
    return thread["thread_id"], run["run_id"]


async def look(url: str, tid: str, rid: str, wait_s: float = 0) -> str:
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import NotFoundError

    c = get_client(url=url)
    try:
        await c.threads.get(tid)
    except NotFoundError:
        return "thread gone (404)"
    deadline = time.monotonic() + wait_s
    while True:
        run = await c.runs.get(tid, rid)
        if run["status"] not in ("pending", "running") or time.monotonic() > deadline:
            break
        await asyncio.sleep(1)
    state = await c.threads.get_state(tid)
    history = await c.threads.get_history(tid, limit=200)
    inputs = sum(1 for h in history if h["metadata"].get("source") == "input")
    done = "answered" if state["values"].get("final") else f"not answered, next {state['next']}"
    return f"kept; run {run['status']}; {done}; {len(history)} checkpoints, {inputs} input"


def scenario(db: str | None, how: str) -> str:
    slow = how == "kill -9 mid-run"
    with tempfile.TemporaryDirectory(prefix="hierplan-restart-") as work:
        server = start_server(Path(work), db=db)
        try:
            tid, rid = asyncio.run(start_run(server.url, slow))
            time.sleep({"clean stop (SIGTERM)": 0.5, "kill -9 within 1 s": 0.5}.get(how, AFTER_A_FLUSH_S))
        finally:
            server.stop(signal.SIGTERM if how.startswith("clean") else signal.SIGKILL)
        again = start_server(Path(work), db=db)
        try:
            return asyncio.run(look(again.url, tid, rid, wait_s=RESUMED_WAIT_S if slow else 0))
        finally:
            again.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow-seconds", type=float, default=15.0,
                        help="how long each LLM step of the mid-run case waits (longer than one flush)")
    args = parser.parse_args()
    os.environ["HIERPLAN_TEST_SLOW_SECONDS"] = str(args.slow_seconds)
    hows = ["clean stop (SIGTERM)", "kill -9 within 1 s", f"kill -9 {AFTER_A_FLUSH_S} s after", "kill -9 mid-run"]
    print("| stopped by | in-memory store | Postgres --db |\n| --- | --- | --- |")
    if reason := pg_missing():
        raise SystemExit(f"server_restart: {reason}")
    with running_cluster() as cluster:
        url = cluster.url()
        for how in hows:
            cells = [scenario(db, how) for db in (None, url)]
            print(f"| {how} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
