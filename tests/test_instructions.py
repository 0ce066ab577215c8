"""The task's checkable instructions, read from its words, checked on an answer, and the answer revised against
them (hierplan.nodes.instructions, hierplan.nodes.revise). Phrasings here are not the eval's tasks."""

from __future__ import annotations

import json

import pytest

from fakes import ScriptedChatModel, StructuredScriptedChatModel, answer_token, plan_json
from langgraph.graph import END, START, StateGraph

from hierplan import build_graph
from hierplan.config import MAX_REVISIONS, WARM_TEMPERATURE, SamplingConfig
from hierplan.graph.state import AgentState
from hierplan.nodes.revise import after_instruction_check, check_instructions, make_reviser
from hierplan.rules.checks import problem, problems, put_list
from hierplan.rules.instructions import read_instructions
from hierplan.rules.parts import parts_to_write, put_parts


def revise(model, task, draft):
    """The check_instructions <-> reviser loop on its own, from the aggregator's draft: (the kept answer, the
    check as recorded, the reviser's calls)."""
    graph = StateGraph(AgentState)
    graph.add_node("check_instructions", check_instructions)
    graph.add_node("reviser", make_reviser(model, SamplingConfig(seed=1)))
    graph.add_edge(START, "check_instructions")
    graph.add_conditional_edges("check_instructions", after_instruction_check, ["reviser", END])
    graph.add_edge("reviser", "check_instructions")
    out = graph.compile().invoke({"task": task, "kind": "writing", "final": draft})
    return out["final"], out["instruction_check"], out.get("calls") or []


def describe(check):
    from hierplan.render.text import describe_instructions

    return describe_instructions(check)


@pytest.mark.parametrize("task, expected", [
    ("Give exactly three tips for saving energy at home.", [{"kind": "items", "min": 3, "max": 3}]),
    ("List between 4 and 6 bullet points about composting.", [{"kind": "bullets", "min": 4, "max": 6}]),
    ("Describe the process in no more than 50 words.", [{"kind": "words", "min": None, "max": 50}]),
    ("Summarise the meeting in fewer than 40 words.", [{"kind": "words", "min": None, "max": 39}]),
    ("Write at least 150 words on tides.", [{"kind": "words", "min": 150, "max": None}]),
    ("Write 30-60 words on tides.", [{"kind": "words", "min": 30, "max": 60}]),
    ("Pitch the product and avoid the words 'synergy' and \"leverage\".",
     [{"kind": "avoid_word", "word": "synergy"}, {"kind": "avoid_word", "word": "leverage"}]),
    ("Write a memo. Start with the line 'Dear team,' and sign it.", [{"kind": "begins_with", "text": "Dear team,"}]),
    ("Reply to the customer and end with a question.", [{"kind": "ends_with_question"}]),
    ("Give numbered steps (at least 2, at most 3) for brewing tea.", [{"kind": "numbered", "min": 2, "max": 3}]),
    ("Write notes with one Markdown heading.", [{"kind": "headings", "min": 1, "max": 1}]),
    ("Show a Python code block that reverses a list.", [{"kind": "python_block"}]),
    ("Describe a bakery. Mention the oven, the flour and fresh bread.",
     [{"kind": "mentions", "term": "oven"}, {"kind": "mentions", "term": "flour"},
      {"kind": "mentions", "term": "fresh bread"}]),
    ("Write a shopping checklist for a picnic.", [{"kind": "items", "min": 3, "max": None}]),
    ("Describe the harbour. Use the words 'gull' and \"tide\" somewhere in your reply.",
     [{"kind": "mentions", "term": "gull"}, {"kind": "mentions", "term": "tide"}]),
    ("Bake the bread using the oven you have.", []),
    ("Describe a door key but don't use the word 'key'.", [{"kind": "avoid_word", "word": "key"}]),
    ("Use words in all capital letters (such as 'LOUD') at least twice.", []),
])
def test_instructions_are_read_from_the_tasks_words(task, expected):
    assert read_instructions(task) == expected


@pytest.mark.parametrize("task, expected", [
    # up to two words of any kind describe the counted noun
    ("Suggest four beginner-friendly hiking tips.", [{"kind": "items", "min": 4, "max": 4}]),
    ("List 5 low-cost marketing ideas for a bookshop.", [{"kind": "items", "min": 5, "max": 5}]),
    ("Give me 6 quick weekday steps to tidy a desk.", [{"kind": "items", "min": 6, "max": 6}]),
    # numbers in words, compounds and ranges
    ("Write twenty-five bullet points on packing for a move.", [{"kind": "bullets", "min": 25, "max": 25}]),
    ("List a hundred ideas for a garden party.", [{"kind": "items", "min": 100, "max": 100}]),
    ("Describe your week in twenty five to thirty words.", [{"kind": "words", "min": 25, "max": 30}]),
    ("Write 4-6 bullet points on bike maintenance.", [{"kind": "bullets", "min": 4, "max": 6}]),
    ("Give between four and six practical safety reasons.", [{"kind": "items", "min": 4, "max": 6}]),
    # what is counted is not the list: a plural noun, a count per part, a number about something else
    ("Write 2 paragraphs with tips on sleep.", []),
    ("I have 2 dogs and 3 cats; what should I feed them?", []),
    ("Write a 3-day plan for Porto with 2 key tips per day.", []),
    ("Give one of the steps in more detail.", []),
    # a limit on a word is not a ban on it
    ("Do not use the word 'very' more than twice.", [{"kind": "word_times", "word": "very", "min": None, "max": 2}]),
])
def test_counts_are_read_generally_and_only_of_the_list(task, expected):
    assert read_instructions(task) == expected


