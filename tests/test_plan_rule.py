"""A question one program answers is one Python step (hierplan.rules.plan): its plan written by rule, the rule on
plans the model split, and the graph running either as one program."""

from __future__ import annotations

import json

import pytest
from fakes import ScriptedChatModel
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ValidationError

from hierplan import SamplingConfig, build_graph
from hierplan.config import CODE_MAX_NEW_TOKENS, DATA_CODE_MAX_NEW_TOKENS, MAX_INSTRUCTION_CHARS, MAX_STEPS
from hierplan.nodes import prompts
from hierplan.rules.plan import (ONE_PROGRAM_PREFIX, WHOLE_TASK_INSTRUCTION, one_program, plan_outline, planned_by_rule,
                                 question_of, step_bound, whole_task_plan, whole_task_step)
from hierplan.schema import Plan
from hierplan.rules.tools import choose_tools
from hierplan.tools import run_python

TASK = "Anna sweeps 10 rooms at 3 minutes a room. Billy does 2 loads of laundry at 9 minutes a load and washes " \
       "dishes at 2 minutes a dish. How many dishes must Billy wash to work as long as Anna?"


def step(i, instruction, tool, title=None, expected=""):
    return {"id": i, "title": title or f"Part {i}", "instruction": instruction, "tool": tool,
            "expected_output": expected, "depends_on": None}


def split_plan(*tools):
    instructions = ["Compute Anna's minutes", "Compute Billy's laundry minutes.", "The dishes for the rest",
                    "State the number of dishes."]
    return {"goal": "The dishes", "assumptions": [], "steps": [
        step(i, instructions[i - 1], tool, expected=f"result {i}") for i, tool in enumerate(tools, start=1)]}


def test_a_numeric_question_split_over_steps_becomes_one_program_with_their_outline():
    out = one_program(split_plan("python", "python", "llm", "none"), "numeric", TASK)
    assert len(out["steps"]) == 1
    one = out["steps"][0]
    assert one["tool"] == "python" and one["id"] == 1 and one["depends_on"] == []
    # the working steps' instructions in order, each a sentence; the presenting step ("none") is left out
    assert one["instruction"] == (ONE_PROGRAM_PREFIX + "Compute Anna's minutes. Then: Compute Billy's laundry "
                                  "minutes. Then: The dishes for the rest.")
    assert (one["title"], one["expected_output"]) == ("Part 2", "result 2")  # the last Python step's
    assert "asks one question" in one["tool_reason"] and "4 planned steps" in one["tool_reason"]
    assert out["goal"] == "The dishes"


@pytest.mark.parametrize("kind, task, files, decided, tools", [
    ("writing", TASK, (), (), ("python", "python")),                       # asks for no quantity
    ("numeric", TASK + " And how many minutes is that?", (), (), ("python", "python")),  # two questions
    ("numeric", TASK, ("chores.csv",), (), ("python", "python")),         # the user's files
    ("numeric", TASK, (), (2,), ("python", "python")),                    # a step a person (or a rule) decided
    ("numeric", TASK, (), (), ("python",)),                               # one step already
    ("numeric", TASK, (), (), ("llm", "none")),                           # nothing computes
    ("numeric", TASK, (), (), ("python", "chore_log")),                   # a registered tool's step
])
def test_plans_the_rule_leaves_as_they_are(kind, task, files, decided, tools):
    plan = split_plan(*tools)
    assert one_program(plan, kind, task, files, decided) is plan


def test_the_outline_is_cut_to_the_schemas_instruction_limit_at_a_word():
    plan = {"goal": "g", "assumptions": [], "steps": [step(i, "word " * 90, "python") for i in (1, 2, 3)]}
    one = one_program(plan, "numeric", TASK)["steps"][0]
    assert len(one["instruction"]) <= MAX_INSTRUCTION_CHARS and one["instruction"].endswith("word\u2026")


def test_an_outline_already_in_one_program_form_is_not_prefixed_twice():
    plan = {"goal": "g", "assumptions": [], "steps": [step(1, "In one program: a, then b", "python"),
                                                      step(2, "In one program: c", "python")]}
    assert one_program(plan, "numeric", TASK)["steps"][0]["instruction"] == \
        "In one program: a, then b. Then: c."


