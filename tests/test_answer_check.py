"""Answers grounded in computation: what the aggregator sees, and the check recorded on the run."""

from __future__ import annotations

import json

from fakes import FakeExecution, ScriptedChatModel, scripted_runner
from hierplan import build_graph
from hierplan.nodes import prompts
from hierplan.rules.answer import check_answer
from hierplan.rules.numbers import restates_in_other_unit
from hierplan.nodes.context import aggregator_results

# Two questions, so the plan keeps its steps (one question is one program: rules.plan).
TASK = "Pens cost $2 each. Tom buys 3 pens and pays with $10. What do the pens cost? How much change does he get?"


def result(i, tool, output, ok=True, stdout=None):
    return {"step_id": i, "title": f"Step {i}", "tool": tool, "output": output, "ok": ok,
            "stdout": stdout if stdout is not None else (output + "\n" if tool == "python" else None)}


def test_computations_come_first_with_their_printed_values_and_the_last_one_is_restated():
    results = [result(1, "llm", "We need the cost."), result(2, "python", "6"), result(3, "python", "4"),
               result(4, "python", "Python step failed: NameError", ok=False, stdout="")]
    text = aggregator_results(results, limit=100)
    assert text.startswith(prompts.COMPUTED_HEADER + "Step 2 - Step 2: 6\nStep 3 - Step 3: 4")
    assert text.index("We need the cost.") > text.index("Step 3: 4")
    assert "Step 4 - Step 4 (FAILED" in text  # a failed computation is an ordinary (failed) result
    assert text.endswith(prompts.LAST_COMPUTED.format(value="4"))
    plain = aggregator_results([result(1, "llm", "just words")], limit=100)
    assert prompts.COMPUTED_HEADER not in plain and prompts.LAST_COMPUTED.split("{")[0] not in plain


def test_check_compares_the_answers_last_number_with_the_last_computation():
    results = [result(1, "python", "6"), result(2, "python", "change = 4"), result(3, "llm", "It is 99.")]
    assert check_answer("Tom gets $4 back.\nFinal answer: 4", results) == {
        "ok": True, "answer_number": "4", "computed": "4", "step_id": 2,
        "note": "the answer's last number matches step 2's computation", "other_unit": False}
    bad = check_answer("He gets 6 dollars.", results)
    assert bad["ok"] is False and (bad["answer_number"], bad["computed"]) == ("6", "4")
    assert "computed 4" in bad["note"]
    assert check_answer("No idea.", results)["answer_number"] is None
    json.dumps(bad)  # JSON-safe, as state must be


def test_no_check_without_a_printed_number():
    assert check_answer("4", [result(1, "llm", "4")]) is None
    assert check_answer("4", [result(1, "python", "done", stdout="done\n")]) is None
    assert check_answer("4", [result(1, "python", "x", ok=False)]) is None


def plan():
    return json.dumps({"goal": "Change", "assumptions": [], "steps": [
        {"id": 1, "title": "Cost", "instruction": "Multiply 3 by 2.", "tool": "python", "expected_output": "6"},
        {"id": 2, "title": "Change", "instruction": "Subtract the cost from 10.", "tool": "python"},
        {"id": 3, "title": "Answer", "instruction": "State the change.", "tool": "llm"}]})


def run(final: str, explain: bool = True):
    model = ScriptedChatModel(script={"planner": [plan()], "aggregator": [final]},
                              default={"python_step": "print(1)"})
    graph = build_graph(model, run_code=scripted_runner([FakeExecution(True, "6\n"), FakeExecution(True, "4\n")]),
                        constrain=False, parallel=False, explain=explain)  # explain: the aggregator writes it
    return model, graph.invoke({"task": TASK}, {"configurable": {"thread_id": "ac"}})


def test_a_contradicting_answer_ends_on_the_computed_value_and_is_recorded():
    model, out = run("Tom pays 6 dollars.\nFinal answer: 6")
    assert out["final"] == "Tom pays 6 dollars.\nFinal answer: 4"  # the prose kept, the wrong final line replaced
    check = out["answer_check"]
    assert check["ok"] is False and check["computed"] == "4" and check["answer_number"] == "6"
    assert check["corrected"] is True and "now ends with the computed value" in check["note"]
    [agg] = [c for c in model.calls if c["node"] == "aggregator"]
    user = agg["messages"][-1].content
    assert "Computed with Python" in user and user.rstrip().endswith(prompts.AGGREGATOR_REQUEST_COMPUTED)
    assert "Last computed value: 4" in user


def test_the_same_value_in_another_unit_is_left_as_written():
    
    assert restates_in_other_unit("3", "300") and restates_in_other_unit("2.5", "150")  # dollars, hours
    assert not restates_in_other_unit("7", "300") and not restates_in_other_unit(None, "3")
    _, out = run("Tom pays 400 cents.")  # the computation printed 4 (dollars)
    assert out["final"] == "Tom pays 400 cents." and out["answer_check"]["other_unit"] is True
    assert not out["answer_check"].get("corrected")


def test_an_agreeing_answer_is_recorded_as_ok():
    _, out = run("Final answer: $4")
    assert out["answer_check"]["ok"] is True and out["answer_check"]["step_id"] == 2