def test_counts_per_section_become_a_total_and_a_next_instruction_is_not_a_term():
    found = read_instructions("Write two sections with the headings '## Pros' and '## Cons', each with exactly 2 "
                              "bullet points. Mention cost and speed, and keep it under 90 words.")
    assert {"kind": "bullets", "min": 4, "max": 4} in found and {"kind": "headings", "min": 2, "max": 2} in found
    assert {"kind": "heading_text", "text": "## Pros"} in found
    assert [f["term"] for f in found if f["kind"] == "mentions"] == ["cost", "speed"]
    assert {"kind": "words", "min": None, "max": 89} in found


def test_where_a_word_goes_and_an_example_of_the_form_are_no_terms_to_mention():
    found = read_instructions("Answer in a table, and use the words 'lantern' and 'harbor' somewhere in it.")
    assert [f["term"] for f in found if f["kind"] == "mentions"] == ["lantern", "harbor"]
    found = read_instructions("Write the invite and include at least 2 blanks in square brackets, like [venue].")
    assert [f for f in found if f["kind"] == "mentions"] == [] and {"kind": "placeholders", "min": 2} in found
    found = read_instructions("Include a few placeholders, for example [date], and mention the parking.")
    assert [f["term"] for f in found if f["kind"] == "mentions"] == ["parking"]
    found = read_instructions("Mention the Anywhere Cafe and the Somewhere Inn.")
    assert [f["term"] for f in found if f["kind"] == "mentions"] == ["Anywhere Cafe", "Somewhere Inn"]
    found = read_instructions("Mention the old mill by name and keep it short.")  # how it is said, not what
    assert [f["term"] for f in found if f["kind"] == "mentions"] == ["old mill"]


def test_a_task_without_form_instructions_has_none_and_a_negated_mention_is_not_one():
    assert read_instructions("How many apples are left if Sam eats 3 of 10?") == []
    assert read_instructions("Explain photosynthesis to a child.") == []
    assert read_instructions("Describe the city but do not mention the weather.") == []


def test_counts_words_openings_and_endings_are_checked_exactly():
    five = "- a\n- b\n- c\n- d\n- e"
    assert problem({"kind": "bullets", "min": 5, "max": 5}, five) is None
    assert problem({"kind": "bullets", "min": 5, "max": 5}, five + "\n- f") == (
        "it has 6 bullet points ('- ' lines); the task asks for exactly 5")
    assert problem({"kind": "bullets", "min": 2, "max": 2}, "- a\n  - nested\n- b") is None  # top level only
    assert problem({"kind": "items", "min": 3, "max": 3}, "1. a\n2) b\n- c") is None
    assert "at most 3" in problem({"kind": "words", "min": None, "max": 3}, "one two three four")
    assert problem({"kind": "words", "min": None, "max": 2}, "one two\n```python\nx = 1 + 2 + 3\n```") is None
    assert problem({"kind": "begins_with", "text": "Subject:"}, "**Subject:** Late order\n\nHi") is None
    assert problem({"kind": "begins_with", "text": "Subject:"}, "Hi\nSubject: x") is not None
    assert problem({"kind": "ends_with_question"}, "Thanks.\n\nDoes Friday work for you?\n") is None
    assert problem({"kind": "ends_with_question"}, "Does Friday work?\n\nBest,\nSam") is not None


def test_a_topic_of_several_words_is_mentioned_by_its_last_word_and_most_of_the_rest():
    topic = {"kind": "mentions", "term": "keeping dogs fenced yard"}
    assert problem(topic, "Keep the dogs inside the fenced yard.") is None
    assert problem(topic, "Keep the dogs inside.") is not None  # not the yard
    assert problem({"kind": "mentions", "term": "Lake Tahoe"}, "We went to the lake.") is not None  # a name: whole


def test_a_counted_word_is_no_term_to_mention_and_a_bound_may_follow_its_count():
    found = read_instructions("Give me tips and a sample script. Please use the word \"budget\" three times at "
                              "most, I've heard it too often.")
    assert found == [{"kind": "word_times", "word": "budget", "min": None, "max": 3}]


