"""Tool approval (RunOptions.approve_tools, `--approve-tools`): the run waits before each registered tool's call
with its arguments; approve, edit (checked against the tool's schema) or reject resumes it; the call is kept in
the checkpoint, so a run killed while it waits (kill -9 included) shows the same call and asks no model again."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langchain_core.tools import tool
from langgraph.types import Command

from fakes import ScriptedChatModel, plan_json
from helpers import WORKER, cli, events, saved_values, statuses
from hierplan import build_graph, open_checkpointer
from hierplan.nodes.tool_approval import REJECTED, TOOL_REQUEST

CONFIG = {"configurable": {"thread_id": "ta-1"}}
TASK = "What is the weather in Paris?"


def weather_tool(called: list):
    @tool
    def get_weather(city: str, days: int = 1) -> str:
        """The weather forecast for a city."""
        called.append({"city": city, "days": days})
        return f"sunny in {city} for {days} day(s)"

    return get_weather


def waiting(checkpointer=None, *, plan=("get_weather", "llm", "llm"), args=('{"city": "Paris"}',), depends=None,
            **options):
    called: list = []
    model = ScriptedChatModel(script={"planner": [plan_json(list(plan), depends=depends)], "tool_step": list(args)})
    graph = build_graph(model, checkpointer, tools=[weather_tool(called)], constrain=False, approve_tools=True,
                        **options)
    out = graph.invoke({"task": TASK}, CONFIG)
    return model, graph, out, called


def test_the_run_waits_before_the_call_with_the_tool_and_its_arguments_and_approve_calls_it():
    model, graph, out, called = waiting()
    [pending] = out["__interrupt__"]
    assert pending.value["request"] == TOOL_REQUEST
    assert (pending.value["step_id"], pending.value["tool"], pending.value["arguments"]) == (
        1, "get_weather", {"city": "Paris", "days": 1})
    assert pending.value["schema"]["required"] == ["city"]
    assert called == [] and graph.get_state(CONFIG).next == ("approve_tool",)
    assert out["tool_calls"]["1"]["args"] == {"city": "Paris", "days": 1}  # kept in the state before the wait
    done = graph.invoke(Command(resume={"action": "approve"}), CONFIG)
    assert called == [{"city": "Paris", "days": 1}]
    first = done["results"][0]
    assert first["ok"] and first["output"] == "sunny in Paris for 1 day(s)"
    assert [c["node"] for c in first["calls"]] == ["tool_step"]  # the call that wrote the arguments, kept
    assert done["tool_calls"]["1"]["decision"] == "approved" and done["final"]
    assert model.count("tool_step") == 1


def test_edit_calls_the_tool_with_the_persons_arguments_and_arguments_that_do_not_fit_are_asked_again():
    model, graph, _, called = waiting()
    again = graph.invoke(Command(resume={"action": "edit", "arguments": {"city": 3}}), CONFIG)
    [pending] = again["__interrupt__"]
    assert pending.value["error"] == "the edited arguments do not fit get_weather: city: Input should be a valid string"
    assert pending.value["arguments"] == {"city": "Paris", "days": 1} and called == []
    again = graph.invoke(Command(resume={"action": "edit", "arguments": "Rome"}), CONFIG)
    assert "JSON object" in again["__interrupt__"][0].value["error"]
    done = graph.invoke(Command(resume={"action": "edit", "arguments": {"city": "Rome", "days": 2}}), CONFIG)
    assert called == [{"city": "Rome", "days": 2}]
    assert done["results"][0]["tool_args"] == {"city": "Rome", "days": 2}
    kept = done["tool_calls"]["1"]
    assert kept["decision"] == "edited" and kept["proposed"] == {"city": "Paris", "days": 1}
    assert model.count("tool_step") == 1


def test_reject_is_a_failed_step_the_replanner_handles_and_the_tool_is_never_called():
    model, graph, _, called = waiting()
    done = graph.invoke(Command(resume={"action": "reject"}), CONFIG)
    first = done["results"][0]
    assert not first["ok"] and first["error"] == REJECTED and first["tool_args"] == {"city": "Paris", "days": 1}
    assert called == [] and model.count("replanner") == 1
    assert done["replans"][0]["failed_step"] == 1 and REJECTED in done["replans"][0]["error"]
    assert done["final"]


def test_without_approve_tools_the_call_runs_at_once():
    called: list = []
    model = ScriptedChatModel(script={"planner": [plan_json(["get_weather", "llm", "llm"])],
                                      "tool_step": ['{"city": "Oslo"}']})
    out = build_graph(model, tools=[weather_tool(called)], constrain=False).invoke({"task": TASK}, CONFIG)
    assert "__interrupt__" not in out and called == [{"city": "Oslo", "days": 1}] and not out.get("tool_calls")


def test_parallel_calls_each_wait_and_are_decided_one_by_one():
    model, graph, out, called = waiting(plan=("get_weather", "get_weather", "llm"),
                                        args=('{"city": "Paris"}', '{"city": "Lima"}'), depends={1: [], 2: []})
    pending = out["__interrupt__"]
    assert sorted(p.value["arguments"]["city"] for p in pending) == ["Lima", "Paris"]
    first = next(p for p in pending if p.value["arguments"]["city"] == "Lima")
    out = graph.invoke(Command(resume={first.id: {"action": "reject"}}), CONFIG)
    [left] = out["__interrupt__"]
    assert left.value["arguments"]["city"] == "Paris" and called == []
    graph.invoke(Command(resume={left.id: {"action": "approve"}}), CONFIG)
    assert called == [{"city": "Paris", "days": 1}] and model.count("tool_step") == 2


def test_a_resumed_run_shows_the_same_call_and_asks_no_model_again(tmp_path):
    db = str(tmp_path / "runs.sqlite")
    waiting(open_checkpointer(db))
    called: list = []
    fresh = ScriptedChatModel(script={})  # another process: a new model, a new graph over the same file
    graph = build_graph(fresh, open_checkpointer(db), tools=[weather_tool(called)], constrain=False,
                        approve_tools=True)
    [pending] = graph.get_state(CONFIG).interrupts
    assert pending.value["arguments"] == {"city": "Paris", "days": 1}
    done = graph.invoke(Command(resume={"action": "approve"}), CONFIG)
    assert called == [{"city": "Paris", "days": 1}] and done["results"][0]["ok"]
    assert fresh.count("tool_step") == 0 and fresh.count("planner") == 0


# --- the CLI: --approve-tools, then `resume RUN --approve | --edit | --reject`, with the real MCP server -------

pytest.importorskip("langchain_mcp_adapters")
import mcp.client.stdio  # noqa: E402, F401 - before helpers.cli's StringIO (see tests/test_mcp.py)

SERVER = Path(__file__).parent / "servers" / "mcp_tools.py"
ATLANTIS = "The capital of Atlantis is Poseidonia (population 7,301)."


@pytest.fixture
def facts(tmp_path) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"facts": {"command": sys.executable, "args": [str(SERVER)],
                                                         "cwd": str(tmp_path)}}}))
    return path


def test_cli_waits_at_the_call_and_resume_edits_then_approves(tmp_path, models, facts, monkeypatch):
    scripts, made = models
    db = str(tmp_path / "runs.sqlite")
    scripts.append({"planner": [plan_json(["lookup", "llm", "llm"])], "tool_step": ['{"topic": "zorblat"}']})
    code, out, err = cli("run", "--mcp", str(facts), "--approve-tools", "--db", db, "--json", "--run-id", "t1",
                         "What is the capital of Atlantis?")
    assert code == 0, err
    [asked] = [e for e in events(out) if e["event"] == "approval_needed"]
    assert (asked["request"], asked["tool"], asked["arguments"], asked["step_id"]) == (
        TOOL_REQUEST, "lookup", {"topic": "zorblat"}, 1)
    assert statuses(db) == {"t1": "waiting"} and "waits for approval" in err

    editor = tmp_path / "editor.py"
    editor.write_text("import sys; open(sys.argv[1], 'w').write('{\"topic\": 7}')")  # does not fit: asked again
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    scripts.append({})
    code, out, err = cli("resume", "t1", "--edit", "--db", db)
    assert code == 0 and "hierplan: the edited arguments do not fit lookup: " in err and "'string'" in err
    assert "call: lookup {\"topic\": \"zorblat\"}" in out and statuses(db) == {"t1": "waiting"}

    editor.write_text("import sys; open(sys.argv[1], 'w').write('{\"topic\": \"atlantis\"}')")
    scripts.append({})
    code, out, err = cli("resume", "t1", "--edit", "--db", db, "--json")
    assert code == 0, err
    [step] = [e for e in events(out) if e["event"] == "step_finished" and e["step_id"] == 1]
    assert step["ok"] and step["output"] == ATLANTIS and step["tool_args"] == {"topic": "atlantis"}
    assert statuses(db) == {"t1": "done"}
    assert sum(m.count("tool_step") for m in made) == 1  # written once, by the first run's model


def test_cli_reject(tmp_path, models, facts):
    scripts, _ = models
    db = str(tmp_path / "runs.sqlite")
    scripts.append({"planner": [plan_json(["lookup", "llm", "llm"])], "tool_step": ['{"topic": "atlantis"}']})
    cli("run", "--mcp", str(facts), "--approve-tools", "--max-replans", "0", "--db", db, "--run-id", "t2", "Atlantis?")
    scripts.append({})
    code, out, err = cli("resume", "t2", "--reject", "--db", db, "--json")
    assert code == 0, err
    [step] = [e for e in events(out) if e["event"] == "step_finished" and e["step_id"] == 1]
    assert not step["ok"] and step["error"] == REJECTED and statuses(db) == {"t2": "done"}


def test_kill_9_while_the_terminal_asks_then_resume_approves_the_same_call(tmp_path, models, facts):
    """The CLI asks at a terminal (a pty); kill -9 there; `resume RUN --approve` in another process calls the
    kept call: the model is not asked for the arguments again."""
    db = str(tmp_path / "runs.sqlite")
    env = dict(os.environ, PYTHONUNBUFFERED="1", HIERPLAN_WORKER_SPEC=json.dumps(
        {"plan": ["lookup", "llm", "llm"], "tool_args": {"topic": "atlantis"}}))
    log_path = tmp_path / "worker.log"
    primary, secondary = pty.openpty()
    try:
        with log_path.open("wb") as log:
            worker = subprocess.Popen([sys.executable, WORKER, "run", "--mcp", str(facts), "--approve-tools",
                                       "--db", db, "--run-id", "k9", "What is the capital of Atlantis?"],
                                      env=env, stdin=secondary, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while "Call this tool?" not in log_path.read_text(errors="replace"):
                assert worker.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, "the terminal was never asked"
                time.sleep(0.05)
            assert 'call: lookup {"topic": "atlantis"}' in log_path.read_text()
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=30)
    finally:
        os.close(primary)
        os.close(secondary)
    assert statuses(db) == {"k9": "interrupted"}
    assert saved_values(db, "k9")["tool_calls"]["1"]["args"] == {"topic": "atlantis"}
    scripts, made = models
    scripts.append({})
    code, out, err = cli("resume", "k9", "--approve", "--db", db, "--json")
    assert code == 0, err
    [step] = [e for e in events(out) if e["event"] == "step_finished" and e["step_id"] == 1]
    assert step["ok"] and step["output"] == ATLANTIS
    assert made[0].count("tool_step") == 0 and statuses(db) == {"k9": "done"}


def test_the_run_picture_shows_the_step_whose_call_waits_and_no_plan_approval():
    from hierplan.render.run_picture import run_picture

    _, graph, _, _ = waiting()
    picture = run_picture(graph.get_state(CONFIG))
    statuses = {n.id: n.status for n in picture.nodes}
    assert statuses["s1"] == "waiting" and "approval" not in statuses and statuses["s2"] == "pending"
