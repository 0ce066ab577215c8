"""The read_requirements node and the check after the answer: the model's checklist fills what the regexes miss,
a misreading is dropped, and a rewrite that is no longer the piece is never kept."""

from __future__ import annotations

import json

from fakes import ScriptedChatModel
from hierplan import build_graph

POST = ("Our street finally has a bakery. It opens at seven, the rye sells out by nine, and the owner remembers "
        "every regular's order. Go early on Saturdays, bring cash, and ask about the cardamom buns, which are baked "
        "only twice a week. The queue moves fast and the coffee is better than it needs to be.")


def checklist(*items) -> str:
    return json.dumps({"requirements": [dict({"number": None, "bound": None, "text": None}, **i) for i in items]})


def run(task: str, script: dict, thread: str = "r"):
    model = ScriptedChatModel(script=script)
    graph = build_graph(model=model, constrain=False)
    return model, graph.invoke({"task": task}, {"configurable": {"thread_id": thread}})


def test_a_requirement_only_the_model_read_is_checked_and_revised():
    task = "Tell my neighbours about the new bakery in a few lines, and make sure the word sourdough is in there."
    model, out = run(task, {
        "read_requirements": [checklist({"quote": "make sure the word sourdough is in there", "kind": "required_word",
                                         "text": "sourdough"},
                                        # the task says nothing of JSON: dropped
                                        {"quote": "Tell my neighbours about the new bakery", "kind": "json"})],
        "aggregator": [POST], "reviser": [POST + " Try the sourdough."]})
    assert out["requirements"] == [{"kind": "mentions", "term": "sourdough", "read_by": "model",
                                    "quote": "make sure the word sourdough is in there"}]
    assert out["instruction_check"]["draft_problems"] == ["it does not mention sourdough"]
    assert out["instruction_check"]["ok"] and out["final"].endswith("Try the sourdough.")
    # the draft was asked as the person asked it; the reviser was told what it missed
    aggregator = next(c for c in model.calls if c["node"] == "aggregator")
    assert aggregator["messages"][1].content == task
    reviser = next(c for c in model.calls if c["node"] == "reviser")
    assert "- it does not mention sourdough" in reviser["messages"][1].content


def test_a_rewrite_that_drops_the_piece_is_not_kept_whatever_it_fixes():
    task = "Write a post about the new bakery for our street's newsletter, and put a title on it between << and >>."
    model, out = run(task, {
        "read_requirements": [checklist({"quote": "put a title on it between << and >>", "kind": "title"})],
        "aggregator": [POST], "reviser": ["<<Bakery>>", "<<The Bakery>> It is open."]})
    check = out["instruction_check"]
    assert out["final"] == POST  # the draft, still without its title, is what the user gets
    rejected = [r.get("rejected", "") for r in check["revisions"]]
    assert len(rejected) == 2 and all("dropped the piece" in r for r in rejected)
    assert rejected[0].startswith("the rewrite has 1 words") and rejected[1].startswith("the rewrite has 5 words")
    assert check["problems"] == check["draft_problems"] and not check["ok"]


def test_a_reply_that_is_not_a_checklist_leaves_the_regex_readers_list():
    task = "Write a post about the new bakery. Please keep every letter lowercase."
    model, out = run(task, {"read_requirements": ["I think the task wants lowercase."],
                            "aggregator": [POST]})
    assert model.count("read_requirements") == 1 and out["final"] == POST.lower()
    assert all(i.get("read_by") != "model" for i in out["requirements"])
    assert any(c["node"] == "read_requirements" for c in out["calls"])  # the call is recorded all the same


def test_the_reading_keeps_within_the_runs_token_cap():
    model = ScriptedChatModel(script={"aggregator": [POST]})
    graph = build_graph(model=model, constrain=False, max_new_tokens=6)
    graph.invoke({"task": "Write a post about the bakery."}, {"configurable": {"thread_id": "cap"}})
    [read] = [c for c in model.calls if c["node"] == "read_requirements"]
    assert read["kwargs"]["max_tokens"] == 6 and read["kwargs"]["temperature"] == 0.0


def test_a_case_for_the_whole_reply_is_applied_by_program_and_not_asked_of_the_writer():
    task = "Write a short poem about my cat Pepper for her birthday card. all lowercase, and include the word whiskers."
    poem = ("Pepper of the windowsill, you guard the morning light,\nYou chase the dust in sunbeams and you purr "
            "away the night.\nAnother year of naps and mice, of paws upon my knee,\nHappy birthday, little queen, "
            "from all your staff (that's me).")
    model, out = run(task, {"aggregator": [poem], "reviser": [poem + "\nYour whiskers twitch at every dream."]})
    aggregator = next(c for c in model.calls if c["node"] == "aggregator")["messages"][1].content
    assert aggregator == task  # one piece is drafted as asked; the program applies the case after
    reviser = next(c for c in model.calls if c["node"] == "reviser")["messages"][1].content
    assert "applied to your reply afterwards" in reviser and "does not mention whiskers" in reviser
    assert out["instruction_check"]["ok"] and out["final"] == out["final"].lower()
    assert out["final"].endswith("your whiskers twitch at every dream.")


def test_a_task_without_a_case_is_told_nothing_of_case():
    from hierplan.nodes.aggregator import requirements_note
    from hierplan.nodes.revise import revise_messages

    # the writer of a plan the model wrote, and the reviser
    note = requirements_note([{"kind": "mentions", "term": "whiskers"}])
    assert "letter case" not in note and "- mentions whiskers" in note
    assert "letter case" not in revise_messages("Write a poem.", ["it does not mention whiskers"],
                                                [{"kind": "mentions", "term": "whiskers"}])[1].content


def test_a_case_the_program_applies_is_kept_even_where_it_breaks_a_marker_as_the_draft_did():
    from hierplan.nodes.revise import first_check
    task = ("Write a short guide to composting in 2 sections. Mark the beginning of each section with Section X. "
            "Your entire response should be in lowercase letters.")
    draft = "Section 1\nCollect greens and browns in a bin.\n\nSection 2\nTurn the heap every week and keep it damp."
    check, kept = first_check(task, draft)
    assert kept == kept.lower()  # the case asked for the whole answer, though the markers now read "section 1"