def test_quote_marks_named_on_their_own_are_no_opening_text():
    found = read_instructions('Put the whole note inside double quotes: begin with " and end with ".')
    assert [f for f in found if f["kind"] == "begins_with"] == [] and {"kind": "quoted"} in found


def test_forbidden_words_mentions_headings_and_code_blocks():
    assert problem({"kind": "avoid_word", "word": "very"}, "Every step was good.") is None  # a whole word only
    assert problem({"kind": "avoid_word", "word": "very"}, "It was Very good.") is not None
    assert problem({"kind": "mentions", "term": "executors"}, "Each executor runs a step.") is None
    assert problem({"kind": "mentions", "term": "memory store"}, "It keeps a memory.") is not None
    assert problem({"kind": "mentions", "term": "aggregator"}, "It aggregates the results.") is not None  # whole words
    assert problem({"kind": "heading_text", "text": "## Pros"}, "## Pros and more\n- a") is None
    assert problem({"kind": "heading_text", "text": "## Pros"}, "Pros:\n- a") is not None
    assert problem({"kind": "python_block"}, "```python\ndef f(x):\n    return x\n```") is None
    assert "does not parse" in problem({"kind": "python_block"}, "```python\ndef f(x)\n    return x\n```")
    assert problem({"kind": "python_block"}, "def f(x): return x") == "it needs the code in a ```python block"


def test_the_noun_that_introduces_a_list_of_words_is_not_a_word_to_use():
    terms = lambda task: [i["term"] for i in read_instructions(task) if i["kind"] == "mentions"]  # noqa: E731
    assert terms("Plan my picnic and include the keywords 'RAIN', 'SUN' and 'SHADE'.") == ["RAIN", "SUN", "SHADE"]
    assert terms("Describe the bakery. Include the words croissant and rye.") == ["croissant", "rye"]
    assert terms("Mention the word 'harbour'.") == ["harbour"]
    # a singular noun not before a quoted word is the thing to mention
    assert terms("Mention the word count and the deadline.") == ["word count", "deadline"]
    # "the word" before a word it makes no compound with introduces that word
    assert terms("A card for my cat, and please include the word whiskers.") == ["whiskers"]
    assert terms("Keep to the word limit, and include the word limit.") == ["word limit"]
    assert terms("Please include the word Ubuntu and the word harambee.") == ["Ubuntu", "harambee"]


def test_a_count_of_some_words_is_not_the_answers_length():
    words = lambda task: [i for i in read_instructions(task) if i["kind"] == "words"]  # noqa: E731
    assert words("A song about my flat that has at least 12 words in all capital letters.") == []
    assert words("Use at most 3 words that start with z.") == []
    assert words("A song about my flat in 80 to 120 words, with a title.") == [{"kind": "words", "min": 80, "max": 120}]
    assert words("At least 300 words in English, please.") == [{"kind": "words", "min": 300, "max": None}]
    # a length with the case or the form of the whole answer after it is still its length
    assert words("A story of at most 200 words in all caps.") == [{"kind": "words", "min": None, "max": 200}]
    assert words("My weekend in under 50 words in all lowercase letters.") == [{"kind": "words", "min": None, "max": 49}]
    assert words("At least 300 words that are easy for a child to read.") == [{"kind": "words", "min": 300, "max": None}]


TASK = "Write exactly 3 bullet points about tea. Do not use the word 'very'."
GOOD = "- Green tea\n- Black tea\n- Herbal tea"


def test_revise_keeps_a_draft_that_meets_every_instruction_without_a_call():
    model = ScriptedChatModel()
    final, check, calls = revise(model, TASK, GOOD)
    assert final == GOOD and calls == [] and model.calls == []
    assert check["ok"] and not check["revised"] and check["draft_problems"] == []
    assert describe(check).endswith("met all 4 checkable instructions of the task")  # the 2, no repeats, none told back
    final, check, calls = revise(model, "Explain tea.", "Tea is a drink.")
    assert (final, calls, check["instructions"], check["ok"]) == ("Tea is a drink.", [], [{"kind": "no_repeats"}],
                                                                  True)


def test_lines_said_twice_are_a_problem_whatever_the_task_says():
    block = "- **Planner**: breaks the task into steps\n- **Memory**: keeps past decisions for later runs\n"
    assert problem({"kind": "no_repeats"}, block) is None
    found = problem({"kind": "no_repeats"}, "Design:\n" + block + "Build:\n" + block)
    assert found.startswith("it repeats 2 line(s) word for word, e.g. 'planner breaks the task into steps'")
    assert problem({"kind": "no_repeats"}, "- Test it.\n- Test it.") is None  # too short to be a copied block


def test_a_short_line_said_over_and_over_is_a_loop_to_write_anew():
    stuck = "- resume\n- glass\n" + "- hallucinate\n" * 30
    assert problem({"kind": "no_repeats"}, stuck) == ("it says 'hallucinate' 30 times over instead of writing on: "
                                                      "write the answer anew, each thing once")
    assert problem({"kind": "no_repeats"}, "**Yes**\n\ntext\n\n**Yes**\n\nmore\n\n**Yes**") is None  # 3: not a loop