def test_a_writing_task_with_a_program_asks_for_the_reply_itself_with_the_task_last():
    from fakes import ScriptedChatModel, plan_json

    from hierplan import build_graph
    from hierplan.nodes import prompts

    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "python", "llm"])],
                                      "python_step": ["```python\nprint('class Planner: ...')\n```"]})
    # a checklist has parts: with split_writing the planner plans it, a program among its steps
    build_graph(model, run_code=lambda code, before=(): type("R", (), {"ok": True, "stdout": "x\n", "error": None,
                                                                     "exit_reason": "ok"})(), split_writing=True
                ).invoke({"task": "Write a checklist for launching a small system in Python."},
                         {"configurable": {"thread_id": "w"}})
    [agg] = [c for c in model.calls if c["node"] == "aggregator"]
    system, user = agg["messages"][0].content, agg["messages"][-1].content
    # No "Final answer: <number>" in a writing task: the notes, then the task, then the request for the reply.
    assert system == prompts.AGGREGATOR_WRITING_SYSTEM and "Final answer" not in system
    assert user.index("print('class Planner") < user.index("Task: Write a checklist")
    assert user.rstrip().endswith("Write the reply to this task now.") and prompts.COMPUTED_HEADER not in user


def test_a_voted_number_is_stated_without_a_model_call_unless_the_run_asks_for_an_explanation():
    model, out = run("never asked for", explain=False)
    assert model.count("aggregator") == 0
    vote = out["vote"]
    assert out["final"] == (f"Change: {vote['chosen']}. Computed with Python: {vote['agreed']} of {vote['programs']} "
                            f"independent programs printed it.\nFinal answer: {vote['chosen']}")
    assert out["answer_check"]["ok"] is True  # the stated number is the computed one
    model, out = run("Tom gets 4 dollars back.\nFinal answer: 4")
    assert model.count("aggregator") == 1 and out["final"].startswith("Tom gets 4 dollars back.")


def test_a_stated_answer_writes_a_whole_number_as_one_and_ends_on_it():
    from hierplan.rules.answer import stated_answer
    from hierplan.rules.numbers import last_number

    text = stated_answer("Tom's change in dollars.", "18.0", 2, 3)
    assert text == ("Tom's change in dollars: 18. Computed with Python: 2 of 3 independent programs printed it.\n"
                    "Final answer: 18")
    assert last_number(stated_answer("Cost of 3 pens", "6.50", 2, 2)) == "6.50"  # not whole: as printed
    assert stated_answer("", "4", 2, 2).startswith("The answer: 4.")
    # a plan by rule's goal is the task's question: answered after it
    assert stated_answer("How many eggs?", "42.0", 2, 2).startswith("How many eggs? 42. Computed with Python")


def run_task(task: str, final: str):
    model = ScriptedChatModel(script={"planner": [plan()], "aggregator": [final]},
                              default={"python_step": "print(1)"})
    graph = build_graph(model, run_code=scripted_runner([FakeExecution(True, "6\n"), FakeExecution(True, "4\n")]),
                        constrain=False, parallel=False)
    return model, graph.invoke({"task": task}, {"configurable": {"thread_id": "ac"}})


def test_a_task_that_asks_to_see_the_working_gets_it_written_by_the_model_without_explain():
    model, out = run_task(TASK + " Show your work step by step.", "2 x 3 = 6, and 10 - 6 = 4.\nFinal answer: 4")
    assert model.count("aggregator") == 1 and out["final"] == "2 x 3 = 6, and 10 - 6 = 4.\nFinal answer: 4"
    [agg] = [c for c in model.calls if c["node"] == "aggregator"]
    assert agg["messages"][-1].content.rstrip().endswith(prompts.AGGREGATOR_REQUEST_WORKING)
    assert out["answer_check"]["ok"] is True and "instruction_check" not in out  # no form stated: nothing to check


def test_a_form_a_numeric_task_states_is_applied_by_program_and_the_checked_number_never_rewritten():
    task = TASK + " Wrap your whole reply in double quotation marks."
    model, out = run_task(task, "Tom pays 6 dollars and gets 4 back.\nFinal answer: 4")
    assert out["final"] == '"Tom pays 6 dollars and gets 4 back.\nFinal answer: 4"'
    assert out["instruction_check"]["ok"] is True and [i["kind"] for i in out["instruction_check"]["instructions"]
                                                        ] == ["quoted", "no_repeats", "told_back"]
    [agg] = [c for c in model.calls if c["node"] == "aggregator"]
    assert "wrapped in double quotation marks" in agg["messages"][-1].content  # the form, told to the writer
    # a form no program can apply is recorded, and the model does not write the answer anew
    model, out = run_task(TASK + " Answer in at least 60 words.", "Tom gets 4 back.\nFinal answer: 4")
    assert model.count("reviser") == 0 and out["final"] == "Tom gets 4 back.\nFinal answer: 4"
    assert out["instruction_check"]["ok"] is False and "at least 60" in out["instruction_check"]["problems"][0]


def test_a_word_problems_quantities_and_nouns_are_not_a_form_to_keep():
    from hierplan.rules.answer import numeric_instructions, prose_asked

    problem = "Max has 5 points and Val has 3 points. Val includes her bonus. How many points do they have?"
    assert numeric_instructions(problem) == [] and prose_asked(problem) is None
    assert prose_asked(problem + " Explain your reasoning.") == "the task asks to see the working"
    assert prose_asked(problem + " Reply in all lowercase letters.") == "the task states its answer's form (lowercase)"
    # a word the task quotes for the answer to use is one
    for ask in (" Use the word 'together' in your answer.", ' Include the word "together".'):
        assert numeric_instructions(problem + ask) == [{"kind": "mentions", "term": "together"}]
        assert prose_asked(problem + ask) == "the task states its answer's form (mentions)"
    # a question about the user's files is answered with what its program printed, in the format it asked
    assert prose_asked("What is the total in sales.csv? Show the steps.", with_files=True) is None
