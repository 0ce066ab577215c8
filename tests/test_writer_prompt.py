"""What the writer (the aggregator of a writing task) is told of the task's requirements."""

from hierplan.nodes.aggregator import requirements_note
from hierplan.rules.form_check import fix_form


def test_the_writer_is_told_the_requirements_but_not_what_a_program_puts_in_place():
    note = requirements_note([{"kind": "words", "min": 50, "max": None}, {"kind": "lowercase"},
                              {"kind": "repeat_request", "text": "Write a limerick about a dog."}])
    assert "at least 50 words" in note
    assert "limerick" not in note and "repeated" not in note  # the program puts the request first
    assert "letter case" in note and "lowercase" not in note   # the program applies the case
    assert requirements_note([{"kind": "repeat_request", "text": "Write a limerick."}]) == ""


def test_a_copy_of_the_request_at_the_top_is_not_said_twice():
    request = {"kind": "repeat_request", "text": "Write a limerick about a dog who fears the vacuum."}
    for draft in ("Request: Write a limerick about a dog who fears the vacuum.\n\nThere once was a dog named Lou",
                  "Your request: \"Write a limerick about a dog who fears the vacuum.\"\nThere once was a dog named Lou"):
        fixed = fix_form([request], draft)
        assert fixed == request["text"] + "\n\nThere once was a dog named Lou", draft
    # the request's words inside the answer's own sentence are the answer's
    said = "I will write a limerick about a dog who fears the vacuum. There once was a dog named Lou"
    assert fix_form([request], said) == request["text"] + "\n\n" + said


def _writer_messages(plan_source):
    from hierplan.nodes.aggregator import aggregator_messages
    from hierplan.rules.plan import whole_task_plan

    task = "Write a short story about a lost kite for my niece. Give it a title in << >>."
    state = {"task": task, "kind": "writing", "plan": whole_task_plan(task, "writing", [{"kind": "title"}]),
             "plan_source": plan_source, "results": [], "requirements": [{"kind": "title"}]}
    return task, aggregator_messages(state)


def test_one_piece_planned_by_rule_is_drafted_as_the_person_asked_it():
    from hierplan.nodes import prompts

    task, (system, user) = _writer_messages("rule")
    # no plan, no requirements listed, no "Task:" frame: the checks after the draft hold its form
    assert system.content == prompts.PLAIN_SYSTEM and user.content == task


def test_a_plan_the_model_wrote_shows_the_writer_its_goal_and_the_title_as_the_first_line():
    from hierplan.nodes import prompts

    _, (system, user) = _writer_messages("model")
    assert system.content == prompts.AGGREGATOR_WRITING_SYSTEM
    assert "Goal: Write a short story" in user.content
    assert "on its own first line, then the whole piece below it" in user.content