def test_it_runs_after_the_tool_rule_on_the_tools_that_rule_chose():
    # the planner named llm for a calculation: the tool rule makes it python, then the plan is one program
    plan = choose_tools(split_plan("llm", "llm", "python"), "numeric", (), (), TASK)
    assert [s["tool"] for s in plan["steps"]] == ["python", "python", "llm"]
    one = one_program(plan, "numeric", TASK)["steps"]
    assert [s["tool"] for s in one] == ["python"] and one[0]["instruction"].endswith("The dishes for the rest.")


def test_a_question_one_program_answers_is_planned_by_rule_without_a_model_call():
    plan = whole_task_plan(TASK)
    Plan.model_validate(plan)
    assert plan["goal"] == "How many dishes must Billy wash to work as long as Anna?" and plan["assumptions"] == []
    [one] = plan["steps"]
    assert one["tool"] == "python" and one["instruction"] == WHOLE_TASK_INSTRUCTION
    assert "asks one thing" in one["tool_reason"]


@pytest.mark.parametrize("task, question", [
    (TASK, "How many dishes must Billy wash to work as long as Anna?"),
    ("Compute 17 * 23. Give the product.", "Give the product."),          # no question mark: the last sentence
    ("A pen costs $3.\n\nHow much   do 7 cost?", "How much do 7 cost?"),
    ("   ", "The task's answer"),
    ("How much is 1.5 + 2.5? Answer in kg.", "How much is 1.5 + 2.5?"),       # no sentence ends inside a number
    ("Pay $2.50 an item for 3 items, what is the total?", "Pay $2.50 an item for 3 items, what is the total?"),
    ("Data at https://ex.com/p?id=3. Add 3 and 4.", "Add 3 and 4."),           # nor inside a URL
    ("Take e.g. 3 apples. How many are there?", "How many are there?"),       # nor after "e.g."
])
def test_the_rule_plans_goal_is_the_tasks_question(task, question):
    assert question_of(task) == question


def test_a_long_question_is_cut_to_the_goal_limit_at_a_word():
    goal = whole_task_plan("How many " + "very " * 100 + "big apples?")["goal"]
    Plan.model_validate({**whole_task_plan(TASK), "goal": goal})
    assert goal.endswith("very\u2026")


@pytest.mark.parametrize("kind, task, files, tools, by_rule", [
    ("numeric", TASK, (), (), True),
    ("numeric", "A pen costs $3. How much do 2 cost? How much do 7 cost?", (), (), False),  # two questions
    ("numeric", TASK, ("chores.csv",), (), True),   # a question about the user's file: one program reads it
    ("numeric", "From sales.csv, compute the totals in three steps: clean, group, chart.", ("sales.csv",), (),
     True),                                         # steps of the one program that reads the file
    ("writing", "From sales.csv, write a plan with steps to grow sales and chart the totals.", ("sales.csv",), (),
     False),                                        # a piece of writing about the file: the planner decides
    ("numeric", TASK, (), ("clock",), False),       # a tool may hold the answer: the planner is shown the tools
    ("writing", "Write a short story about a lighthouse keeper, in under 200 words.", (), (), True),  # one piece
    ("writing", "Write a checklist for opening a small cafe.", (), (), True),  # a deliverable with parts: one piece
    # one question mark, but two things asked: each may get its step
    ("numeric", "Tea costs $4 a box. How much do 3 boxes cost, and how much change is left from $20?", (), (), False),
    ("numeric", "Tea costs $4 a box and I buy 3. Find the total. Then list what I bought.", (), (), False),
])
def test_which_tasks_are_planned_by_rule(kind, task, files, tools, by_rule):
    assert planned_by_rule(kind, task, files, tools) is by_rule
    # split_writing lets the planner split a deliverable with parts (the checklist), and changes nothing else
    split = task == "Write a checklist for opening a small cafe."
    assert planned_by_rule(kind, task, files, tools, split_writing=True) is (by_rule and not split)


