"""Python steps share names like notebook cells: the earlier steps' programs run first, silently."""

from __future__ import annotations

from fakes import FakeExecution, ScriptedChatModel, scripted_runner
from hierplan.config import SamplingConfig
from hierplan.nodes.earlier_programs import earlier_programs, with_earlier_programs
from hierplan.nodes.python_step import make_python_step, run_attempt


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


def test_without_earlier_programs_the_code_runs_unchanged():
    assert with_earlier_programs("print(1)", []) == "print(1)"


def test_in_the_real_sandbox_earlier_names_exist_their_output_is_hidden_and_a_failing_one_is_skipped():
    from hierplan.tools import run_python

    earlier = ["cost = 6\nprint('hidden')", "paid = 10\nprint(paid)\nraise SystemExit(3)", "x = 1 / 0", "y = 2"]
    attempt = run_attempt("change = paid - cost\nprint(change, y)", run_python, earlier)
    assert attempt.ok and attempt.stdout == "4 2\n", attempt


def test_in_the_real_sandbox_a_failure_is_reported_with_the_step_programs_own_lines():
    from hierplan.tools import run_python

    attempt = run_attempt("a = cost\nb = a + missing\nprint(b)", run_python, ["cost = 6"])
    assert not attempt.ok
    assert 'File "<step>", line 2' in attempt.error and "b = a + missing" in attempt.error
    assert "NameError: name 'missing' is not defined" in attempt.error
    assert attempt.code == "a = cost\nb = a + missing\nprint(b)"  # recorded as written, not the wrapper


def test_the_node_runs_the_earlier_programs_and_shows_them_in_the_request():
    steps = [_step(1, depends_on=[]), _step(2, depends_on=[1])]
    state = {"task": "t", "plan": {"goal": "g", "assumptions": [], "steps": steps},
             "results": [{**_result(1, "pens = 3\nprint(pens)"), "output": "3"}], "step": steps[1]}
    model = ScriptedChatModel(script={"python_step": ["print(pens * 2)"]})
    runner = scripted_runner([FakeExecution(True, "6\n")])
    result = make_python_step(model, SamplingConfig(), runner)(state)["results"][0]
    assert runner.seen == [with_earlier_programs("print(pens * 2)", ["pens = 3\nprint(pens)"])]
    assert result["ok"] and result["code"] == "print(pens * 2)"
    request = model.calls[0]["messages"][-1].content
    assert "Step 1 - S1:\n3\nIts program, already run (its variables exist):\n```python\npens = 3\nprint(pens)\n```" \
        in request