def test_repeated_lines_are_dropped_without_a_model_call_and_the_rest_kept():
    block = "- **Planner**: breaks the task into steps\n- **Memory**: keeps past decisions for later runs\n"
    draft = "Design:\n" + block + "```python\nprint('say it twice in code, it is fine')\nprint('say it twice in code, it is fine')\n```\nBuild:\n" + block + "- Ship it to the small team"
    model = ScriptedChatModel(script={"reviser": []})  # any model call fails the test
    final, check, calls = revise(model, "Write the launch notes.", draft)
    assert calls == [] and check["ok"] and check["revised"]
    assert final.count("keeps past decisions for later runs") == 1 and final.count("say it twice in code") == 2
    assert final.splitlines()[-1] == "- Ship it to the small team" and "Build:" in final
    assert check["revisions"] == [{"attempt": 0, "kind": "by_program", "problems": []}]
    assert "fixed by program, it now meets all 1" in describe(check)


def test_after_dropping_repeats_the_model_is_asked_only_for_what_is_still_wrong():
    # the rewrite keeps the piece (rules.substance: a rewrite of under 60% of the kept answer's words is refused)
    fixed = "- Green tea is a good drink\n- Black tea\n- Herbal tea"
    model = ScriptedChatModel(script={"reviser": [fixed]})
    draft = "- Green tea is a very good drink\n- Green tea is a very good drink\n- Black tea\n- Herbal tea"
    final, check, calls = revise(model, TASK, draft)
    asked = model.calls[0]["messages"][-1].content
    assert final == fixed and len(calls) == 1 and len(check["draft_problems"]) == 3
    assert "it uses the word 'very', which the task forbids" in asked
    wrong = asked.split("got wrong:")[1]
    assert "repeats" not in wrong and "bullet points" not in wrong  # dropping the copy left 3 bullets
    assert "written anew 1 time(s)" in describe(check)


def test_revise_tells_the_model_what_is_wrong_and_keeps_the_better_answer():
    model = ScriptedChatModel(script={"reviser": [GOOD]})
    draft = "- Green tea is very good\n- Black tea\n- Herbal tea\n- Oolong"
    final, check, calls = revise(model, TASK, draft)
    assert final == GOOD and len(calls) == 1 and check["revised"] and check["ok"]
    asked = model.calls[0]["messages"][-1].content
    assert "it has 4 bullet points ('- ' lines); the task asks for exactly 3" in asked
    assert "it uses the word 'very', which the task forbids" in asked and TASK in asked
    assert "Green tea is very good" not in asked  # written anew: shown a draft, the model sends it back
    json.dumps(check)  # JSON-safe, as state must be
    assert "broke 2 of 4" in describe(check) and "now meets all 4" in describe(check)


def test_revise_stops_after_max_revisions_and_never_keeps_a_worse_answer():
    worse = "Tea is very very good."  # no bullets at all, and the word
    model = ScriptedChatModel(script={"reviser": [worse] * (MAX_REVISIONS + 2)})
    draft = "- Green tea\n- Black tea"  # one problem: 2 bullets
    final, check, calls = revise(model, TASK, draft)
    assert final == draft and len(calls) == MAX_REVISIONS and not check["revised"] and not check["ok"]
    assert [len(r["problems"]) for r in check["revisions"]] == [2] * MAX_REVISIONS
    assert [c["kwargs"]["temperature"] for c in model.calls] == [0.2, WARM_TEMPERATURE]  # the retry warmer
    assert "still breaks 1 of 4" in describe(check)


def test_a_list_is_put_where_the_answers_list_was_and_the_rest_stays():
    text = "Three ways to save water:\n\n- Shorter showers\n  - under five minutes\n- Fix leaks\n- Full loads\n- Rain barrels\n\nStart today."
    new = put_list(text, ["Take shorter showers.", "Fix  leaking\ntaps.", "Run full loads only."], "bullets")
    assert new == ("Three ways to save water:\n\n- Take shorter showers.\n- Fix leaking taps.\n- Run full loads only."
                   "\n\nStart today.")
    assert put_list("No list here.", ["a one", "a two"], "numbered") == "1. a one\n2. a two"


