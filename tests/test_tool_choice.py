"""The tool rule: calculations of quantity-asking tasks go to Python, writing stays with the LLM, a person's
edit wins; and the planner and replanner apply it to what they accept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.types import Command

from fakes import FakeExecution, ScriptedChatModel, plan_json, scripted_runner
from hierplan import build_graph
from hierplan.nodes.approval import USER_TOOL_REASON
from hierplan.rules.kind import task_kind
from hierplan.rules.tools import choose_tools, decide, stem


def is_numeric_task(task: str) -> bool:
    return task_kind(task) == "numeric"
from hierplan.schema import DraftPlan, Plan

GENERAL = Path(__file__).resolve().parents[1] / "hierplan" / "eval" / "data" / "general20.jsonl"


def step(i, instruction, tool="llm", title=None, expected="", **extra):
    return {"id": i, "title": title or f"Part {i}", "instruction": instruction, "tool": tool,
            "expected_output": expected, "depends_on": None, **extra}


@pytest.mark.parametrize("task, numeric", [
    ("A box holds 12 eggs. How many eggs are in 5 boxes?", True),
    ("Tickets cost $8. What is the total cost of three tickets?", True),
    ("Calculate the area of a room that is 4 m by 5 m.", True),
    ("What is fifteen more than a quarter of 48?", True),        # an expression asked for
    ("What's 20% of 80?", True),
    ("What is one of the best books of 2020?", False),         # "one of" is no fraction
    ("Write a 3-day itinerary for Rome.", False),               # numbers, but no quantity asked for
    ("Write a 5-item checklist for a camping trip.", False),
    ("Explain how many hours of sleep teenagers need.", False),  # asks "how many", but holds no number
    ("Write a poem about the sea.", False),
    ("what's the mean body temperature of a 30 year old woman?", False),  # one number: a fact, nothing to combine
    ("What is the average of 4 and 10?", True),
    ("What is the total cost of 5 pens at $2 each?", True),
    ("How many minutes are in 7 hours?", True),                # one number, and no values to combine
    ("What is the sum of the first 100 positive integers?", True),  # one number, and a set to add up
    ("Find the total surface area of a cube with side 4 cm.", True),
    ("What is the average of the first 10 prime numbers?", True),
    ("What is the average height of a 7-year-old girl?", False),
    # numbers that only size the answer are no values to compute with
    ("What's the difference between a lake and a pond? Under 80 words, at least 4 sentences.", False),
    # "one" as a pronoun gives no value
    ("What's the difference between a frost warning and a freeze warning, and what do I do for each one? "
     "Two paragraphs, with *** on its own line between them.", False),
    ("Each one of the 4 boxes holds 6 pens. How many pens are there?", True),
    ("Walking at 3 miles an hour, how long does the one mile loop take?", True),  # "the one mile": a value
    ("What's the average weight of a 5 year old labrador? Say 'healthy' at least 2 times.", False),
    ("Sam has 3 cats and 2 dogs. How many pets does he have? Answer in one sentence.", True),
    ("A book has 120 pages. How many are left after reading 45? Reply in under 20 words.", True),
])
def test_a_task_is_numeric_when_it_asks_for_a_quantity_and_holds_a_number(task, numeric):
    assert is_numeric_task(task) is numeric


def test_the_bundled_general_tasks_are_not_numeric():
    tasks = [json.loads(line)["question"] for line in GENERAL.read_text().splitlines() if line.strip()]
    assert len(tasks) == 20 and all("answer" not in json.loads(line) for line in GENERAL.read_text().splitlines())
    assert [t for t in tasks if is_numeric_task(t)] == []


@pytest.mark.parametrize("s, tool", [
    (step(1, "Multiply 3 pens by $2 per pen."), "python"),
    (step(1, "Find the cost of one brown sock.", expected="The cost in dollars"), "python"),
    (step(1, "Work out 45 - 25."), "python"),
    (step(1, "State the change in one sentence.", expected="One sentence with the number"), "none"),
    (step(1, "Write the final answer.", expected="The total"), "none"),   # presents; no expression: no call
    (step(1, "Write the result of 3 * 4 as a sentence."), "python"),     # an expression to evaluate
    (step(1, "Read the problem carefully."), "llm"),
])
def test_steps_of_a_numeric_task(s, tool):
    chosen, reason = decide(s, numeric=True)
    assert chosen == tool and reason


@pytest.mark.parametrize("s, tool", [
    (step(1, "List the items of the checklist.", tool="python"), "llm"),   # the model's python is overridden
    (step(1, "Count how often each word occurs.", tool="python"), "python"),  # text processing it chose
    (step(1, "Count how often each word occurs.", tool="llm"), "llm"),
    (step(1, "Plan the 3 days: one district per day.", tool="python"), "llm"),
    (step(1, "Calculate the budget for the trip."), "python"),
    (step(1, "Sort the list with Python."), "python"),
    (step(1, "Run the code and report what it prints."), "python"),
    (step(1, "Write the script of the workshop's opening talk."), "llm"),
    (step(1, "Explain how computers store numbers."), "llm"),
    (step(1, "Write a 3-4 sentence summary for the 2024-05-01 meeting with 1/2 of the team."), "llm"),
    (step(1, "Check that 12 + 30 adds up."), "python"),
])
def test_steps_of_a_task_that_asks_for_no_quantity(s, tool):
    assert decide(s, numeric=False)[0] == tool


def test_choose_tools_records_reasons_and_keeps_decided_steps():
    plan = {"goal": "g", "assumptions": [], "steps": [
        step(1, "Add 2 and 3."),
        step(2, "Think about it.", tool="none"),  # the model's "none" on a working step: the rule decides
        step(3, "Subtract 1.", tool="llm", tool_reason=USER_TOOL_REASON),  # a person's choice stays
        step(4, "State the answer."),
    ]}
    out = choose_tools(plan, task_kind("I have 2 apples and get 3 more. How many apples do I have?"))
    assert [(s["tool"], bool(s["tool_reason"])) for s in out["steps"]] == [("python", True), ("llm", True),
                                                                          ("llm", True), ("none", True)]
    assert out["steps"][2]["tool_reason"] == USER_TOOL_REASON
    assert plan["steps"][0]["tool"] == "llm" and "tool_reason" not in plan["steps"][0]  # input untouched
    assert choose_tools(out, task_kind("anything")) == out  # idempotent: every step is decided


def test_a_numeric_task_computes_at_least_once():
    plan = {"goal": "g", "assumptions": [], "steps": [
        step(1, "Read the problem."), step(2, "Think it through."), step(3, "State the answer.")]}
    out = choose_tools(plan, task_kind("Ann has 4 cats and Bob has 2. How many do they have?"))
    assert [s["tool"] for s in out["steps"]] == ["llm", "python", "none"]
    assert "no step calculated" in out["steps"][1]["tool_reason"]
    general = choose_tools(plan, task_kind("Write a 4-line poem about cats."))
    assert [s["tool"] for s in general["steps"]] == ["llm", "llm", "llm"]


def test_tool_reason_is_kept_on_a_plan_but_out_of_the_model_facing_schema():
    assert "tool_reason" not in json.dumps(DraftPlan.model_json_schema())
    plan = Plan.model_validate({"goal": "g", "steps": [step(i, "x", tool_reason="because") for i in (1, 2, 3)]})
    assert plan.model_dump()["steps"][0]["tool_reason"] == "because"


def calc_plan() -> str:
    return json.dumps({"goal": "Find the total", "assumptions": [], "steps": [
        step(1, "Multiply 3 by 4.", tool="llm"), step(2, "Add 5 to the product.", tool="llm"),
        step(3, "State the total in one sentence.", tool="python")]})


def test_the_planner_applies_the_rule_to_the_plan_it_accepts():
    model = ScriptedChatModel(script={"planner": [calc_plan()]}, default={"python_step": "print(17)"})
    runner = scripted_runner([FakeExecution(True, "12\n"), FakeExecution(True, "17\n")])
    graph = build_graph(model, run_code=runner, constrain=False)
    # two questions: the plan keeps its steps (one question would be one program, rules.plan)
    out = graph.invoke({"task": "A crate holds 3 rows of 4 jars, plus 5 loose jars. How many jars are in rows? "
                                "How many jars in all?"}, {"configurable": {"thread_id": "tc"}})
    assert [s["tool"] for s in out["plan"]["steps"]] == ["python", "python", "none"]
    assert all(s["tool_reason"] for s in out["plan"]["steps"])
    assert [r["tool"] for r in out["results"]] == ["python", "python", "none"]
    assert model.count("python_step") == 2 and model.count("llm_step") == 0  # the presenting step calls nothing


def test_the_replanner_decides_only_its_new_steps():
    revision = json.dumps({"steps": [step(1, "Divide 12 by 4.", tool="llm")]})
    model = ScriptedChatModel(script={"planner": [calc_plan()], "replanner": [revision]},
                              default={"python_step": "print(1)"})
    runner = scripted_runner([FakeExecution(False, "", "ValueError: x", "error"), FakeExecution(True, "3\n")])
    graph = build_graph(model, run_code=runner, constrain=False, max_repairs=0)
    out = graph.invoke({"task": "Share 12 jars among 4 boxes. How many boxes? How many jars per box?"},
                       {"configurable": {"thread_id": "tr"}})  # two questions: not one program (rules.plan)
    new = [s for s in out["plan"]["steps"] if s["id"] > 3]
    assert [s["tool"] for s in new] == ["python"] and new[0]["tool_reason"].startswith("calculation")
    assert out["results"][-1]["tool"] == "python" and out["results"][-1]["ok"]


def test_an_edited_plan_keeps_the_tools_the_user_wrote():
    model = ScriptedChatModel(script={"planner": [calc_plan()]}, default={"python_step": "print(12)"})
    runner = scripted_runner([FakeExecution(True, "12\n")] * 3)
    graph = build_graph(model, run_code=runner, constrain=False, approve=True)
    config = {"configurable": {"thread_id": "te"}}
    waiting = graph.invoke({"task": "A crate holds 3 rows of 4 jars. How many rows? How many jars?"}, config)
    proposed = waiting["__interrupt__"][0].value["plan"]
    assert [s["tool"] for s in proposed["steps"]] == ["python", "python", "none"]
    edited = json.loads(json.dumps(proposed))
    edited["steps"][1]["tool"] = "llm"      # the person wants the LLM for a calculation
    edited["steps"][2]["tool_reason"] = None
    out = graph.invoke(Command(resume={"action": "edit", "plan": edited}), config)
    assert [r["tool"] for r in out["results"]] == ["python", "llm", "none"]
    reasons = [s["tool_reason"] for s in out["plan"]["steps"]]
    assert reasons[0] == proposed["steps"][0]["tool_reason"] and reasons[1:] == [USER_TOOL_REASON] * 2


def test_a_one_step_writing_plan_is_left_to_the_final_answer():
    note = {"goal": "g", "assumptions": [], "steps": [step(1, "Three warm sentences of thanks.")]}
    out = choose_tools(note, task_kind("Write a short thank-you note to a colleague."))
    assert out["steps"][0]["tool"] == "none" and "reply itself" in out["steps"][0]["tool_reason"]
    two = {**note, "steps": [step(1, "The greeting."), step(2, "The thanks.")]}
    assert [s["tool"] for s in choose_tools(two, task_kind("Write a note."))["steps"]] == ["llm", "llm"]
    # a quantity-asking task's one step computes; a person's choice of llm stays llm
    assert choose_tools({**note, "steps": [step(1, "Add 2 and 3.")]},
                        task_kind("I have 2 apples and get 3 more. How many apples?"))["steps"][0]["tool"] == "python"
    forced = {**note, "steps": [step(1, "Write it.", tool_reason=USER_TOOL_REASON)]}
    assert choose_tools(forced, task_kind("Write a note."))["steps"][0]["tool"] == "llm"


def test_a_one_step_writing_run_calls_the_model_twice_requirements_and_answer():
    # one piece of writing: its one-step plan is written by rule (rules.plan), no planner call
    model = ScriptedChatModel(default={"aggregator": "Thank you for all your help with the launch."})
    out = build_graph(model, constrain=False).invoke({"task": "Write a short thank-you note to a colleague."},
                                                     {"configurable": {"thread_id": "one"}})
    assert out["final"] == "Thank you for all your help with the launch."
    assert out["plan_source"] == "rule" and len(out["plan"]["steps"]) == 1
    assert [r["tool"] for r in out["results"]] == ["none"] and model.count("llm_step") == 0
    assert [c["node"] for c in model.calls] == ["read_requirements", "aggregator"]


def test_a_task_about_the_users_data_may_hold_no_number_and_still_ask_for_one():
    assert task_kind("What is the sum of the rainfall in rain.csv?") == "writing"  # no number, no data
    assert task_kind("What is the sum of the rainfall in rain.csv?", with_data=True) == "numeric"
    assert task_kind("What is the highest rain_mm of a day?", with_data=True) == "numeric"  # a column's name
    assert task_kind("Write a summary of the survey.", with_data=True) == "writing"  # asks for no quantity
    assert task_kind("What does renting every bike cost per week?", with_data=True) == "numeric"
    assert task_kind("What time does the library close?") == "writing"  # holds no number, has no data


@pytest.mark.parametrize("task, numeric", [
    ("Seventeen birds sat on a wire and thirteen flew off. How many stayed?", True),
    ("Twenty-five pupils share ninety-five pencils equally. How many does each get?", True),
    ("A hundred chairs stand in rows of eight. How many full rows are there?", True),
    ("A dozen eggs cost three dollars. How much does one egg cost?", True),
    ("How many seventeenth-century painters can you name?", False),   # no number in it
])
def test_numbers_in_words_count_as_numbers(task, numeric):
    assert is_numeric_task(task) is numeric


def test_with_the_users_files_a_step_that_reads_them_goes_to_python():
    plan = {"goal": "g", "assumptions": [], "steps": [
        step(1, "Find the customer of the largest order in orders.csv."),
        step(2, "Look at the amount column and pick the biggest."),
        step(3, "Write a friendly sentence naming the customer.")]}
    out = choose_tools(plan, task_kind("Which customer placed the largest order?"), files=["orders.csv"])
    assert [s["tool"] for s in out["steps"]] == ["python", "python", "llm"]
    assert "orders.csv" in out["steps"][0]["tool_reason"] and "'column'" in out["steps"][1]["tool_reason"]
    # without files the same words are writing steps, and a one-step plan naming a file reads it
    assert [s["tool"] for s in choose_tools(plan, "writing")["steps"]] == ["llm", "llm", "llm"]
    one = {**plan, "steps": [step(1, "Name the customer with the largest order in the orders file.")]}
    assert choose_tools(one, "writing", files=["orders.csv"])["steps"][0]["tool"] == "python"
    # a presenting step of a numeric task stays a presentation
    present = {**plan, "steps": [step(1, "Sum amount in orders.csv."), step(2, "State the total from orders.csv.")]}
    assert [s["tool"] for s in choose_tools(present, "numeric", files=["orders.csv"])["steps"]] == ["python", "none"]


TRAVEL_TOOLS = {
    "weather_forecast": "The forecast for a city: temperature in degrees and the chance of rain, by day.",
    "flight_search": "Flights between two airports on a date, with their prices in euros.",
    "translator": "Translates a short text into another language.",
}


@pytest.mark.parametrize("words, planned, chosen", [
    ("Get the weather forecast for Lyon.", "flight_search", "weather_forecast"),     # the words name another tool
    ("Have the greeting translated into German.", "flight_search", "translator"),  # translated ~ translator
    ("Searching for flights from Oslo to Rome on May 3.", "translator", "flight_search"),
    ("Look up the weather forecast for Lyon.", "weather_forecast", "weather_forecast"),  # names the planned one
    ("Look up Lyon.", "translator", "translator"),                                   # no tool named: the plan's
    ("Check the weather forecast, then translate it.", "translator", "translator"),  # names the planned one too
])
def test_a_step_naming_one_tool_in_words_and_another_as_its_tool_gets_the_one_its_words_name(words, planned, chosen):
    plan = {"goal": "g", "assumptions": [], "steps": [{**step(1, words), "tool": planned}]}
    out = choose_tools(plan, "numeric", TRAVEL_TOOLS)["steps"][0]
    assert out["tool"] == chosen
    if chosen != planned:
        assert out["tool_reason"].startswith(f"the step's words name the registered tool {chosen}")
    else:
        assert out["tool_reason"] == f"the plan names the registered tool {planned}"


@pytest.mark.parametrize("forms", [
    ("forecast", "forecasts", "forecasting", "forecasted", "forecaster"),
    ("book", "books", "booked", "booking", "booker"),
    ("translate", "translates", "translating", "translated", "translator", "translation"),
    ("delivery", "deliveries", "deliver", "delivering", "delivered"),
    ("ship", "ships", "shipping", "shipped", "shipper"),
    ("plan", "plans", "planned", "planning", "planner"),
    ("locate", "located", "locating", "locator", "location"),
    ("search", "searches", "searching", "searched"),
    ("city", "cities"),
    ("box", "boxes"),
])
def test_the_stemmer_meets_the_forms_of_one_word(forms):
    assert len({stem(w) for w in forms}) == 1, {w: stem(w) for w in forms}


def test_the_stemmer_keeps_different_words_apart_and_short_words_whole():
    assert len({stem(w) for w in ("rain", "rainfall", "train", "ring", "string", "bus", "status", "speed")}) == 8
    assert [stem(w) for w in ("bus", "gas", "class", "sing", "bed")] == ["bus", "gas", "class", "sing", "bed"]


def test_two_tools_named_in_words_go_to_the_one_the_step_says_more_of_and_a_tie_to_the_plan():
    both = {"forecast_daily": "Highs and lows for a city.", "forecast_hourly": "Temperatures by region."}
    plan = {"goal": "g", "assumptions": [], "steps": [
        {**step(1, "Get the daily forecast and its hourly forecast by region."), "tool": "translator"}]}
    tools = {**both, "translator": "Translates a text."}
    assert choose_tools(plan, "numeric", tools)["steps"][0]["tool"] == "forecast_hourly"  # "region" breaks the tie
    plan["steps"][0]["instruction"] = "Get the daily forecast and the hourly forecast."
    assert choose_tools(plan, "numeric", tools)["steps"][0]["tool"] == "translator"  # a tie: the plan's choice
    # names only (no descriptions) work as before: a registered tool is kept
    assert choose_tools(plan, "numeric", list(tools))["steps"][0]["tool"] == "translator"


def test_a_step_whose_tool_the_task_never_names_gets_the_tool_the_task_names_unless_another_step_has_it():
    plan = {"goal": "g", "assumptions": [], "steps": [
        {**step(1, "Translate the menu into French."), "tool": "translator"}]}
    task = "How warm will the weather be in Lyon on Friday?"
    out = choose_tools(plan, "numeric", TRAVEL_TOOLS, task=task)["steps"][0]
    assert out["tool"] == "weather_forecast"
    assert out["tool_reason"] == ("the task's words name the registered tool weather_forecast (weather), none of "
                                  "translator")
    # the task names the planned tool: kept; without the task's words: kept
    assert choose_tools(plan, "numeric", TRAVEL_TOOLS, task="Translate 'good morning' into French.")["steps"][0][
        "tool"] == "translator"
    assert choose_tools(plan, "numeric", TRAVEL_TOOLS)["steps"][0]["tool"] == "translator"
    # another step already calls the tool the task names: this one is left as planned
    two = {**plan, "steps": [{**step(1, "Look up the weather forecast."), "tool": "weather_forecast"},
                             {**step(2, "Translate the forecast."), "tool": "translator"}]}
    assert [s["tool"] for s in choose_tools(two, "numeric", TRAVEL_TOOLS, task=task)["steps"]] == [
        "weather_forecast", "translator"]


def test_a_step_naming_a_tool_but_reading_the_users_file_goes_to_python():
    plan = {"goal": "g", "assumptions": [], "steps": [
        {**step(1, "Read the rainfall of March from rain.csv."), "tool": "translator"}]}
    out = choose_tools(plan, "numeric", TRAVEL_TOOLS, files=["rain.csv"])["steps"][0]
    assert out["tool"] == "python" and "rain.csv" in out["tool_reason"]
    # the step names its tool too ("weather forecast ... in cities.csv"): the tool is kept; no files: kept
    both = {**plan, "steps": [{**step(1, "Get the weather forecast of the cities in cities.csv."),
                               "tool": "weather_forecast"}]}
    assert choose_tools(both, "numeric", TRAVEL_TOOLS, files=["cities.csv"])["steps"][0]["tool"] == "weather_forecast"
    assert choose_tools(plan, "numeric", TRAVEL_TOOLS)["steps"][0]["tool"] == "translator"


def test_a_numeric_plan_that_only_calls_tools_computes_when_the_task_gives_numbers_or_files():
    lookup = {"goal": "g", "assumptions": [], "steps": [
        {**step(1, "Search flights from Oslo to Rome."), "tool": "flight_search"}]}
    out = choose_tools(lookup, "numeric", TRAVEL_TOOLS, task="What do 3 tickets from Oslo to Rome cost in all?")
    assert [s["tool"] for s in out["steps"]] == ["flight_search", "python"]
    added = out["steps"][1]
    assert added["id"] == 2 and added["depends_on"] == [1] and "gives numbers" in added["tool_reason"]
    with_file = choose_tools(lookup, "numeric", TRAVEL_TOOLS, files=["trips.csv"],
                             task="What do the flights for the trips in trips.csv cost?")
    assert [s["tool"] for s in with_file["steps"]] == ["flight_search", "python"]
    # a lookup the task asks for as it is: no program; nor in a writing task, nor when a step computes already
    assert len(choose_tools(lookup, "numeric", TRAVEL_TOOLS, task="What is the cheapest flight to Rome?")["steps"]) == 1
    assert len(choose_tools(lookup, "writing", TRAVEL_TOOLS, task="Describe our 3 favourite routes.")["steps"]) == 1
    computed = {**lookup, "steps": [*lookup["steps"], step(2, "Multiply the price by 3.", tool="python")]}
    assert len(choose_tools(computed, "numeric", TRAVEL_TOOLS, task="Fly 3 of us: what does it cost?")["steps"]) == 2
    # a plan of MAX_STEPS steps has no room for one more
    full = {**lookup, "steps": [{**step(i, "Search flights."), "tool": "flight_search"} for i in range(1, 9)]}
    assert len(choose_tools(full, "numeric", TRAVEL_TOOLS, task="What do 12 tickets cost?")["steps"]) == 8
