"""The independent check of a numeric plan's answer: whole-task programs and a vote (hierplan.nodes.vote)."""

from __future__ import annotations

from fakes import ScriptedChatModel, plan_json
from langgraph.checkpoint.memory import InMemorySaver

from hierplan import SamplingConfig, build_graph
from hierplan.tools import run_python

TASK = "A pen costs 3 dollars. How many dollars do 7 pens cost?"


def program(value: str) -> str:
    return f"```python\nprint({value})\n```"


def run(check_replies: list[str], step_programs: list[str], task: str = TASK):
    model = ScriptedChatModel(script={
        "planner": [plan_json(["python", "python", "llm"])],
        "python_step": step_programs,
        "python_check": check_replies,
        "aggregator": ["Seven pens cost 21 dollars.\nFinal answer: 21"],
    })
    graph = build_graph(model, InMemorySaver(), sampling=SamplingConfig(seed=1), run_code=run_python)
    out = graph.invoke({"task": task}, {"configurable": {"thread_id": "t"}})
    return model, out


def test_an_agreeing_program_confirms_the_plan_and_no_tie_break_is_drawn():
    model, out = run([program("3 * 7")], [program("3"), program("3 * 7")])
    last = out["results"][1]
    assert last["check"] == {"kind": "vote", "answers": ["21", "21"], "chosen": "21", "agreed": 2, "programs": 2,
                             "changed": False}
    assert "check" not in out["results"][0] or out["results"][0]["check"] is None  # only the last computation
    assert model.count("python_check") == 1
    # The check program ran on its own: none of the steps' programs before it.
    check_call = [c for c in model.calls if c["node"] == "python_check"][0]
    assert TASK in check_call["messages"][-1].content


def test_a_majority_against_the_plan_changes_the_number_and_the_answer_ends_on_it():
    model, out = run([program("3 * 7"), program("21")], [program("3"), program("3 + 7")])
    last = out["results"][1]
    assert last["check"]["answers"] == ["10", "21", "21"] and last["check"]["chosen"] == "21"
    assert last["check"]["changed"] is True and last["output"] == "21"
    assert model.count("python_check") == 2
    assert out["answer_check"]["ok"] is True


def test_no_majority_keeps_the_first_whole_task_program_number():
    _, out = run([program("20"), program("22")], [program("3"), program("3 + 7")])
    check = out["results"][1]["check"]
    assert check["answers"] == ["10", "20", "22"] and check["chosen"] == "20" and check["changed"]


def test_the_check_samples_at_the_code_temperature_and_the_tie_break_warmer():
    model, _ = run([program("20"), program("22")], [program("3"), program("3 + 7")])
    temperatures = [c["kwargs"]["temperature"] for c in model.calls if c["node"] == "python_check"]
    assert temperatures == [0.2, 0.7]


def test_failed_check_programs_do_not_vote():
    _, out = run(["no code here", "```python\nraise SystemExit(1)\n```"], [program("3"), program("3 * 7")])
    check = out["results"][1]["check"]
    assert check["answers"] == ["21", None, None] and check["chosen"] == "21" and check["agreed"] == 1


def test_a_task_that_asks_for_no_quantity_is_not_checked():
    model, out = run([], [program("3"), program("'ok'")], task="Write a poem about 3 pens.")
    assert model.count("python_check") == 0
    assert all(not r.get("check") for r in out["results"])