def test_the_parts_written_under_the_grammar_are_a_broken_count_a_title_and_a_postscript():
    three = {"kind": "bullets", "min": 3, "max": 3}
    title, ps = {"kind": "title"}, {"kind": "postscript", "marker": "P.S."}
    assert parts_to_write([three], "- a\n- b", 20) == [three]
    assert parts_to_write([three], "- a\n- b\n- c", 20) == []                               # met
    assert parts_to_write([three], "Pros:\n- a\n\nCons:\n- b", 20) == []                  # two lists: which one?
    assert parts_to_write([{"kind": "items", "min": 3, "max": None}], "- a", 20) == []      # no bound
    assert parts_to_write([{"kind": "numbered", "min": 30, "max": 40}], "1. a", 20) == []   # too many
    assert parts_to_write([{"kind": "headings", "min": 2, "max": 2}], "text", 20) == []
    assert parts_to_write([ps, title, three], "- a", 20) == [three, ps, title]              # the body first
    assert parts_to_write([title, ps], "<<Tea>>\n\nText.\n\nP.S. More.", 20) == []
    four = {"kind": "paragraphs", "count": 4}
    assert parts_to_write([four, three], "One.", 20) == [three]  # paragraphs are regrouped by program


def test_the_parts_are_put_in_place_and_the_rest_stays():
    parts = [{"kind": "numbered", "min": 2, "max": 2}, {"kind": "title"}, {"kind": "postscript", "marker": "P.P.S"}]
    written = {"items": ["Rivers carry silt.", "Deltas grow."], "title": "<<Deltas>>", "postscript": "P.P.S: Visit one."}
    assert put_parts("Deltas:\n1. silt", parts, written) == (
        "<<Deltas>>\n\nDeltas:\n1. Rivers carry silt.\n2. Deltas grow.\n\nP.P.S Visit one.")
    kept = "Dear Sam,\n\nThanks for the tea.\n\nBest, Ann"
    assert put_parts(kept, [{"kind": "postscript", "marker": "P.S."}], {"postscript": "Bring cake."}) == (
        kept + "\n\nP.S. Bring cake.")
    # the model's own marker gives way to the one asked; a word that starts like one stays
    for written, note in [("PS: Bring cake.", "Bring cake."), ("Please bring cake.", "Please bring cake.")]:
        assert put_parts(kept, [{"kind": "postscript", "marker": "P.S."}], {"postscript": written}) == (
            kept + "\n\nP.S. " + note)


def test_a_list_with_the_wrong_count_is_written_again_under_the_grammar_keeping_the_rest():
    task = "Give me tips for a first marathon, with exactly 3 bullet points."
    draft = ("Training for a first marathon takes months.\n\n- Build mileage slowly\n- Rest one day a week\n"
             "- Eat carbohydrates\n- Practise with race shoes\n- Sleep well\n\nGood luck on the day.")
    items = {"items": ["Build your mileage slowly and rest one day a week.", "Eat carbohydrates and sleep well.",
                       "Practise in the shoes you will race in."]}
    model = StructuredScriptedChatModel(script={"reviser_parts": [json.dumps(items)]})
    final, check, calls = revise(model, task, draft)
    assert final == ("Training for a first marathon takes months.\n\n- Build your mileage slowly and rest one day "
                     "a week.\n- Eat carbohydrates and sleep well.\n- Practise in the shoes you will race in.\n\n"
                     "Good luck on the day.")
    assert check["ok"] and [r.get("kind") for r in check["revisions"]] == ["parts"] and len(calls) == 1
    schema = model.calls[0]["kwargs"]["response_format"].model_json_schema()["properties"]["items"]
    assert (schema["minItems"], schema["maxItems"]) == (3, 3)
    asked = model.calls[0]["messages"][-1].content
    assert "Sleep well" in asked and "exactly 3 items" in asked  # the items come from the answer itself


def test_a_missing_title_and_postscript_are_added_to_the_answer_as_it_was():
    task = ("Write a note to my neighbour about the fence. Give it a title in double angle brackets like <<this>> "
            "and add a P.S. at the end.")
    draft = "Hi Jo,\n\nThe storm knocked two fence panels down. Shall we split the repair this weekend?\n\nBest, Ann"
    model = StructuredScriptedChatModel(script={"reviser_parts": [json.dumps(
        {"title": "The Fence", "postscript": "I can bring the tools."})]})
    final, check, calls = revise(model, task, draft)
    assert final == "<<The Fence>>\n\n" + draft + "\n\nP.S. I can bring the tools."
    assert check["ok"] and len(calls) == 1
    fields = model.calls[0]["kwargs"]["response_format"].model_json_schema()["required"]
    assert sorted(fields) == ["postscript", "title"]


def test_a_list_the_model_does_not_give_is_written_anew_as_before():
    task = "Give me tips for a first marathon, with exactly 3 bullet points."
    draft = "- Build mileage slowly\n- Rest one day a week"
    fixed = "- Build mileage slowly\n- Rest one day a week\n- Sleep well"
    model = StructuredScriptedChatModel(script={"reviser_parts": ["not json"], "reviser": [fixed]})
    final, check, calls = revise(model, task, draft)
    assert final == fixed and model.count("reviser_parts") == 1 and model.count("reviser") == 1
    assert len(calls) == 2 and check["revisions"][0].get("kind") is None  # the rewrite's round
    # without structured output (a plain model), the list is written anew at once
    plain = ScriptedChatModel(script={"reviser": [fixed]})
    assert revise(plain, task, draft)[0] == fixed and plain.count("reviser_parts") == 0


