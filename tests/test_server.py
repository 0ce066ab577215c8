"""hierplan on a real LangGraph Server (`hierplan serve` -> `langgraph dev`), driven by the real langgraph-sdk
client and RemoteGraph. The server runs hierplan's graph over a scripted fast model (tests/server_graph.py)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from needs import unavailable
from server_fixtures import missing, start_server

pytestmark = pytest.mark.slow

# names parts ("steps"): the planner plans it, the server's runs having split_writing (rules.plan)
TASK = "Add 2 and 3 in steps, then explain"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if reason := missing():
        unavailable(reason)
    srv = start_server(tmp_path_factory.mktemp("server"), args=("--split-writing",))  # the server's default
    yield srv
    srv.stop()


def client(server):
    from langgraph_sdk import get_client

    return get_client(url=server.url)


def run(coro):
    return asyncio.run(coro)


def test_a_task_runs_to_the_end_streaming_updates_and_progress_events(server):
    async def go():
        c = client(server)
        thread = await c.threads.create()
        updates, custom, tokens = [], [], []
        async for part in c.runs.stream(thread["thread_id"], "hierplan", input={"task": TASK},
                                        stream_mode=["updates", "custom", "messages-tuple"]):
            if part.event == "updates":
                updates.extend(part.data)
            elif part.event == "custom":
                custom.append(part.data)
            elif part.event == "messages":  # LangGraph's messages stream: [the chunk, its call's metadata]
                chunk, metadata = part.data
                tokens.append((metadata.get("hierplan_node"), metadata.get("hierplan_step_id"), chunk["content"]))
        return thread, updates, custom, tokens, await c.threads.get_state(thread["thread_id"])

    thread, updates, custom, tokens, state = run(go())
    assert uuid.UUID(thread["thread_id"])
    # A task that asks for no quantity: the writing branch, whose requirements are read before planning and
    # whose answer is checked against its instructions.
    assert [n for n in updates if n != "scheduler"] == ["memory", "classify", "read_requirements", "planner", "tool_choice",
                                                        "python_step", "llm_step", "llm_step", "aggregator",
                                                        "check_instructions"]
    events = [e["event"] for e in custom]
    assert events[:4] == ["kind", "node_started", "requirements", "planning"]
    assert "steps_started" in events
    assert state["values"]["kind"] == "writing"
    values = state["values"]
    assert values["final"].startswith(f"FINAL for [{TASK}]")
    assert [r["ok"] for r in values["results"]] == [True, True, True]
    assert values["results"][0]["output"].strip() == "42"  # the python step really ran in the sandbox
    # every LLM step's and the answer's tokens, labelled, as the agent UIs' messages-tuple stream reads them
    for result in values["results"][1:]:
        assert "".join(t for n, i, t in tokens if n == "llm_step" and i == result["step_id"]).strip() == result["output"]
    assert "".join(t for n, i, t in tokens if n == "aggregator").strip() == values["final"]
    assert {n for n, _, _ in tokens} == {"python_step", "llm_step", "aggregator"}  # no plan JSON
    assert state["next"] == []


def test_the_factory_loads_the_model_once_however_often_it_runs(server):
    """The factory runs on every run and every state read; the model must load once per option set."""
    async def go():
        c = client(server)
        finals = []
        for i in range(3):
            thread = await c.threads.create()
            await c.runs.wait(thread["thread_id"], "hierplan", input={"task": f"task {i}"},
                              config={"configurable": {"model": "scripted-llm"}})
            await c.threads.get_state(thread["thread_id"])
            finals.append((await c.threads.get_state(thread["thread_id"]))["values"]["final"])
        return finals

    finals = run(go())
    assert finals == [f"FINAL for [task {i}] (loads of scripted-llm: 1)" for i in range(3)]


def test_approval_interrupt_then_resume_with_a_command(server):
    async def go():
        c = client(server)
        assistant = await c.assistants.create("hierplan", config={"configurable": {"approve": True}},
                                              name="hierplan-approve")
        thread = await c.threads.create()
        tid = thread["thread_id"]
        await c.runs.wait(tid, assistant["assistant_id"], input={"task": TASK})
        waiting = await c.threads.get_state(tid)
        await c.runs.wait(tid, assistant["assistant_id"], command={"resume": {"action": "approve"}})
        return waiting, await c.threads.get_state(tid)

    waiting, done = run(go())
    assert waiting["next"] == ["approval"]
    request = waiting["tasks"][0]["interrupts"][0]["value"]
    assert len(request["plan"]["steps"]) == 3 and "final" not in waiting["values"]
    assert done["next"] == [] and done["values"]["approval"] == "approved"
    assert done["values"]["final"].startswith(f"FINAL for [{TASK}]")


def test_a_runs_options_may_arrive_as_its_context_and_its_kind_with_its_input(server):
    async def go():
        c = client(server)
        thread = await c.threads.create()
        await c.runs.wait(thread["thread_id"], "hierplan", input={"task": TASK, "kind": "numeric"},
                          context={"approve": True, "model": "scripted-llm"})
        return await c.threads.get_state(thread["thread_id"])

    state = run(go())
    assert state["next"] == ["approval"] and state["values"]["kind"] == "numeric"
    # numeric, one thing asked: one program plans it by rule (rules.plan); as writing the planner's three steps
    # would stay
    steps = state["values"]["plan"]["steps"]
    assert [s["tool"] for s in steps] == ["python"] and "asks one thing" in steps[0]["tool_reason"]
    # (the plan of "scripted-llm", the model the context named)


def test_a_rejected_plan_ends_the_run_without_running_a_step(server):
    async def go():
        c = client(server)
        thread = await c.threads.create()
        config = {"configurable": {"approve": True}}
        await c.runs.wait(thread["thread_id"], "hierplan", input={"task": TASK}, config=config)
        await c.runs.wait(thread["thread_id"], "hierplan", command={"resume": {"action": "reject"}}, config=config)
        return await c.threads.get_state(thread["thread_id"])

    state = run(go())
    assert state["values"]["approval"] == "rejected" and not state["values"].get("results")


def test_state_history_lists_every_checkpoint_newest_first(server):
    async def go():
        c = client(server)
        thread = await c.threads.create()
        await c.runs.wait(thread["thread_id"], "hierplan", input={"task": TASK})
        state = await c.threads.get_state(thread["thread_id"])
        return state, await c.threads.get_history(thread["thread_id"], limit=100)

    state, history = run(go())
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    steps = [h["metadata"]["step"] for h in history]
    assert steps == sorted(steps, reverse=True) and steps[-1] == -1  # down to the input checkpoint
    assert history[-1]["next"] == ["__start__"]
    nexts = [n for h in history for n in h["next"]]
    assert {"planner", "python_step", "llm_step", "aggregator"} <= set(nexts)


def test_a_wrongly_typed_option_fails_the_run_with_the_reason(server):
    async def go():
        c = client(server)
        thread = await c.threads.create()
        result = await c.runs.wait(thread["thread_id"], "hierplan", input={"task": TASK},
                                   config={"configurable": {"max_replans": "two"}}, raise_error=False)
        runs = await c.runs.list(thread["thread_id"])
        return result, runs

    result, runs = run(go())
    assert runs[0]["status"] == "error"
    assert "max_replans" in str(result)


def test_hierplan_as_a_remote_graph_node_inside_a_local_graph(server):
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.pregel.remote import RemoteGraph

    class Outer(TypedDict, total=False):
        task: str
        final: str
        shouted: str

    remote = RemoteGraph("hierplan", url=server.url)

    def shout(state: Outer) -> dict:
        return {"shouted": state["final"].upper()}

    graph = StateGraph(Outer)
    graph.add_node("hierplan", remote)
    graph.add_node("shout", shout)
    graph.add_edge(START, "hierplan")
    graph.add_edge("hierplan", "shout")
    graph.add_edge("shout", END)
    app = graph.compile(checkpointer=InMemorySaver())
    out = app.invoke({"task": TASK}, {"configurable": {"thread_id": str(uuid.uuid4())}})
    assert out["final"].startswith(f"FINAL for [{TASK}]")
    assert out["shouted"] == out["final"].upper()


def test_only_a_run_loads_the_model_reads_and_drawings_do_not(server):
    """An assistant whose model cannot load: its graph drawing and a thread's state and history still work;
    a run fails with the load error."""
    async def go():
        c = client(server)
        assistant = await c.assistants.create("hierplan", config={"configurable": {"model": "scripted-broken"}},
                                              name="hierplan-broken")
        drawing = await c.assistants.get_graph(assistant["assistant_id"])
        thread = await c.threads.create()
        result = await c.runs.wait(thread["thread_id"], assistant["assistant_id"], input={"task": TASK},
                                   raise_error=False)
        state = await c.threads.get_state(thread["thread_id"])
        history = await c.threads.get_history(thread["thread_id"])
        return drawing, result, state, history

    drawing, result, state, history = run(go())
    assert {"planner", "llm_step", "aggregator"} <= {n["id"] for n in drawing["nodes"]}
    assert "scripted-broken cannot be loaded" in str(result)
    assert state["values"] == {} and history == []  # the run failed before its first checkpoint