def test_the_graph_plans_a_one_question_task_by_rule_and_asks_the_step_as_the_check():
    model = ScriptedChatModel(default={"python_step": "```python\nprint((10 * 3 - 2 * 9) // 2)\n```",
                                       "python_check": "```python\nprint((30 - 18) // 2)\n```"})
    graph = build_graph(model, InMemorySaver(), sampling=SamplingConfig(seed=1), run_code=run_python)
    out = graph.invoke({"task": TASK}, {"configurable": {"thread_id": "rule"}})
    assert out["plan_source"] == "rule"
    assert out["plan"]["goal"] == "How many dishes must Billy wash to work as long as Anna?"
    assert [(s["tool"], s["instruction"]) for s in out["plan"]["steps"]] == [("python", WHOLE_TASK_INSTRUCTION)]
    assert model.count("planner") == 0 and model.count("python_step") == 1 and model.count("python_check") == 1
    assert out["final"].rstrip().endswith("6")
    asked = [c for c in model.calls if c["node"] == "python_step"][0]["messages"]
    check = [c for c in model.calls if c["node"] == "python_check"][0]["messages"]
    # the rule plan's instruction is not sent as an outline: the step's request is the check's, drawn apart
    assert [m.content for m in asked] == [m.content for m in check] == [prompts.CHECK_SYSTEM, f"Task: {TASK}"]
    seeds = [c["kwargs"]["seed"] for c in model.calls if c["node"] in ("python_step", "python_check")]
    assert len(set(seeds)) == 2


def test_a_question_about_the_users_table_is_one_program_checked_by_another_reading_the_file(tmp_path):
    from hierplan.tools.files import load_files

    csv = tmp_path / "chores.csv"
    csv.write_text("chore,minutes\nsweep,30\ndishes,12\nlaundry,18\n")
    task = ("Identify the longest chore and the mean minutes in chores.csv. "
            "Answer format: @longest[name], @mean_minutes[number rounded to 1 decimal]")
    step_program = ("import pandas as pd\ndf = pd.read_csv('data/chores.csv')\n"
                    "print(f\"@longest[{df.loc[df.minutes.idxmax(), 'chore']}], @mean_minutes[{df.minutes.mean():.1f}]\")")
    check_program = ("import csv\nrows = list(csv.DictReader(open('data/chores.csv')))\n"
                     "m = [int(r['minutes']) for r in rows]\nlongest = max(rows, key=lambda r: int(r['minutes']))\n"
                     "print('longest:', longest['chore'], 'mean:', round(sum(m) / len(m), 1))")
    model = ScriptedChatModel(default={"python_step": f"```python\n{step_program}\n```",
                                       "python_check": f"```python\n{check_program}\n```"})
    graph = build_graph(model, InMemorySaver(), run_code=run_python, constrain=False)
    out = graph.invoke({"task": task, "files": load_files([csv])}, {"configurable": {"thread_id": "file"}})
    assert model.count("planner") == 0 and out["plan_source"] == "rule" and out["kind"] == "numeric"
    assert "a question about the user's files" in out["plan_reason"]
    # both programs were shown the file and read it; they agree on the values, whatever their labels
    for node in ("python_step", "python_check"):
        [call] = [c for c in model.calls if c["node"] == node]
        assert "- chores.csv (" in call["messages"][-1].content
    assert out["vote"]["decided"] and out["vote"]["agreed"] == 2
    # the answer is what the kept program printed, in the format the task asked for
    assert out["final"] == "@longest[sweep], @mean_minutes[20.0]"


def test_a_request_to_write_about_the_users_file_is_writing():
    from hierplan.rules.kind import task_kind

    assert task_kind("Summarise notes.txt in a paragraph.", with_files=True) == "writing"
    assert task_kind("Check if the fares in trips.csv are skewed.", with_files=True) == "numeric"
    assert task_kind("Check if the fares in trips.csv are skewed.") == "writing"  # no file: nothing to analyse


def clock_tool():
    from langchain_core.tools import tool

    @tool
    def clock() -> str:
        """Today's date."""
        return "2026-12-05"

    return clock


