"""Resume: a failed or killed run continues where it stopped; finished steps are not run again."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import time

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from fakes import ScriptedChatModel, plan_json
from hierplan import build_graph, open_checkpointer

CONFIG = {"configurable": {"thread_id": "resume-1"}}
# Tasks that name a deliverable with parts, so the planner plans them in a graph with split_writing (without it,
# one piece of writing is planned by rule)
TASK = "Draft a plan"


def test_a_node_that_fails_once_is_resumed_without_rerunning_finished_steps(tmp_path):
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "llm", "llm"])],
                                      "llm_step": ["first", RuntimeError("model crashed"), "second", "third"]})
    saver = open_checkpointer(str(tmp_path / "runs.sqlite"))
    graph = build_graph(model=model, checkpointer=saver, constrain=False, split_writing=True)
    with pytest.raises(RuntimeError, match="model crashed"):
        graph.invoke({"task": "Do it in three steps"}, CONFIG)

    saved = saver.get_tuple(CONFIG).checkpoint["channel_values"]
    assert [r["output"] for r in saved["results"]] == ["first"]  # step 1 saved before step 2 started

    out = graph.invoke(None, CONFIG)
    assert [r["output"] for r in out["results"]] == ["first", "second", "third"]
    assert model.count("planner") == 1
    assert model.count("llm_step") == 4  # 3 steps + the failed call; step 1 was not run again
    assert model.count("aggregator") == 1


def test_default_checkpointer_resumes_in_process():
    model = ScriptedChatModel(script={"planner": [plan_json(["llm"] * 3)],
                                      "aggregator": [KeyboardInterrupt(), "done at last"]})
    graph = build_graph(model=model, constrain=False, split_writing=True)
    with pytest.raises(KeyboardInterrupt):
        graph.invoke({"task": TASK}, CONFIG)
    out = graph.invoke(None, CONFIG)
    assert out["final"] == "done at last"
    assert model.count("llm_step") == 3 and model.count("planner") == 1


def test_every_step_is_checkpointed_before_the_next_starts():
    model = ScriptedChatModel(script={"planner": [plan_json(["llm"] * 4)]})
    graph = build_graph(model=model, constrain=False, split_writing=True)
    graph.invoke({"task": TASK}, CONFIG)
    counts = [len(s.values.get("results") or []) for s in graph.get_state_history(CONFIG)]
    assert sorted(set(counts)) == [0, 1, 2, 3, 4]  # a checkpoint after every single step


class SlowSaver(InMemorySaver):
    """Records when each checkpoint write starts and ends; each write takes a while."""

    def __init__(self, events: list):
        super().__init__()
        self.events = events

    def put(self, config, checkpoint, metadata, new_versions):
        self.events.append(("put", metadata.get("step")))
        time.sleep(0.15)
        out = super().put(config, checkpoint, metadata, new_versions)
        self.events.append(("saved", metadata.get("step")))
        return out


@pytest.mark.parametrize("how", ["invoke", "stream", "async-asked"])
def test_each_checkpoint_is_written_before_the_next_node_runs(how):
    """durability="sync" is build_graph's default: a slow write still ends before the next node's model call.
    Under LangGraph's own default ("async") the write overlaps the next node, and this check fails, which
    the "async-asked" case shows (a caller's explicit durability wins over the default)."""
    events: list = []

    def reply(node, text):
        def record(messages):
            events.append(("call", node))
            return text
        return record

    model = ScriptedChatModel(script={"planner": [reply("planner", plan_json(["llm"] * 3))],
                                      "llm_step": [reply("llm_step", f"answer {i}") for i in range(3)],
                                      "aggregator": [reply("aggregator", "done")]})
    graph = build_graph(model=model, checkpointer=SlowSaver(events), constrain=False, parallel=False,
                        split_writing=True)
    config = {"configurable": {"thread_id": f"durable-{how}"}}
    if how == "stream":
        list(graph.stream({"task": TASK}, config))
    else:
        graph.invoke({"task": TASK}, config, **({"durability": "async"} if how == "async-asked" else {}))
    # Before each model call (after the first), every write begun so far has ended.
    pending, violations = 0, 0
    for kind, _ in events:
        pending += {"put": 1, "saved": -1}.get(kind, 0)
        violations += kind == "call" and pending > 0
    assert [e for e in events if e[0] == "call"][-1] == ("call", "aggregator")
    assert (violations == 0) == (how != "async-asked"), events


WORKER = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, {tests!r})
    from fakes import ScriptedChatModel, plan_json
    from hierplan import build_graph, open_checkpointer

    phase, db = sys.argv[1], sys.argv[2]
    def die(messages):
        os._exit(9)  # the process dies mid-step, as under kill -9
    script = {{"planner": [plan_json(["llm", "llm", "llm"])], "llm_step": ["one", "two", die]}}
    if phase == "resume":
        script = {{"llm_step": ["three"]}}
    model = ScriptedChatModel(script=script)
    graph = build_graph(model=model, checkpointer=open_checkpointer(db), constrain=False, split_writing=True)
    config = {{"configurable": {{"thread_id": "proc-run"}}}}
    out = graph.invoke({{"task": "Draft a plan"}} if phase == "start" else None, config)
    print(json.dumps({{"calls": [c["node"] for c in model.calls],
                      "outputs": [r["output"] for r in out["results"]], "final": out["final"]}}))
