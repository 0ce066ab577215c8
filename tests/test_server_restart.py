"""What survives a restart of `hierplan serve`, with and without Postgres (docs/server.md has the measured table).
No client here asks for a durability: the server's runs of hierplan's graph are "sync" by themselves."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest

from needs import unavailable
from pg import pg_cluster, pg_url  # noqa: F401 (fixtures)
from server_fixtures import missing, start_server

pytestmark = pytest.mark.slow

TASK = "Add 2 and 3 in steps"  # names parts ("steps"): the planner plans it with split_writing (rules.plan)
STEP_WAIT_S = 120


def _need_server():
    if reason := missing():
        unavailable(reason)


async def _run_task(url: str) -> str:
    from langgraph_sdk import get_client

    c = get_client(url=url)
    thread = await c.threads.create()
    await c.runs.wait(thread["thread_id"], "hierplan", input={"task": TASK},
                      config={"configurable": {"split_writing": True}})
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


def _calls(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _wait_for_step(path: Path, step: int, server) -> None:
    """Until a model call of ``step`` has started (every earlier step has finished: each needs the one before)."""
    deadline = time.monotonic() + STEP_WAIT_S
    while not any(c.get("step") == step and c["at"] == "start" for c in _calls(path)):
        if time.monotonic() > deadline or server.process.poll() is not None:
            raise AssertionError(f"step {step} did not start; calls {_calls(path)}\n{server.log_tail()}")
        time.sleep(0.05)


async def _start(url: str) -> str:
    from langgraph_sdk import get_client

    c = get_client(url=url)
    thread = await c.threads.create()
    await c.runs.create(thread["thread_id"], "hierplan", input={"task": TASK},
                        config={"configurable": {"model": "scripted-slow", "split_writing": True}})
    return thread["thread_id"]


async def _resume(url: str, thread_id: str) -> dict:
    from langgraph_sdk import get_client

    c = get_client(url=url)
    await c.threads.create(thread_id=thread_id, if_exists="do_nothing", graph_id="hierplan")
    await c.runs.wait(thread_id, "hierplan", input=None,
                      config={"configurable": {"model": "scripted-slow", "split_writing": True}})
    return (await c.threads.get_state(thread_id))["values"]


def test_a_server_killed_mid_run_resumes_on_postgres_without_running_a_finished_step_again(tmp_path, pg_url):
    """Killed (SIGKILL) while step 3 of 3 works, after steps 1 and 2 finished; a server started again on the same
    database continues the thread: steps 1 and 2 are not run again. No client asked for durability "sync"."""
    _need_server()
    calls = tmp_path / "calls.jsonl"
    env = {"HIERPLAN_TEST_CALLS": str(calls)}
    first = start_server(tmp_path / "a", db=pg_url, env=env)
    try:
        thread_id = asyncio.run(_start(first.url))
        _wait_for_step(calls, 3, first)
    finally:
        first.stop(signal.SIGKILL)
    before = _calls(calls)
    assert {c["step"] for c in before if c.get("step") in (1, 2) and c["at"] == "end"} == {1, 2}
    assert not any(c.get("step") == 3 and c["at"] == "end" for c in before)  # killed in the middle of step 3

    second = start_server(tmp_path / "b", db=pg_url, env=env)
    try:
        values = asyncio.run(_resume(second.url, thread_id))
    finally:
        second.stop()
    after = _calls(calls)[len(before):]
    assert {c["pid"] for c in after} == {second.process.pid}  # the killed server ran nothing more
    assert [c["node"] for c in after if c["at"] == "start" and c["node"] == "planner"] == []
    assert {c.get("step") for c in after if c.get("step")} == {3}  # only the step the kill interrupted
    assert values["final"].startswith(f"FINAL for [{TASK}]") and [r["step_id"] for r in values["results"]] == [1, 2, 3]
    # Every step ran with durability "sync" (the server passes "async" when a client names none).
    assert {c["durability"] for c in before + after} == {"sync"}