def test_the_graph_revises_a_writing_answer_and_records_the_check():
    # one piece of writing: its requirements are read, its one-step plan is written by rule (no planner call)
    model = ScriptedChatModel(script={"aggregator": ["Final answer: 3"], "reviser": [GOOD]})
    out = build_graph(model, constrain=False).invoke({"task": TASK}, {"configurable": {"thread_id": "rv"}})
    assert out["final"] == GOOD and out["instruction_check"]["revised"] is True
    assert out["instruction_check"]["draft_problems"][0].startswith("it has 0 bullet points")
    assert model.count("reviser") == 1 and "answer_check" not in out
    assert out["plan_source"] == "rule" and model.count("planner") == 0
    assert [c["node"] for c in out["calls"]] == ["read_requirements", "aggregator", "reviser"]


def test_the_terminal_shows_the_checked_answer_when_it_differs_from_what_streamed():
    import io

    from hierplan.cli.output import HumanReporter

    out = io.StringIO()
    reporter = HumanReporter(out=out)
    for offset, piece in ((0, "Final answer: "), (14, "3")):
        reporter.live(answer_token(piece, offset))
    reporter.run_finished("r", "done", final=GOOD)
    shown = out.getvalue()
    assert shown.index("Final answer: 3") < shown.index("Final answer, as checked") < shown.index("- Green tea")
    same = io.StringIO()
    reporter = HumanReporter(out=same)
    reporter.live(answer_token(GOOD))
    reporter.run_finished("r", "done", final=GOOD)
    assert "as checked" not in same.getvalue() and same.getvalue().count("- Green tea") == 1


def test_a_numeric_answer_is_never_rewritten_even_without_a_computation():
    repeated = "The pen costs three dollars each.\nThe pen costs three dollars each."
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "llm", "llm"])], "aggregator": [repeated]})
    out = build_graph(model, constrain=False).invoke({"task": "A pen costs 3 dollars. How much do 7 pens cost?"},
                                                     {"configurable": {"thread_id": "nr"}})
    assert out["final"] == repeated and model.count("reviser") == 0 and "instruction_check" not in out


@pytest.mark.parametrize("text, value", [
    ("zero", 0), ("seven", 7), ("nineteen", 19), ("forty", 40), ("twenty-five", 25), ("twenty five", 25),
    ("ninety-nine", 99), ("a hundred", 100), ("one hundred and five", 105), ("three hundred twelve", 312),
    ("a dozen", 12), ("two thousand", 2000), ("42", 42),
    ("a", None), ("hundred", None), ("twenty-fifth", None), ("many", None),
])
def test_numbers_in_words_have_one_reader(text, value):
    from hierplan.rules.numbers import word_number

    assert word_number(text) == value


def test_a_count_of_sections_to_highlight_is_of_marked_passages_not_headings():
    assert read_instructions("Write a toast for my sister. Highlight at least 3 sections with markdown.") == [
        {"kind": "highlights", "min": 3}]
    assert read_instructions("Write a toast for my sister in 3 sections.") == [{"kind": "headings", "min": 3, "max": 3}]


def test_a_cover_letter_is_a_piece_not_a_request_to_cover_a_letter():
    assert read_instructions("Write a cover letter for a rally organizer job.") == []
    assert read_instructions("Could you write the back-cover text for my novel about a lighthouse?") == []
    assert read_instructions("Keep the caps to two words, and that includes acronyms like FYI.") == []
    assert read_instructions("Write a memo that includes the budget.") == [{"kind": "mentions", "term": "budget"}]
    assert read_instructions("Write a memo covering pay and leave.") == [{"kind": "mentions", "term": "pay"},
                                                                          {"kind": "mentions", "term": "leave"}]


def test_of_two_answers_that_break_as_many_instructions_the_nearer_one_is_kept():
    from hierplan.nodes.revise import closer
    from hierplan.rules.checks import miss

    limit = {"kind": "words", "min": None, "max": 30}
    long, shorter = "word " * 335, "word " * 60
    assert miss(limit, long) == pytest.approx(305 / 30) and miss(limit, shorter) == 1.0 and miss(limit, "a b") == 0
    assert miss({"kind": "bullets", "min": 5, "max": 5}, "- a\n- b") == pytest.approx(3 / 5)
    assert miss({"kind": "lowercase"}, "Tea") == 1.0
    found = lambda text: problems([limit], text)  # noqa: E731
    assert closer([limit], (shorter, found(shorter)), (long, found(long)))
    assert not closer([limit], (long, found(long)), (shorter, found(shorter)))
    assert not closer([limit], (long, found(long)), (long, found(long)))  # a full tie keeps the kept answer


