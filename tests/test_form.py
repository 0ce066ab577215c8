"""Form instructions read from a task's words (hierplan.rules.form): what is read, what is checked, and what a
program fixes without losing anything."""

from __future__ import annotations

import json

import pytest

from hierplan.rules.form import fix_form, form_problem, read_form
from hierplan.rules.instructions import problems, read_instructions, repair_by_program


def kinds(task: str) -> dict[str, dict]:
    return {i["kind"]: i for i in read_form(task)}


@pytest.mark.parametrize("task, kind", [
    ("Answer in lowercase letters only, throughout your entire answer.", "lowercase"),
    ("Make sure the entire response is in English and no capital letters are used.", "lowercase"),
    ("Your entire response should be in English and in all capital letters.", "uppercase"),
    ("Write a critique in all capital letters, no lowercase letters allowed.", "uppercase"),
    ("Please reply in English and capitalize all your words.", "uppercase"),
    ("Don't use any commas in your entire reply.", "no_commas"),
    ("You are not allowed to use any commas in your response.", "no_commas"),
    ("Commas are not allowed in the song.", "no_commas"),
    ("Wrap your entire response with double quotation marks.", "quoted"),
    ("Put double quotation marks around your entire response.", "quoted"),
    ("Wrap your entire output in JSON format.", "json"),
    ("Include a title wrapped in double angular brackets, i.e. <<title>>.", "title"),
    ("Give exactly two different responses separated by 6 asterisk symbols ******.", "two_responses"),
])
def test_whole_answer_instructions_are_read(task, kind):
    assert kind in kinds(task)


def test_the_words_of_a_count_or_a_marker_are_read():
    assert kinds("Finish the poem with this exact phrase: \"Can I get my money back?\"")["ends_with"]["text"] == \
        "Can I get my money back?"
    assert kinds("Highlight at least 3 sections with markdown, i.e. *highlighted section*.")["highlights"]["min"] == 3
    assert kinds("Include at least 12 placeholders represented by square brackets, such as [name].")[
        "placeholders"]["min"] == 12
    assert kinds("At the end of your response, please explicitly add a postscript starting with P.P.S")[
        "postscript"]["marker"] == "P.P.S."
    assert kinds("There should be exactly 3 paragraphs separated by the markdown divider: ***.")["paragraphs"][
        "count"] == 3
    assert kinds("Your response must contain 3 sections, mark the beginning of each section with SECTION X.")[
        "sections"] == {"kind": "sections", "marker": "SECTION", "count": 3}
    assert kinds("Please provide less than a total of 10 sentences.")["sentences"] == {
        "kind": "sentences", "min": None, "max": 9}
    assert kinds("Make sure to use the word war at least 8 times.")["word_times"] == {
        "kind": "word_times", "word": "war", "min": 8, "max": None}
    assert kinds("Include the letter \"l\" at least 15 times.")["letter_times"]["min"] == 15
    assert kinds("Don't contain the letter \"p\" in your reply.")["letter_times"]["max"] == 0


def test_some_words_in_capitals_is_not_an_all_capitals_answer():
    assert "uppercase" not in kinds("Use words with all capital letters to highlight key abilities, but make sure "
                                    "that words with all capital letters appear less than 10 times.")


def test_a_task_without_form_instructions_reads_none():
    assert read_form("Write a short thank-you note to a colleague who helped with a project.") == []


def test_program_fixes_lose_nothing_and_meet_their_instruction():
    task = ("Write about tea. Your entire response should be in English, and in all lowercase letters. Do not use "
            "any commas. Wrap your entire response with double quotation marks. End with: That is all.")
    instructions = read_form(task)
    draft = "Tea, as Green Tea and Black Tea, is good."
    fixed = fix_form(instructions, draft)
    assert fixed == '"tea as green tea and black tea is good.\nthat is all."'
    assert [form_problem(i, fixed) for i in instructions] == [None] * len(instructions)


def test_json_is_wrapped_as_a_string_and_its_commas_kept():
    instructions = read_form("Wrap your entire output in JSON format. Do not use any commas.")
    fixed = fix_form(instructions, "Hello, world")
    assert json.loads(fixed) == {"response": "Hello, world"}
    assert fix_form(instructions, '{"a": 1, "b": 2}') == '{"a": 1, "b": 2}'  # already JSON: left alone


@pytest.mark.parametrize("instruction, good, bad", [
    ({"kind": "title"}, "<<Tea Time>>\nText", "Tea Time\nText"),
    ({"kind": "highlights", "min": 2}, "*one* and *two*", "*one* only"),
    ({"kind": "placeholders", "min": 1}, "Dear [name],", "Dear you,"),
    ({"kind": "postscript", "marker": "P.S."}, "Body.\n\nP.S. See you.", "Body."),
    ({"kind": "paragraphs", "count": 2}, "One.\n***\nTwo.", "One.\n\nTwo."),
    ({"kind": "sections", "marker": "SECTION", "count": 2}, "SECTION 1\na\nSECTION 2\nb", "SECTION 1\na"),
    ({"kind": "two_responses"}, "First.\n******\nSecond.", "First.\n******\nFirst."),
    ({"kind": "sentences", "min": None, "max": 2}, "One. Two.", "One. Two. Three."),
    ({"kind": "word_times", "word": "war", "min": 2, "max": None}, "War and war.", "War."),
    ({"kind": "letter_times", "letter": "p", "min": None, "max": 0}, "No such letter.", "Happy."),
])
def test_each_marked_part_is_checked(instruction, good, bad):
    assert form_problem(instruction, good) is None
    assert form_problem(instruction, bad)


def test_the_repair_by_program_joins_the_instruction_check():
    task = "Write three bullet points about tea in all lowercase letters."
    instructions = read_instructions(task)
    draft = "- Green Tea\n- Black Tea\n- White Tea"
    assert problems(instructions, draft) == ["it has capital letters; use only lowercase"]
    assert problems(instructions, repair_by_program(instructions, draft)) == []


@pytest.mark.parametrize("task, request_", [
    ("First repeat the request below, word for word without change, then give your answer.\n\nWrite a story about "
     "a man. Put the name in double angular brackets.", "Write a story about a man. Put the name in double angular brackets."),
    ("Is ballistics an actual science?\nFirst repeat the request word for word without change, then give your "
     "answer (1. do not say any words before repeating the request)", "Is ballistics an actual science?"),
    ('First, repeat "Could you give me a short summary?" word for word without change, then give your answer.',
     "Could you give me a short summary?"),
])
def test_the_request_to_repeat_is_read_and_put_first(task, request_):
    instructions = read_form(task)
    assert {"kind": "repeat_request", "text": request_} in instructions
    fixed = fix_form(instructions, "My answer.")
    assert fixed.startswith(request_) and fixed.endswith("My answer.")
    assert form_problem({"kind": "repeat_request", "text": request_}, fixed) is None


def test_no_repeat_without_the_instruction():
    assert all(i["kind"] != "repeat_request" for i in read_form("Repeat after me: tea is good. Then explain why."))
