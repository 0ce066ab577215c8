"""Replanning: a failed step makes the replanner revise the unfinished steps, a bounded number of times."""

from __future__ import annotations

import json

from fakes import FakeExecution, ScriptedChatModel, plan_json, scripted_runner
from hierplan import build_graph
from hierplan.nodes.replanner import revise_steps

CONFIG = {"configurable": {"thread_id": "rp"}}
TASK = "Draft a plan"  # a deliverable with parts: the planner plans it with split_writing (rules.plan)
FAIL = FakeExecution(False, "", "NameError: name 'x' is not defined", "error")
REVISION = json.dumps({"steps": [
    {"id": 1, "title": "Estimate by hand", "instruction": "Reason it out", "tool": "llm", "expected_output": "n"},
    {"id": 2, "title": "Check", "instruction": "Check the estimate", "tool": "none", "expected_output": "ok"}]})


def run(tools, runner_results, replies, **kwargs):
    model = ScriptedChatModel(script={"planner": [plan_json(tools)], **replies}, default={"python_step": "print(x)"})
    runner = scripted_runner(list(runner_results))
    graph = build_graph(model=model, run_code=runner, constrain=False, max_repairs=0, split_writing=True, **kwargs)
    return model, graph.invoke({"task": TASK}, CONFIG)


def test_a_failed_step_is_followed_by_a_revision_of_the_unfinished_steps():
    model, out = run(["llm", "python", "llm"], [FAIL], {"replanner": [REVISION]})
    assert [c["node"] for c in model.calls] == ["read_requirements", "planner", "llm_step", "python_step", "replanner",
                                               "llm_step", "llm_step", "aggregator"]
    assert [(s["id"], s["title"]) for s in out["plan"]["steps"]] == [
        (1, "Step 1 (llm)"), (2, "Step 2 (python)"), (4, "Estimate by hand"), (5, "Check")]
    assert [(r["step_id"], r["ok"]) for r in out["results"]] == [(1, True), (2, False), (4, True), (5, True)]
    [revision] = out["replans"]
    assert revision["failed_step"] == 2 and revision["applied"] is True and "NameError" in revision["error"]
    assert [s["id"] for s in revision["steps"]] == [4, 5]
    replanner_prompt = model.calls[4]["messages"][1].content
    assert "Failed step 2" in replanner_prompt and "NameError" in replanner_prompt and "Step 3 (llm)" in replanner_prompt


def test_an_unusable_revision_is_recorded_and_the_plan_goes_on():
    model, out = run(["python", "llm", "llm"], [FAIL], {"replanner": ["I think we should try harder."]})
    [revision] = out["replans"]
    assert revision["applied"] is False and revision["raw"] == "I think we should try harder."
    assert [r["step_id"] for r in out["results"]] == [1, 2, 3]


def test_replanning_is_bounded_by_max_replans():
    model, out = run(["python", "python", "python"], [FAIL, FAIL, FAIL], {"replanner": ["no json"]})
    assert model.count("replanner") == 1 and len(out["replans"]) == 1
    model, out = run(["python", "llm", "llm"], [FAIL], {}, max_replans=0)
    assert model.count("replanner") == 0 and not out.get("replans")


def test_revised_steps_are_numbered_after_every_existing_id_and_capped():
    plan = {"steps": [{"id": i, "tool": "llm", "depends_on": None} for i in (1, 2, 3, 4, 5, 6, 7)]}
    new = [{"id": i, "tool": "llm", "depends_on": [1]} for i in (1, 2, 3)]
    steps = revise_steps(plan, {1, 2, 3, 4, 5, 6}, new)
    assert [s["id"] for s in steps] == [1, 2, 3, 4, 5, 6, 8, 9]  # 8 steps at most; step 7 was replaced
    assert all(s["depends_on"] is None for s in steps[6:])


def test_replanner_normalises_tool_names_like_the_planner():
    shouting = REVISION.replace('"tool": "llm"', '"tool": " LLM "')
    _, out = run(["llm", "python", "llm"], [FAIL], {"replanner": [shouting]})
    [revision] = out["replans"]
    assert revision["applied"] is True and [s["tool"] for s in revision["steps"]] == ["llm", "none"]


def test_an_invalid_revision_records_why():
    _, out = run(["python", "llm", "llm"], [FAIL], {"replanner": ['{"steps": []}']})
    [revision] = out["replans"]
    assert revision["applied"] is False and revision["parse_error"].startswith("steps: List should have at least 1")


def test_with_structured_output_the_revision_is_asked_for_as_a_draft_revision():
    from fakes import StructuredScriptedChatModel
    from hierplan.schema import DraftRevision

    model = StructuredScriptedChatModel(script={"planner": [plan_json(["llm", "python", "llm"])],
                                                "replanner": [REVISION]}, default={"python_step": "print(x)"})
    graph = build_graph(model=model, run_code=scripted_runner([FAIL]), max_repairs=0, split_writing=True)
    out = graph.invoke({"task": TASK}, CONFIG)
    [replan] = [c for c in model.calls if c["node"] == "replanner"]
    assert replan["kwargs"]["response_format"] is DraftRevision and "seed" not in replan["kwargs"]
    assert out["replans"][0]["applied"] and [s["id"] for s in out["plan"]["steps"]] == [1, 2, 4, 5]