def test_a_chat_frame_around_the_piece_is_dropped_and_the_piece_kept():
    from hierplan.rules.checks import drop_chat_frame

    letter = "Dear Sam,\n\nThe heating is broken again.\n\nBest, Ann"
    framed = ("Certainly! Here is the letter, with the postscript:\n\n---\n\n" + letter +
              "\n\n---\n\nThis letter includes the postscript as requested.")
    assert drop_chat_frame(framed) == letter
    assert drop_chat_frame("Here's a haiku about rain:\n\nSoft rain on the roof") == "Soft rain on the roof"
    assert drop_chat_frame(letter) == letter
    # a rule inside the piece, and a closing line that belongs to it, stay
    kept = "Part one.\n\n---\n\nPart two: we meet at noon."
    assert drop_chat_frame(kept) == kept
    # a task that says how the answer begins keeps its opening
    assert drop_chat_frame(framed, [{"kind": "begins_with", "text": "Certainly"}]) == framed
    assert drop_chat_frame("Sure:") == "Sure:"  # nothing but the frame: left as it is


def test_a_chat_frame_is_only_an_announcement_or_a_remark_about_the_request():
    from hierplan.rules.checks import drop_chat_frame

    # openings and endings that are the piece's own
    for text in ["Sure as the sunrise, love will stay:\nit waits for you at the end of day.",
                 "Here is the thing:\nMost people never start.",
                 "Raising a child is hard.\n\n***\n\nIn the end, the task of raising a child is never done.",
                 "Dear Ann,\n\nI miss you.\n\n---\n\nThis letter is my promise to you: I will come home.",
                 "14 x 3 = 42 dollars.\n\n---\n\nFinal answer: 42, as requested",
                 "Config:\n\n```yaml\nname: x\n---\nThis version follows the request.\n```"]:
        assert drop_chat_frame(text) == text
    assert drop_chat_frame("Sure! Here are three names for your cat:\n\n- Miso\n- Pixel\n- Juniper") == \
        "- Miso\n- Pixel\n- Juniper"
    # after an assent, whatever piece it announces
    framed = "Certainly! Here's the back-cover blurb for your mystery:\n\n---\n\nA town holds its breath."
    assert drop_chat_frame(framed) == "A town holds its breath."
    assert drop_chat_frame("Here is the catch:\nnobody came.") == "Here is the catch:\nnobody came."
    assert drop_chat_frame("Roses bloom.\n\n---\n\nNote: the poem follows all of the task's instructions.") == \
        "Roses bloom."
    # without a rule line: only a last paragraph or line that says the answer meets the task's requirements
    review = "<<A Cosy Cafe>>\nThe cakes are fresh and the staff are kind."
    assert drop_chat_frame(review + "\nThis review meets the task requirements by giving a title.") == review
    assert drop_chat_frame(review + "\n\nNote: it follows your instructions exactly.") == review
    for text in [review + "\n\nPlease find the menu attached, as requested.",
                 "This plan meets the requirements of the city council.",  # the whole answer: nothing before it
                 review + "\n\nIt meets the requirements of the food agency.",
                 review + "\nOur new menu follows the seasons."]:
        assert drop_chat_frame(text) == text


def test_a_list_is_put_only_where_one_list_stands_outside_code():
    two = "Pros:\n- cheap\n- quick\n\nBut mind the cost of repairs.\n\nCons:\n- noisy"
    assert put_list(two, ["a", "b"], "bullets") == two  # which list the count is about is not known
    coded = "Steps:\n1. Install.\n2. Run.\n\n```yaml\n- name: x\n```\nDone."
    assert put_list(coded, ["Install it.", "2. Run it.", "- Check it."], "numbered") == \
        "Steps:\n1. Install it.\n2. Run it.\n3. Check it.\n\n```yaml\n- name: x\n```\nDone."
    ruled = "- one\n- two\n\n* * *\n\nThe rest of the story."
    assert put_list(ruled, ["uno"], "bullets") == "- uno\n\n* * *\n\nThe rest of the story."
    assert problems([{"kind": "bullets", "min": 2, "max": 2}], ruled) == []  # a rule line is no bullet


SONG_TASK = "Could you write a song for my grandmother Rosa's birthday? No commas anywhere, please."
THIN = "Sure I can help with that!"
ROSA = ("Rosa wakes before the sun\nShe bakes the bread for everyone\nHer garden sings in red and gold\n"
        "Her stories never do grow old\n\nHappy birthday Rosa dear\nWe sing it loud so all can hear\n"
        "Ninety candles burning bright\nYou fill our kitchen full of light")


