"""The independent check of a numeric plan's answer: whole-task programs drawn by the checker node once the steps
are done, and the vote node's loop back to it for tie-breaks (hierplan.nodes.checker, hierplan.nodes.vote,
hierplan.rules.vote)."""

from __future__ import annotations

import pytest
from fakes import ScriptedChatModel, plan_json
from langgraph.checkpoint.memory import InMemorySaver

from hierplan import SamplingConfig, build_graph
from hierplan.nodes import prompts
from hierplan.config import MAX_TIE_BREAKS, WARM_TEMPERATURE
from hierplan.rules.vote import has_majority, names_spelled, tally
from hierplan.tools import run_python

# Two questions, so the plan keeps its steps (one question is one program: rules.plan).
TASK = "A pen costs 3 dollars. What does one pen cost? How many dollars do 7 pens cost?"


def program(value: str) -> str:
    return f"```python\nprint({value})\n```"


def by_temperature(cold: list[str], warm: list[str]):
    """python_check replies by sampling temperature: the check (the code temperature) and the tie-break
    (warm) have a queue each, whatever order calls arrive in."""
    queues = {0.2: list(cold), WARM_TEMPERATURE: list(warm)}
    return lambda messages, kwargs: queues[kwargs["temperature"]].pop(0)


def run(cold: list[str], warm: list[str], step_programs: list[str], task: str = TASK):
    model = ScriptedChatModel(
        script={"planner": [plan_json(["python", "python", "llm"])], "python_step": step_programs,
                "aggregator": ["Seven pens cost 21 dollars.\nFinal answer: 21"]},
        default={"python_check": by_temperature(cold, warm)})
    # split_writing: a writing task with parts is planned by the planner (a numeric task is not affected)
    graph = build_graph(model, InMemorySaver(), sampling=SamplingConfig(seed=1), run_code=run_python,
                        split_writing=True)
    out = graph.invoke({"task": task}, {"configurable": {"thread_id": "t"}})
    return model, out


def test_the_check_is_drawn_after_the_steps_and_an_agreement_needs_no_tie_break():
    model, out = run([program("3 * 7")], [], [program("3"), program("3 * 7")])
    last = out["results"][1]
    assert last["check"] == {"kind": "vote", "step_id": 2, "answers": ["21", "21"], "chosen": "21", "agreed": 2,
                             "programs": 2, "changed": False, "decided": True, "decided_by": 0, "stdout": "21\n"}
    assert out["vote"] == last["check"]
    assert "check" not in out["results"][0] or out["results"][0]["check"] is None  # only the last computation
    nodes = [c["node"] for c in model.calls]
    assert nodes.count("python_check") == 1
    assert nodes.index("python_check") > max(i for i, n in enumerate(nodes) if n == "python_step")
    # Only the last computation is told that its number is the task's answer.
    asked = [c["messages"][-1].content for c in model.calls if c["node"] == "python_step"]
    assert [prompts.LAST_COMPUTATION in text for text in asked] == [False, True]
    # The check ran on its own (none of the steps' programs before it), and the run records it and its call.
    assert TASK in [c for c in model.calls if c["node"] == "python_check"][0]["messages"][-1].content
    assert [c["stdout"] for c in out["checks"]] == ["21\n"]
    assert [c["node"] for c in out["calls"]].count("python_check") == 1


def test_a_majority_against_the_plan_changes_the_number_and_the_answer_ends_on_it():
    model, out = run([program("3 * 7")], [program("21")], [program("3"), program("3 + 7")])
    last = out["results"][1]  # the plan says 10, the check 21: the tie-break, 21, decides
    assert last["check"]["answers"] == ["10", "21", "21"] and last["check"]["chosen"] == "21"
    assert last["check"]["changed"] is True and last["check"]["decided_by"] == 1  # the first whole-task program
    # the step keeps what its own program printed; the kept number's output is the check's
    assert last["output"] == "10" and last["code"] == "print(3 + 7)" and last["check"]["stdout"] == "21\n"
    assert model.count("python_check") == 2
    assert out["answer_check"]["ok"] is True


def test_a_split_after_every_tie_break_keeps_the_whole_task_programs_number():
    model, out = run([program("20")], [program("22"), program("24")], [program("3"), program("3 + 7")])
    check = out["results"][1]["check"]
    assert check["answers"] == ["10", "20", "22", "24"] and check["chosen"] == "20" and check["changed"]
    temperatures = [c["kwargs"]["temperature"] for c in model.calls if c["node"] == "python_check"]
    assert temperatures == [0.2] + [WARM_TEMPERATURE] * MAX_TIE_BREAKS
    seeds = [c["kwargs"]["seed"] for c in model.calls if c["node"] == "python_check"]
    assert len(set(seeds)) == 3  # draws of one prompt differ by seed