def test_the_graph_runs_a_split_question_as_one_program_and_records_why():
    # with a registered tool the planner plans the question (a tool may hold its answer) and may split it
    model = ScriptedChatModel(
        script={"planner": [json.dumps(split_plan("python", "python", "python", "none"))],
                "python_step": ["```python\nanna = 10 * 3\nbilly = 2 * 9\nprint((anna - billy) // 2)\n```"]},
        default={"python_check": "```python\nprint((10 * 3 - 2 * 9) // 2)\n```"})
    graph = build_graph(model, InMemorySaver(), sampling=SamplingConfig(seed=1), run_code=run_python,
                        constrain=False, tools=[clock_tool()])
    out = graph.invoke({"task": TASK}, {"configurable": {"thread_id": "one"}})
    assert [s["tool"] for s in out["plan"]["steps"]] == ["python"]
    assert "one question" in out["plan"]["steps"][0]["tool_reason"]
    assert [r["step_id"] for r in out["results"]] == [1] and out["results"][0]["output"] == "6"
    assert model.count("python_step") == 1 and model.count("python_check") == 1
    asked = [c for c in model.calls if c["node"] == "python_step"][0]["messages"]
    assert "Compute Anna's minutes. Then: Compute Billy's laundry minutes." in asked[-1].content
    assert out["final"].rstrip().endswith("6")
    # The one step does the whole task: asked for as the check is, the plan's outline after the task, so that
    # the check's request is the beginning of the step's (llama.cpp finds it cached).
    check = [c for c in model.calls if c["node"] == "python_check"][0]["messages"]
    outline = out["plan"]["steps"][0]["instruction"]
    assert [m.content for m in asked] == [prompts.CHECK_SYSTEM, f"Task: {TASK}\nThe plan's outline: {outline}"]
    assert asked[0] == check[0] and asked[1].content.startswith(check[1].content + prompts.PLAN_OUTLINE[:10])


def test_a_written_plans_instruction_is_the_outline_and_the_rule_plans_is_not():
    written = "In one program: minutes, then dishes."
    assert plan_outline(step(1, written, "python")) == written
    assert plan_outline(whole_task_plan(TASK)["steps"][0]) is None


@pytest.mark.parametrize("kind, steps, files, whole", [
    ("numeric", ["python"], (), True),
    ("numeric", ["python"], ("sales.csv",), True),   # asked for as the check is, with the files' notes
    ("numeric", ["python", "python"], (), False),    # two questions: each step its part
    ("numeric", ["llm"], (), False),
    ("writing", ["python"], (), False),
])
def test_the_one_python_step_of_a_numeric_plan_is_a_whole_task_program(kind, steps, files, whole):
    plan = {"steps": [step(i + 1, "Compute it.", tool) for i, tool in enumerate(steps)]}
    assert whole_task_step(kind, plan, files) is whole


@pytest.mark.parametrize("kind, task, bound", [
    ("numeric", TASK, 1),                                                    # one question
    ("numeric", "A pen costs $3. How much do 2 cost? How much do 7 cost?", MAX_STEPS),  # two questions
    ("writing", "Write a short story about a lighthouse keeper, in under 200 words.", 1),
    ("writing", "Compose me a 300+ word essay on winter light.", 1),
    ("writing", "Write a cover letter for a nursing job. Do not use commas.", 1),
    ("writing", "Write a checklist for moving house.", 1),           # a task with parts
    ("writing", "Write a project proposal and a short email announcing it.", 1),
    ("writing", "What are the early signs of flu? Answer in lowercase.", 1),  # an answer to a question
    ("writing", "Explain how vaccines work, in three paragraphs.", 1),
    ("writing", "Plan the first week of a new developer.", 1),
    ("writing", "Create a 5 day itinerary for a trip to Lisbon.", 1),
])
def test_a_task_one_step_does_gets_a_one_step_plan(kind, task, bound):
    assert step_bound(kind, task) == bound
    # a deliverable with parts (a checklist, a proposal, a plan, an itinerary) only where the run lets the planner
    parts = task in ("Write a checklist for moving house.", "Write a project proposal and a short email announcing it.",
                     "Plan the first week of a new developer.", "Create a 5 day itinerary for a trip to Lisbon.")
    assert step_bound(kind, task, split_writing=True) == (MAX_STEPS if parts else bound)


