"""The task's instructions said back inside the answer (rules.told_back), checked on every answer and dropped by
program."""

from hierplan.rules.checks import problem, repair_by_program
from hierplan.rules.instructions import always, read_instructions

TASK = ("Write a note to my landlord about the broken heater in the kitchen. We get on well, so keep it warm and "
        "polite: don't use the words \"demand\" or \"urgent\" anywhere. End with a P.S. thanking him for the new "
        "windows.")
ANSWER = ("Dear Mr. Ortiz,\n\nThe heater in the kitchen stopped working on Sunday. We get on well, so keep it warm "
          "and polite. Could you send someone this week?\n\nBest,\nAna\n\nP.S. Thank you for the new windows.")


def _told(task):
    return next(i for i in always(task, read_instructions(task)) if i["kind"] == "told_back")


def test_the_sentences_that_state_requirements_are_the_ones_not_to_say_back():
    told = _told(TASK)
    assert told["said"] == ['We get on well, so keep it warm and polite: don\'t use the words "demand" or "urgent" '
                            'anywhere.', "End with a P.S. thanking him for the new windows."]
    assert all(i["kind"] != "told_back" for i in always("Write a note to my landlord about the heater."))


def test_an_instruction_said_back_is_a_problem_and_a_program_drops_it():
    told = _told(TASK)
    assert "says the task's instructions back" in problem(told, ANSWER)
    fixed = repair_by_program([*read_instructions(TASK), *always(TASK, read_instructions(TASK))], ANSWER)
    assert "keep it warm and polite" not in fixed
    assert "The heater in the kitchen stopped working on Sunday. Could you send someone this week?" in fixed
    assert fixed.endswith("P.S. Thank you for the new windows.") and problem(told, fixed) is None


def test_the_tasks_facts_and_the_phrases_it_asks_for_are_not_instructions_said_back():
    told = _told(TASK)
    # the task's facts, said in the answer, are the answer's
    assert problem(told, "The heater in the kitchen is broken, and we would be glad of a repair soon.") is None
    # a sentence that only asks for things to mention holds the answer's content
    mention = "Write about the old pier. Mention the wooden roller coaster at Brighton by name."
    assert all(i["kind"] != "told_back" for i in always(mention))
    task = "Repeat my request word for word first, then answer.\n\nWrite two lines about rain and keep it under 20 words."
    request = "Write two lines about rain and keep it under 20 words."
    assert problem(_told(task), request + "\n\nRain taps the glass,\nthe garden drinks.") is None


def test_what_the_task_tells_the_answer_to_say_is_its_content_not_an_instruction_said_back():
    task = ("Write the email cancelling my gym membership. Leave out the word \"sorry\". Then tack a P.S. on the end "
            "asking them to confirm the cancellation in writing and that no more payments will come out of my account.")
    told = _told(task)
    said = ("I would like you to confirm the cancellation in writing and that no more payments will come out of my "
            "account.")
    assert problem(told, "Dear team,\n\nI am cancelling my membership.\n\nP.S. " + said) is None
    # the instruction itself, said back, still is
    assert problem(told, "Dear team, I am leaving. Then tack a P.S. on the end.")


def test_a_task_typed_in_lowercase_is_still_many_sentences_and_only_the_instructions_are_said():
    task = ("my sister is moving to portland next month for grad school. can you draft something for her card? "
            "we always text in lowercase so write it with zero capital letters.")
    assert _told(task)["said"] == ["we always text in lowercase so write it with zero capital letters."]
    assert problem(_told(task), "i can't believe you're moving to portland next month for grad school.") is None


def test_an_answer_that_is_all_instructions_said_back_is_left_to_the_reviser_not_emptied():
    from hierplan.rules.told_back import drop_told_back

    told = _told(TASK)
    said_back = "We get on well, so keep it warm and polite."
    assert drop_told_back(said_back, told) == said_back
    assert problem(told, said_back) is not None


def test_what_is_dropped_leaves_no_run_of_empty_lines():
    text = "Dear Ann,\n\nThe heater is fixed.\n\n\n\n\nBest,\nBo"
    assert repair_by_program([], text) == "Dear Ann,\n\nThe heater is fixed.\n\nBest,\nBo"


def test_an_instruction_with_a_verb_of_saying_in_it_is_still_an_instruction():
    from hierplan.rules.told_back import instruction_part

    for sentence in ["Write a thank-you note and keep it under 80 words.",
                     "Don't ask questions; just write the ad in under 50 words."]:
        assert instruction_part(sentence) == sentence


def test_a_stop_after_an_abbreviation_ends_no_sentence_in_lowercase_text():
    from hierplan.rules.told_back import sentences

    assert sentences("write it for mr. smith please. keep it to approx. ten lines.") == [
        "write it for mr. smith please.", "keep it to approx. ten lines."]
