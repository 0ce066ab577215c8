"""Python steps share names like notebook cells: the earlier steps' programs run first, silently (the
sandbox side, ``run_python(code, before=...)``, is tested in test_sandbox_basic.py)."""

from __future__ import annotations

from fakes import FakeExecution, ScriptedChatModel, scripted_runner
from hierplan.config import SamplingConfig
from hierplan.nodes.context import earlier_programs
from langgraph.runtime import Runtime

from hierplan.nodes.python_step import make_python_step


def _step(step_id, tool="python", depends_on=None):
    return {"id": step_id, "title": f"S{step_id}", "instruction": "i", "tool": tool, "expected_output": "o",
            "depends_on": depends_on}


def _result(step_id, code, ok=True, tool="python"):
    return {"step_id": step_id, "title": f"S{step_id}", "tool": tool, "output": "x", "ok": ok, "code": code}


def test_a_step_gets_the_successful_python_programs_it_builds_on_through_any_step_in_the_order_they_ran():
    steps = [_step(1, depends_on=[]), _step(2, depends_on=[]), _step(3, "llm", depends_on=[1]),
             _step(4, depends_on=[]), _step(5, depends_on=[3, 2])]
    plan = {"steps": steps}
    results = [_result(2, "b = 2"), _result(1, "a = 1"), _result(3, None, tool="llm"), _result(4, "d = 4")]
    # 5 needs 3 (which needs 1) and 2; 4 is not among them. Finishing order (2 before 1) is kept.
    assert earlier_programs(results, plan, steps[4]) == ["b = 2", "a = 1"]
    failed = [_result(2, "b = 2", ok=False), *results[1:]]
    assert earlier_programs(failed, plan, steps[4]) == ["a = 1"]
    # Without depends_on a step builds on every earlier step.
    plan_sequential = {"steps": [_step(1), _step(2), _step(3)]}
    assert earlier_programs([_result(1, "a = 1"), _result(2, "b = 2")], plan_sequential,
                            plan_sequential["steps"][2]) == ["a = 1", "b = 2"]


def test_the_node_runs_the_earlier_programs_first_and_shows_them_in_the_request():
    steps = [_step(1, depends_on=[]), _step(2, depends_on=[1])]
    state = {"task": "t", "kind": "writing", "plan": {"goal": "g", "assumptions": [], "steps": steps},
             "results": [{**_result(1, "pens = 3\nprint(pens)"), "output": "3"}], "step": steps[1]}
    model = ScriptedChatModel(script={"python_step": ["print(pens * 2)"]})
    runner = scripted_runner([FakeExecution(True, "6\n")])
    result = make_python_step(model, SamplingConfig(), runner)(state, Runtime())["results"][0]
    assert runner.seen == ["print(pens * 2)"] and runner.seen_before == [["pens = 3\nprint(pens)"]]
    assert result["ok"] and result["code"] == "print(pens * 2)"
    request = model.calls[0]["messages"][-1].content
    assert "Step 1 - S1:\n3\nIts program, already run (its variables exist):\n```python\npens = 3\nprint(pens)\n```" \
        in request