def test_tools_a_deliverable_with_parts_or_writing_about_files_leave_the_planner_free():
    assert step_bound("numeric", TASK, files=["chores.csv"]) == 1
    assert step_bound("numeric", "Clean chores.csv in steps and chart it.", files=["chores.csv"]) == 1
    assert step_bound("writing", "Make a plan from chores.csv and chart it.", files=["chores.csv"]) == MAX_STEPS
    assert step_bound("writing", "Write a poem about rain.", tools=["weather"]) == MAX_STEPS
    assert step_bound("writing", "Summarise notes.txt in a paragraph.", files=["notes.txt"]) == MAX_STEPS


def test_the_demo_task_is_one_piece_unless_the_run_lets_the_planner_split_it():
    from hierplan.cli.run_cmd import DEMO_TASK

    assert step_bound("writing", DEMO_TASK) == 1 and step_bound("writing", DEMO_TASK, split_writing=True) == MAX_STEPS


class StructuredRecorder(ScriptedChatModel):
    """A scripted model that takes structured output and records the schema each structured call asked for."""

    schemas: list = []

    def with_structured_output(self, schema, **kwargs):
        from langchain_core.runnables import RunnableLambda

        def answer(messages, **sampling):
            self.schemas.append(schema)
            reply = self.invoke(messages)
            return {"raw": reply, "parsed": schema.model_validate_json(reply.content), "parsing_error": None}

        return RunnableLambda(answer)


KEEPER = ("Every night for thirty years, Ada climbed the hundred steps of the lighthouse and lit the lamp. Ships she "
          "never met passed safely in the dark. One stormy evening a small boat lost its way, and for the first time a "
          "sailor knocked on her door to say thank you.")


def test_one_piece_of_writing_is_planned_by_rule_with_the_requirements_read_from_the_task():
    story = "Write a short story about a lighthouse keeper, in under 200 words."
    checklist = json.dumps({"requirements": [
        {"quote": "in under 200 words", "kind": "word_count", "number": 200, "bound": "at most", "text": None},
        # not the task's words: dropped, so it is no assumption of the plan and no check
        {"quote": "in rhyme", "kind": "word_count", "number": 9, "bound": "exactly", "text": None}]})
    model = StructuredRecorder(script={"read_requirements": [checklist]}, default={"aggregator": KEEPER})
    model.schemas = []
    graph = build_graph(model, InMemorySaver(), run_code=run_python)
    out = graph.invoke({"task": story}, {"configurable": {"thread_id": "bound"}})
    assert [c["node"] for c in model.calls] == ["read_requirements", "aggregator"]  # no planner, no step call
    assert out["final"].rstrip() == KEEPER and out["plan_source"] == "rule"
    assert "one piece of writing" in out["plan_reason"]
    Plan.model_validate(out["plan"])
    assert out["plan"]["assumptions"] == ["Requirement: at most 199 words"]
    [one] = out["plan"]["steps"]
    assert one["tool"] == "none" and "one piece of writing" in one["tool_reason"]
    # the regexes read the limit too: one instruction, checked once
    assert [i["kind"] for i in out["instruction_check"]["instructions"]] == ["words", "no_repeats", "told_back"]


def test_a_draft_that_copies_the_request_back_is_answered_plainly_and_the_piece_kept():
    task = "Write a short story about a lighthouse keeper who saves a ship."
    model = StructuredRecorder(script={"read_requirements": [json.dumps({"requirements": []})],
                                       "aggregator": [task], "plain_answer": [KEEPER]})
    model.schemas = []
    graph = build_graph(model, InMemorySaver(), run_code=run_python)
    out = graph.invoke({"task": task}, {"configurable": {"thread_id": "echo"}})
    assert [c["node"] for c in model.calls] == ["read_requirements", "aggregator", "plain_answer"]
    check = out["instruction_check"]
    assert check["draft_problems"][0].startswith("it repeats the task's words")
    assert out["final"].rstrip() == KEEPER and check["ok"]
    # answered from the task alone
    assert model.calls[-1]["messages"][-1].content == task


