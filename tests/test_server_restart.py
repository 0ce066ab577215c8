"""What survives a restart of `hierplan serve`, with and without Postgres (docs/server.md has the measured table)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from needs import unavailable
from pg import pg_cluster, pg_url  # noqa: F401 (fixtures)
from server_fixtures import missing, start_server

pytestmark = pytest.mark.slow

TASK = "Add 2 and 3"


def _need_server():
    if reason := missing():
        unavailable(reason)


async def _run_task(url: str) -> str:
    from langgraph_sdk import get_client

    c = get_client(url=url)
    thread = await c.threads.create()
    await c.runs.wait(thread["thread_id"], "hierplan", input={"task": TASK}, durability="sync")
    return thread["thread_id"]


async def _final(url: str, thread_id: str, recreate: bool = False) -> str | None:
    from langgraph_sdk import get_client

    c = get_client(url=url)
    if recreate:  # the thread record may be gone; its checkpoints are in the database
        await c.threads.create(thread_id=thread_id, if_exists="do_nothing", graph_id="hierplan")
    return (await c.threads.get_state(thread_id))["values"].get("final")


def test_a_clean_stop_keeps_threads_in_the_in_memory_store(tmp_path):
    _need_server()
    first = start_server(tmp_path / "srv")
    try:
        thread_id = asyncio.run(_run_task(first.url))
    finally:
        assert first.stop(signal.SIGTERM) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once shut down
    second = start_server(tmp_path / "srv")  # same work directory: the pickled store is read back
    try:
        assert asyncio.run(_final(second.url, thread_id)).startswith(f"FINAL for [{TASK}]")
    finally:
        second.stop()


def test_on_postgres_checkpoints_outlive_a_killed_server_and_another_server_reads_them(tmp_path, pg_url):
    _need_server()
    import psycopg

    first = start_server(tmp_path / "a", db=pg_url)
    try:
        thread_id = asyncio.run(_run_task(first.url))
    finally:
        first.stop(signal.SIGKILL)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,)).fetchone()[0]
    assert rows >= 6  # input, planner, steps, aggregator: the server wrote through hierplan's checkpointer
    # A second server with its own (empty) work directory, as on another machine, on the same database.
    second = start_server(tmp_path / "b", db=pg_url)
    try:
        assert asyncio.run(_final(second.url, thread_id, recreate=True)).startswith(f"FINAL for [{TASK}]")
    finally:
        second.stop()
