"""The embedded model through the real factory (hierplan.server:make_graph) on a real `hierplan serve`."""

from __future__ import annotations

import asyncio

import pytest

from needs import unavailable
from server_fixtures import missing, start_server


@pytest.mark.real_model
@pytest.mark.slow
def test_the_embedded_model_answers_through_the_server(tmp_path):
    if reason := missing():
        unavailable(reason)
    from langgraph_sdk import get_client

    # Short budgets keep this cheap; the point is the real factory and model loader behind the server.
    server = start_server(tmp_path / "srv", graph="hierplan.server:make_graph", model=None,
                          args=("--max-new-tokens", "24", "--temperature", "0", "--no-constrain"))

    async def go():
        c = get_client(url=server.url)
        thread = await c.threads.create()
        await c.runs.wait(thread["thread_id"], "hierplan", input={"task": "Name three primary colours."})
        return await c.threads.get_state(thread["thread_id"]), await c.runs.list(thread["thread_id"])

    try:
        state, runs = asyncio.run(go())
    finally:
        server.stop()
    assert runs[0]["status"] == "success", server.log_tail()
    assert state["values"]["final"].strip()
    assert all(r["ok"] for r in state["values"]["results"])
    assert state["values"]["calls"][-1]["generated_tokens"] <= 24