""")


def killed_then_resumed(tmp_path, source: str) -> dict:
    """Run ``source`` (a worker script) until it dies with exit code 9, resume it in a new process; its report."""
    worker = tmp_path / "worker.py"
    worker.write_text(source.format(tests=str(Path(__file__).parent)))
    db = str(tmp_path / "runs.sqlite")
    first = subprocess.run([sys.executable, str(worker), "start", db], capture_output=True, text=True)
    assert first.returncode == 9, first.stderr
    second = subprocess.run([sys.executable, str(worker), "resume", db], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    return json.loads(second.stdout)


def test_a_run_killed_in_one_process_is_resumed_in_another(tmp_path):
    report = killed_then_resumed(tmp_path, WORKER)
    assert report["outputs"] == ["one", "two", "three"]
    assert report["calls"] == ["llm_step", "aggregator"]  # no planner, no step 1 or 2 again


REVISION_WORKER = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, {tests!r})
    from fakes import ScriptedChatModel, plan_json
    from hierplan import build_graph, open_checkpointer

    phase, db = sys.argv[1], sys.argv[2]
    def die(messages):
        os._exit(9)  # the process dies in the rewrite's model call, as under kill -9
    script = {{"planner": [plan_json(["llm", "llm", "llm"])], "aggregator": ["- green tea\\n- black tea"],
              "reviser": [die]}}
    if phase == "resume":
        script = {{"reviser": ["- green tea\\n- black tea\\n- white tea"]}}
    model = ScriptedChatModel(script=script)
    graph = build_graph(model=model, checkpointer=open_checkpointer(db), constrain=False)
    config = {{"configurable": {{"thread_id": "revision-run"}}}}
    task = {{"task": "Write a checklist of exactly 3 bullet points about tea."}}
    out = graph.invoke(task if phase == "start" else None, config)
    print(json.dumps({{"calls": [c["node"] for c in model.calls], "final": out["final"],
                      "check": out["instruction_check"]}}))
""")


def test_a_run_killed_during_a_revision_resumes_at_the_revision(tmp_path):
    report = killed_then_resumed(tmp_path, REVISION_WORKER)
    assert report["calls"] == ["reviser"]  # no planner, steps or aggregator again: the draft's check was saved
    assert report["final"] == "- green tea\n- black tea\n- white tea"
    assert report["check"]["draft"] == "- green tea\n- black tea" and report["check"]["ok"]