def test_a_second_tie_break_is_drawn_only_while_the_vote_is_split():
    model, out = run([program("20")], [program("22"), program("22")], [program("3"), program("3 + 7")])
    check = out["results"][1]["check"]
    assert check["answers"] == ["10", "20", "22", "22"] and check["chosen"] == "22" and check["agreed"] == 2
    assert model.count("python_check") == 3


def test_the_tie_break_can_side_with_the_plan():
    _, out = run([program("20")], [program("3 + 7")], [program("3"), program("3 + 7")])
    check = out["results"][1]["check"]
    assert check["answers"] == ["10", "20", "10"] and check["chosen"] == "10" and not check["changed"]


def test_failed_check_programs_do_not_vote():
    failing = "```python\nraise SystemExit(1)\n```"
    _, out = run(["no code here"], [failing, failing], [program("3"), program("3 * 7")])
    check = out["results"][1]["check"]
    assert check["answers"] == ["21", None, None, None] and check["chosen"] == "21" and check["agreed"] == 1


def test_a_task_that_asks_for_no_quantity_is_not_checked():
    # a writing task with parts ("stages"), split_writing: the planner's python steps run (one piece of writing
    # is planned by rule, with no python step to check)
    model, out = run([], [], [program("3"), program("'ok'")], task="Write a poem about 3 pens in three stages.")
    assert model.count("planner") == 1 and model.count("python_step") == 2
    assert model.count("python_check") == 0 and not out.get("checks")
    assert all(not r.get("check") for r in out["results"])


def test_a_numeric_plan_that_computed_no_number_goes_straight_to_the_aggregator():
    model, out = run([program("21")], [], [program("'no number'"), program("'none either'")])
    assert model.count("python_check") == 0 and "vote" not in out and not out.get("checks")


def test_the_callers_kind_overrides_the_rule():
    model = ScriptedChatModel(script={"planner": [plan_json(["python", "llm", "llm"])],
                                      "python_step": [program("3 * 7")]},
                              default={"python_check": program("21"), "aggregator": "21"})
    graph = build_graph(model, InMemorySaver(), run_code=run_python)
    out = graph.invoke({"task": "Write a poem about 3 pens.", "kind": "numeric"}, {"configurable": {"thread_id": "k"}})
    assert out["kind"] == "numeric" and model.count("python_check") == 1 and out["vote"]["decided"]
    out = graph.invoke({"task": TASK, "kind": "writing"}, {"configurable": {"thread_id": "w"}})
    assert out["kind"] == "writing" and "instruction_check" in out and "answer_check" not in out


def test_majority_and_tally_rules():
    assert has_majority(["21", "21"]) and not has_majority(["10", "21"]) and not has_majority(["21", None])
    assert not has_majority(["1", "1", "2", "2"]) and has_majority(["1", "2", "2"])
    assert tally(["10", "21", "21"]) == (1, 2)
    assert tally(["10", "20", "22", "24"]) == (1, 1)  # a split keeps the first whole-task program's number
    assert tally(["10", None, None]) == (0, 1)  # every check failed: the plan's
    with pytest.raises(ValueError, match="no program printed a number"):
        tally([None, None])


def test_of_programs_that_agree_the_one_labelling_its_values_as_the_task_names_them_is_kept():
    task = "Report the spread as @spread_ratio[value] and the trend as @trend_word[word]."
    assert names_spelled(task, "@0.83[up]") == 0
    assert names_spelled(task, "@spread_ratio[0.83] @trend_word[up]") == 2
    assert names_spelled(task, "Spread_Ratio: 0.83") == 1
    assert names_spelled("What is the mean price?", "mean_price 3") == 0  # the task spells no such name
    # the two that print 0.83 and up agree; the second labels them as asked
    assert tally(["0.83 up", "0.83 up", "0.9 up"], [0, 2, 2]) == (1, 2)
    assert tally(["0.83 up", "0.83 up"], [1, 1]) == (0, 2)  # equally labelled: the first
    assert tally(["0.9 up", "0.83 up", "0.83 up"], [2, 0, 0]) == (1, 2)  # the label never outweighs the votes


def test_a_split_keeps_the_plans_number_when_the_plan_is_itself_a_whole_task_program():
    assert tally(["10", "20", "22"], plan_first=True) == (0, 1)
    assert tally([None, "20", "22"], plan_first=True) == (1, 1)  # the plan's program failed: the first check's
    assert tally(["10", "22", "22"], plan_first=True) == (1, 2)  # never against a majority