def revise_or_plain(model, task, draft):
    """The check_instructions loop with both of its writers, as the graph wires it."""
    from hierplan.nodes.revise import make_plain_answer

    graph = StateGraph(AgentState)
    graph.add_node("check_instructions", check_instructions)
    graph.add_node("reviser", make_reviser(model, SamplingConfig(seed=1)))
    graph.add_node("plain_answer", make_plain_answer(model, SamplingConfig(seed=1)))
    graph.add_edge(START, "check_instructions")
    graph.add_conditional_edges("check_instructions", after_instruction_check, ["reviser", "plain_answer", END])
    graph.add_edge("reviser", "check_instructions")
    graph.add_edge("plain_answer", "check_instructions")
    out = graph.compile().invoke({"task": task, "kind": "writing", "final": draft})
    return out["final"], out["instruction_check"]


def test_an_answer_that_is_no_piece_is_answered_plainly_first_and_the_piece_kept():
    with_commas = ROSA.replace("Rosa dear", "Rosa, dear")
    model = ScriptedChatModel(script={"plain_answer": [with_commas]})
    final, check = revise_or_plain(model, SONG_TASK, THIN)
    assert [c["node"] for c in model.calls] == ["plain_answer"]
    # the task alone: none of the checks' findings, nothing listed
    plain = model.calls[-1]["messages"]
    assert plain[-1].content == SONG_TASK and "wrong" not in plain[0].content
    # the song, with its commas taken out by program
    assert final == ROSA and check["ok"] and check["revisions"][-1]["kind"] == "plain"
    assert "written anew 1 time(s), once from the task alone" in describe(check)


def test_the_plain_answer_is_kept_for_being_more_of_the_piece_and_the_reviser_then_fixes_its_form():
    task = "Could you write a song for my grandmother Rosa's birthday? Keep it under 30 words."
    short_song = "\n".join(ROSA.split("\n")[:4])  # 25 words
    model = ScriptedChatModel(script={"plain_answer": [ROSA], "reviser": [short_song]})
    final, check = revise_or_plain(model, task, "Happy birthday Rosa!")
    assert [c["node"] for c in model.calls] == ["plain_answer", "reviser"]
    assert check["revisions"][0]["kind"] == "plain" and final == short_song and check["ok"]
    # a plain answer that says more, though still short of the piece, is kept over one that says less
    model = ScriptedChatModel(script={"plain_answer": ["Happy birthday Rosa, we love you and your garden!"],
                                      "reviser": [THIN]})
    final, check = revise_or_plain(model, SONG_TASK, THIN)
    assert final == "Happy birthday Rosa we love you and your garden!"


def test_no_plain_answer_where_the_answer_is_the_piece_and_never_one_that_says_less():
    task = "Could you write a song for my grandmother Rosa's birthday? Keep it under 30 words."
    short_song = "\n".join(ROSA.split("\n")[:4])
    model = ScriptedChatModel(script={"reviser": [short_song]})
    final, check = revise_or_plain(model, task, ROSA)
    assert model.count("plain_answer") == 0 and final == short_song
    # answered plainly once at most, and never kept where it says less than the kept answer
    model = ScriptedChatModel(script={"reviser": [THIN] * MAX_REVISIONS, "plain_answer": ["Sure, I can!"] * 2})
    final, check = revise_or_plain(model, SONG_TASK, THIN)
    assert model.count("plain_answer") == 1 and len(check["revisions"]) == MAX_REVISIONS and final == THIN
    assert [c["node"] for c in model.calls] == ["plain_answer", "reviser"]
    # the reviser is told what the kept answer broke, not what the plain answer it did not keep broke
    assert "only 6 words, which is not the song" in model.calls[-1]["messages"][-1].content


def test_a_plain_answer_kept_for_being_more_of_the_piece_records_no_rejection():
    from hierplan.nodes.revise import first_check, with_revision

    task = "Could you write a song for my grandmother Rosa's birthday?"
    check, kept = first_check(task, "<<Rosa>>", [{"kind": "title"}])
    check, kept = with_revision(check, kept, ROSA, task, kind="plain")
    assert kept.endswith(ROSA) and "rejected" not in check["revisions"][-1]


def test_a_quote_mark_as_the_first_and_last_character_wraps_the_whole_answer():
    for task in ["It goes in a speech bubble, so the very first character of your reply and the very last one must "
                 "be a double quote mark.",
                 "The printer wants a double quote mark as the very first and very last character, nothing outside."]:
        assert {"kind": "quoted"} in read_instructions(task), task
    for task in ["The first character of each line should be a dash and the last a period.",
                 "Put the first and last names in bold."]:
        assert {"kind": "quoted"} not in read_instructions(task), task


def test_the_steps_to_mark_are_passages_not_a_count_of_the_lists_items():
    task = ("Walk me through getting the outside faucet ready for winter, and put asterisks around the 2 steps I "
            "absolutely can't skip.")
    assert not [i for i in read_instructions(task) if i["kind"] in ("items", "bullets", "numbered")]
    assert not [i for i in read_instructions("Highlight the 3 tips that matter most.") if i["kind"] == "items"]
    assert read_instructions("Give me 5 steps to fix it.") == [{"kind": "items", "min": 5, "max": 5}]
