"""Graph logic with scripted fake models: routing, order, truncation, what the aggregator sees."""

from __future__ import annotations

import pytest

from fakes import FakeExecution, ScriptedChatModel, plan_json, scripted_runner
from hierplan import build_graph
from langgraph.runtime import Runtime

from hierplan.graph.builder import dispatch as route
from hierplan.options import RunOptions
from hierplan.graph.state import merge_results

CONFIG = {"configurable": {"thread_id": "t1"}}


def run(tools, *, model_script=None, runner=None, depends=None, task="Solve it in steps"):
    script = {"planner": [plan_json(tools, depends=depends)], **(model_script or {})}
    model = ScriptedChatModel(script=script, default={"python_step": "print('py')"})
    runner = runner or scripted_runner([FakeExecution(True, f"out {i}\n") for i in range(20)])
    # a piece of writing in steps: the planner's (split_writing), as these tests of the steps need
    graph = build_graph(model=model, run_code=runner, constrain=False, split_writing=True)
    out = graph.invoke({"task": task}, CONFIG)
    # a writing task's requirements are read first (tests/test_read_requirements.py); these tests index the rest
    model.calls[:] = [c for c in model.calls if c["node"] != "read_requirements"]
    return model, out


def test_each_tool_kind_routes_to_its_node():
    model, out = run(["python", "llm", "none", "python"])
    step_nodes = [c["node"] for c in model.calls if c["node"] in ("python_step", "llm_step")]
    assert step_nodes == ["python_step", "llm_step", "llm_step", "python_step"]
    # The model's "none" on a step of a task that asks for no quantity is an LLM step (tool_choice, rule 4).
    assert [(r["step_id"], r["tool"]) for r in out["results"]] == [(1, "python"), (2, "llm"), (3, "llm"),
                                                                   (4, "python")]
    assert out["results"][0]["output"] == "out 0" and out["results"][3]["output"] == "out 1"
    assert out["final"].startswith("aggregator reply")
    assert [c["node"] for c in model.calls][0] == "planner" and model.calls[-1]["node"] == "aggregator"


def test_results_have_the_documented_keys_and_plan_order():
    _, out = run(["llm"] * 5)
    assert [r["step_id"] for r in out["results"]] == [1, 2, 3, 4, 5]
    for r in out["results"]:
        assert {"step_id", "title", "tool", "output", "ok"} <= r.keys()
        assert r["ok"] is True


def make_dispatch(parallel=True, max_replans=1):
    """The scheduler's router under these run options."""
    runtime = Runtime(context=RunOptions(parallel=parallel, max_replans=max_replans))
    return lambda state: route({"kind": "writing", **state}, runtime)


def plan_of(*tools, depends=None):
    return {"steps": [{"id": i, "tool": t, "depends_on": (depends or {}).get(i)}
                      for i, t in enumerate(tools, start=1)]}


def sent(dispatched):
    return [(s.node, [x["id"] for x in s.arg["steps"]] if "steps" in s.arg else s.arg["step"]["id"])
            for s in dispatched]


def test_dispatch_routes_by_tool_and_ends_at_the_aggregator():
    dispatch = make_dispatch(parallel=True)
    plan = plan_of("llm", "python", "none")
    assert sent(dispatch({"task": "t", "plan": plan, "results": []})) == [("llm_step", [1])]
    assert sent(dispatch({"task": "t", "plan": plan, "results": [{"step_id": 1, "ok": True}]})) == [("python_step", 2)]
    assert sent(dispatch({"task": "t", "plan": plan, "results": [{"step_id": 1, "ok": True}, {"step_id": 2, "ok": True}]})) == [
        ("llm_step", [3])]
    done = [{"step_id": i, "ok": True} for i in (1, 2, 3)]
    assert dispatch({"task": "t", "plan": plan, "results": done}) == "aggregator"


def test_dispatch_sends_ready_steps_together_and_batches_llm_steps():
    plan = plan_of("llm", "python", "llm", "python", "llm", depends={1: [], 2: [], 3: [], 4: [], 5: [1, 2]})
    state = {"task": "t", "plan": plan, "results": []}
    assert sent(make_dispatch(parallel=True)(state)) == [("python_step", 2), ("python_step", 4),
                                                         ("llm_step", [1, 3])]
    assert sent(make_dispatch(parallel=False)(state)) == [("llm_step", [1])]


def test_dispatch_rejects_unknown_tools():
    with pytest.raises(ValueError, match="unknown tool"):
        make_dispatch(True)({"task": "t", "plan": plan_of("bash"), "results": []})


def test_merge_results_replaces_a_rerun_step_and_keeps_plan_order():
    merged = merge_results([{"step_id": 2, "v": "a"}], [{"step_id": 1, "v": "b"}, {"step_id": 2, "v": "c"}])
    assert merged == [{"step_id": 1, "v": "b"}, {"step_id": 2, "v": "c"}]


def test_prior_outputs_are_truncated_to_1500_chars_for_steps_and_2500_for_the_aggregator():
    long = "x" * 1400 + "y" * 1400 + "z" * 1000  # 3,800 chars
    model, out = run(["llm", "llm", "llm"], model_script={"llm_step": [long, "second", "third"]})
    step2_prompt = model.calls[2]["messages"][1].content
    assert "x" * 1400 + "y" * 100 + " [...]" in step2_prompt and "y" * 101 not in step2_prompt
    agg_prompt = model.calls[-1]["messages"][1].content
    assert "x" * 1400 + "y" * 1100 + " [...]" in agg_prompt and "y" * 1101 not in agg_prompt
    assert out["results"][0]["output"] == long  # the state keeps the whole output


def test_aggregator_sees_task_goal_every_result_and_failures():
    runner = scripted_runner([FakeExecution(False, "", "ZeroDivisionError: division by zero", "error")] * 3)
    model, out = run(["llm", "python", "llm"], task="What is 1/0? Explain it in steps.", runner=runner,
                     model_script={"llm_step": ["the first result", "the third result"]})
    prompt = model.calls[-1]["messages"][1].content
    assert "Task: What is 1/0? Explain it in steps." in prompt and "Goal: Do the task" in prompt
    assert "the first result" in prompt and "the third result" in prompt
    assert "Step 2 - Step 2 (python) (FAILED: do not rely on it)" in prompt
    assert out["results"][1]["ok"] is False


def test_depends_on_limits_the_context_of_a_step():
    model, _ = run(["llm", "llm", "llm"], depends={3: [1]},
                   model_script={"llm_step": ["ALPHA", "BETA", "GAMMA"]})
    step3_prompt = model.calls[3]["messages"][1].content
    assert "ALPHA" in step3_prompt and "BETA" not in step3_prompt


def test_step_prompt_carries_goal_and_assumptions():
    model, _ = run(["llm", "llm", "llm"])
    system = model.calls[1]["messages"][0].content
    assert "Goal: Do the task" in system and "Assumptions: none" in system


def test_build_graph_rejects_a_non_chat_model():
    with pytest.raises(TypeError, match="BaseChatModel"):
        build_graph(model="Qwen/Qwen2.5-1.5B-Instruct")