def test_a_data_questions_failed_program_is_outvoted_by_checks_instead_of_replanned(tmp_path):
    from hierplan.tools.files import load_files

    csv = tmp_path / "chores.csv"
    csv.write_text("chore,minutes\nsweep,30\ndishes,12\n")
    task = "What is the mean of the minutes in chores.csv?"
    good = "```python\nimport pandas as pd\nprint(pd.read_csv('data/chores.csv').minutes.mean())\n```"
    model = ScriptedChatModel(default={"python_step": "```python\nprint(open('chores.csv').read())\n```",
                                       "python_check": good})
    graph = build_graph(model, InMemorySaver(), run_code=run_python, constrain=False)
    out = graph.invoke({"task": task, "files": load_files([csv])}, {"configurable": {"thread_id": "outvoted"}})
    assert model.count("replanner") == 0 and out.get("replans", []) == []
    assert out["final"] == "21.0" and out["vote"]["decided_by"] >= 1

    broken = ScriptedChatModel(default={"python_step": "```python\nprint(1/0)\n```",
                                        "python_check": "```python\nprint(1/0)\n```"})
    out = build_graph(broken, InMemorySaver(), run_code=run_python, constrain=False).invoke(
        {"task": task, "files": load_files([csv])}, {"configurable": {"thread_id": "none"}})
    assert out["final"].startswith("No program could answer the question from the files.")
    assert "ZeroDivisionError" in out["final"] and broken.count("replanner") == 0


def test_a_data_answer_is_stated_in_the_template_the_task_spells(tmp_path):
    from hierplan.tools.files import load_files

    csv = tmp_path / "chores.csv"
    csv.write_text("chore,minutes\nsweep,30\ndishes,12\n")
    task = "What is the mean of the minutes in chores.csv? Answer as @mean_minutes[value]."
    loose = "```python\nimport pandas as pd\nprint('@mean_minutes', pd.read_csv('data/chores.csv').minutes.mean())\n```"
    model = ScriptedChatModel(default={"python_step": loose, "python_check": loose})
    out = build_graph(model, InMemorySaver(), run_code=run_python, constrain=False).invoke(
        {"task": task, "files": load_files([csv])}, {"configurable": {"thread_id": "template"}})
    assert out["final"] == "@mean_minutes[21.0]"
    assert out["results"][-1]["stdout"] == "@mean_minutes 21.0\n"  # the program's own output stays as it printed


def test_a_split_vote_on_a_data_question_keeps_the_plans_program(tmp_path):
    """A data question's plan step is itself a whole-task program: when no value wins, its answer is kept, not
    the first check's (a numeric task without files keeps the check's: test_vote)."""
    from hierplan.tools.files import load_files

    csv = tmp_path / "chores.csv"
    csv.write_text("chore,minutes\nsweep,30\ndishes,12\n")
    task = "What is the mean of the minutes in chores.csv?"
    step = "```python\nimport pandas as pd\nprint(pd.read_csv('data/chores.csv').minutes.mean())\n```"
    checks = iter(["```python\nprint(30.0)\n```", "```python\nprint(12.0)\n```", "```python\nprint(42.0)\n```"])
    model = ScriptedChatModel(default={"python_step": step, "python_check": lambda messages, kwargs: next(checks)})
    out = build_graph(model, InMemorySaver(), run_code=run_python, constrain=False).invoke(
        {"task": task, "files": load_files([csv])}, {"configurable": {"thread_id": "split"}})
    assert out["vote"]["decided"] and out["vote"]["agreed"] == 1 and out["vote"]["programs"] == 4
    assert out["vote"]["decided_by"] == 0 and out["final"] == "21.0"
    # a program over the user's files may run longer than a step's computation
    budgets = {c["kwargs"]["max_tokens"] for c in model.calls if c["node"] in ("python_step", "python_check")}
    assert budgets == {DATA_CODE_MAX_NEW_TOKENS} and DATA_CODE_MAX_NEW_TOKENS > CODE_MAX_NEW_TOKENS
