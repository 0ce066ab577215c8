"""Form instructions read from a task's words (hierplan.rules.form): what is read, what is not, what is checked,
and what a program fixes without losing anything. Every sentence here is worded as a person might write it."""

from __future__ import annotations

import json
import re

import pytest

from hierplan.rules.form import read_form
from hierplan.rules.form_check import fix_form, form_problem
from hierplan.rules.checks import problems, repair_by_program
from hierplan.rules.instructions import read_instructions


def kinds(task: str) -> dict[str, dict]:
    return {i["kind"]: i for i in read_form(task)}


@pytest.mark.parametrize("task, kind", [
    # every letter lowercase, said in several ways
    ("Please keep every letter lowercase.", "lowercase"),
    ("Don't capitalize anything, not even names.", "lowercase"),
    ("Type it all in lower case, like a text message.", "lowercase"),
    ("Reply in lowercase only.", "lowercase"),
    ("The note must not contain a single capital letter.", "lowercase"),
    ("No capitals anywhere, please.", "lowercase"),
    ("Send me a haiku about frost without capitalization.", "lowercase"),
    ("Jot down a shopping list for me using only small letters.", "lowercase"),
    ("Compose a limerick about a goat all in lowercase letters for my niece.", "lowercase"),
    # every letter a capital
    ("Answer entirely in capital letters.", "uppercase"),
    ("Shout it: everything in uppercase!", "uppercase"),
    ("Write your cheer for the team in ALL CAPS.", "uppercase"),
    ("Use capital letters only.", "uppercase"),
    ("Make sure no lowercase letters appear.", "uppercase"),
    ("Capitalize every letter of your answer.", "uppercase"),
    ("Can you write it without capital letters?", "lowercase"),
    # commas
    ("Please skip commas entirely.", "no_commas"),
    ("Leave out every comma in the poem.", "no_commas"),
    ("Don't use a single comma anywhere.", "no_commas"),
    ("The bio must be comma-free.", "no_commas"),
    ("Commas are off-limits in this one.", "no_commas"),
    # quotes around the whole answer
    ("Put your whole reply in quotation marks.", "quoted"),
    ("Enclose everything you write in double quotes.", "quoted"),
    ("I'll frame it, so start and end the whole thing with a double quote mark.", "quoted"),
    ("Write a toast and mark 2 lines I should stress by putting asterisks around them.", "highlights"),
    ("Your answer must be enclosed in quotes.", "quoted"),
    ("The reply should be brief and be wrapped in quotation marks.", "quoted"),
    # JSON
    ("Answer in JSON.", "json"),
    ("Return valid JSON only, nothing else.", "json"),
    ("Format your answer as a JSON object with the keys name and age.", "json"),
    ("Your output must be valid JSON.", "json"),
    # a title in << >>
    ("Give the story a title in << >>.", "title"),
    ("Put the headline inside double angle brackets.", "title"),
    ("Start with a title like <<My Rainy Day>>.", "title"),
    # two answers split by the separator the task shows
    ("Write two jokes about cats and put ****** between them.", "two_responses"),
    ("Give me a pair of slogans for a bakery, split by ******.", "two_responses"),
])
def test_each_requirement_is_read_as_people_put_it(task, kind):
    assert kind in kinds(task)


@pytest.mark.parametrize("task, kind", [
    ("The letter arrived in lowercase handwriting.", "lowercase"),      # describes a thing, asks nothing
    ("Name three lowercase Greek letters.", "lowercase"),
    ("Write the names of the planets in lowercase.", "lowercase"),     # a part of the answer
    ("Keep everything lowercase except the title.", "lowercase"),      # an exception no program keeps
    ("Use lowercase letters for variable names.", "lowercase"),
    ("Why do some alphabets have no capital letters?", "lowercase"),   # a question about case
    ("Explain when to use capital letters in English.", "uppercase"),
    ("List the capital letters of Europe's alphabets.", "uppercase"),
    ("Write the title in capital letters and keep the body short.", "uppercase"),
    ("Do not write in all caps.", "uppercase"),                        # not all caps is not all lowercase
    ("Do not write in all caps.", "lowercase"),
    ("Use words in all caps no more than five times.", "uppercase"),   # some words, not the answer
    ("Use proper capitalization and punctuation.", "uppercase"),
    ("Compare life in capitals and small towns.", "uppercase"),
    ("Don't forget the commas in the address.", "no_commas"),          # asks for commas
    ("Use no more than two commas.", "no_commas"),                     # a limit, not a ban
    ("Never omit commas after an introductory phrase.", "no_commas"),
    ("Don't put a comma after the greeting.", "no_commas"),            # one place, not the whole answer
    ("Put the book titles in quotation marks.", "quoted"),             # a part of the answer
    ("Begin and end it with a quote from Einstein.", "quoted"),        # a quotation, not quote marks
    ("Wrap it in single quotes.", "quoted"),                           # not the double quotes checked
    ("Explain the JSON format to a beginner.", "json"),                # JSON is the subject
    ("Write a function that parses input in JSON.", "json"),
    ("Explain how to use JSON format in a web API.", "json"),
    ("The highlight of the trip was two days in Rome.", "highlights"),
    ("Highlight three reasons to visit Rome.", "highlights"),          # "point out", no markup named
    ("Do not use placeholders.", "placeholders"),
    ("Write 2 paragraphs separated by a blank line.", "placeholders"),
    ("Don't add a P.S.", "postscript"),
    ("Her letter had a funny P.S. about the dog; summarise it.", "postscript"),
    ("Write 2 paragraphs separated by a blank line.", "paragraphs"),   # no separator shown
    ("Begin with Step 1: gather your tools. Give 4 steps.", "sections"),  # one step named, no marker for each
    ("Read Chapter 3 and summarize it in 2 paragraphs.", "sections"),
    ("Each paragraph should have at most 3 sentences.", "sentences"),  # per paragraph, not in all
    ("Write 3 paragraphs with 4 sentences each.", "sentences"),
    ("Suggest 4 names for a cafe, with one sentence on each.", "sentences"),
    ("End each paragraph with \"Amen.\"", "ends_with"),                  # not the whole answer's ending
    ("Rewrite the text above in simpler words.", "repeat_request"),
    ("Avoid words that are too long.", "avoid_word"),
])
def test_sentences_that_are_not_the_requirement_are_not_read_as_it(task, kind):
    assert kind not in kinds(task)


def test_case_words_that_disagree_read_no_case():
    assert {"lowercase", "uppercase"}.isdisjoint(kinds("Write the intro in all caps and the rest in lowercase."))
    assert kinds("Keep it all lowercase; no capital letters at all.")["lowercase"] == {"kind": "lowercase"}


@pytest.mark.parametrize("task, expected", [
    ("End your reply with the words \"See you soon.\"", {"kind": "ends_with", "text": "See you soon."}),
    ("Close with the sentence 'Don't give up.'", {"kind": "ends_with", "text": "Don't give up."}),
    ("The last line of your note should be \"Thanks for reading!\"",
     {"kind": "ends_with", "text": "Thanks for reading!"}),
    ("Finish with: Stay curious.", {"kind": "ends_with", "text": "Stay curious."}),
    ("Keep it brief and end it with exactly: Bring a jacket.", {"kind": "ends_with", "text": "Bring a jacket."}),
    ("Mark two passages in italics with single asterisks.", {"kind": "highlights", "min": 2}),
    ("Italicize at least four phrases.", {"kind": "highlights", "min": 4}),
    ("Highlight three key phrases using *asterisks*.", {"kind": "highlights", "min": 3}),
    ("Put at least 3 important sentences in bold.", {"kind": "highlights", "min": 3}),
    ("Include 3 italic phrases.", {"kind": "highlights", "min": 3}),
    ("Write 4 sections and highlight each section title with asterisks.", {"kind": "highlights", "min": 4}),
    ("Use markdown to emphasize some key ideas, like *this*.", {"kind": "highlights", "min": 1}),
    ("Include at least 5 placeholders like [name] and [date].", {"kind": "placeholders", "min": 5}),
    ("Leave two blanks in square brackets for the customer to fill in.", {"kind": "placeholders", "min": 2}),
    ("Use placeholders such as [city] for the details.", {"kind": "placeholders", "min": 1}),
    ("No venue yet, so leave square bracket blanks like [venue] where it goes, at least 3 of them.",
     {"kind": "placeholders", "min": 3}),
    ("Add a P.S. at the end.", {"kind": "postscript", "marker": "P.S."}),
    ("Add a postscript at the end.", {"kind": "postscript", "marker": "P.S."}),    # the usual marker
    ("Finish with a PPS line thanking the reader.", {"kind": "postscript", "marker": "P.P.S."}),
    ("Write 3 paragraphs and separate them with ***.", {"kind": "paragraphs", "count": 3}),
    ("Split the story into four parts, with a *** line between them.", {"kind": "paragraphs", "count": 4}),
    ("Write a 3-day plan. Label each day Day 1, Day 2 and so on.", {"kind": "sections", "marker": "Day", "count": 3}),
    ("Plan four days and label each day Day 1 Day 2 Day 3 Day 4.", {"kind": "sections", "marker": "Day", "count": 4}),
    ("Organize the report into five chapters, numbered Chapter 1 to Chapter 5.",
     {"kind": "sections", "marker": "Chapter", "count": 5}),
    ("Your essay needs 4 parts; start each part with PART X.", {"kind": "sections", "marker": "PART", "count": 4}),
    ("Write the poem in three stanzas; head each stanza with \"Stanza N\".",
     {"kind": "sections", "marker": "Stanza", "count": 3}),
    ("Write no more than four sentences.", {"kind": "sentences", "min": None, "max": 4}),
    ("Keep it to 3 sentences.", {"kind": "sentences", "min": 3, "max": 3}),
    ("Write a 2-sentence bio.", {"kind": "sentences", "min": 2, "max": 2}),
    ("Write between 5 and 8 sentences.", {"kind": "sentences", "min": 5, "max": 8}),
    ("Use under twenty-five sentences.", {"kind": "sentences", "min": None, "max": 24}),
    ("Use the word \"river\" at least three times.", {"kind": "word_times", "word": "river", "min": 3, "max": None}),
    ("Mention 'harbor' exactly twice.", {"kind": "word_times", "word": "harbor", "min": 2, "max": 2}),
    ("The word light should show up no more than 2 times.",
     {"kind": "word_times", "word": "light", "min": None, "max": 2}),
    ("Make sure the letter z appears at least 4 times.", {"kind": "letter_times", "letter": "z", "min": 4, "max": None}),
    ("Use the letter q at least twice.", {"kind": "letter_times", "letter": "q", "min": 2, "max": None}),
    ("Avoid using the letter i more than twice.", {"kind": "letter_times", "letter": "i", "min": None, "max": 2}),
    ("Avoid the letter e.", {"kind": "letter_times", "letter": "e", "min": None, "max": 0}),
    ("The letter k must not appear.", {"kind": "letter_times", "letter": "k", "min": None, "max": 0}),
    ("Don't use the word sorry.", {"kind": "avoid_word", "word": "sorry"}),
    ("Avoid saying the word \"literally\".", {"kind": "avoid_word", "word": "literally"}),
    ("Describe a rainbow, but you can't use the words \"red\" or \"blue\".", {"kind": "avoid_word", "word": "red"}),
    ("Tell me about tea. You can\u2019t say the word herbal.", {"kind": "avoid_word", "word": "herbal"}),
    # a negation of an earlier instruction is not this one's
    ("No exclamation marks, and the letter w has to show up at least three times.",
     {"kind": "letter_times", "letter": "w", "min": 3, "max": None}),
    ("Don't use the letter z and the letter q more than once.",
     {"kind": "letter_times", "letter": "q", "min": None, "max": 1}),
    ("The letter n should not appear in it more than 3 times.",
     {"kind": "letter_times", "letter": "n", "min": None, "max": 3}),
    ("The word 'lovely' should not appear more than twice.",
     {"kind": "word_times", "word": "lovely", "min": None, "max": 2}),
    ("The note should have the letter x in it at least twice.",
     {"kind": "letter_times", "letter": "x", "min": 2, "max": None}),
    ("Give at least 2 phrases of the answer markdown emphasis.", {"kind": "highlights", "min": 2}),
    ("Add italics to three short phrases.", {"kind": "highlights", "min": 3}),
    ("Mark at least one point with markdown emphasis, say *this*.", {"kind": "highlights", "min": 1}),
    ("A quiz for my class: put every question in bold and write at least five questions.",
     {"kind": "highlights", "min": 5}),
])
def test_what_is_read_carries_the_tasks_count_marker_or_words(task, expected):
    assert expected in read_form(task)


def test_word_lists_to_leave_out_and_limits_on_a_word():
    def avoided(task):
        return [i["word"] for i in read_form(task) if i["kind"] == "avoid_word"]

    assert avoided("Avoid the words \"very\" and \"really\".") == ["very", "really"]
    assert avoided("Leave out these terms: synergy, leverage, paradigm.") == ["synergy", "leverage", "paradigm"]
    assert avoided("Please don't use the words cheap or budget.") == ["cheap", "budget"]
    assert avoided("The words \"cheap\" and \"budget\" must not appear.") == ["cheap", "budget"]
    assert avoided("Don't use words like \"basically\".") == ["basically"]
    # a limit on a word is not a ban on it
    assert read_form("Don't use the word \"very\" more than twice.") == [
        {"kind": "word_times", "word": "very", "min": None, "max": 2}]


def test_a_task_without_form_instructions_reads_none():
    for task in ("Write a short thank-you note to a colleague who helped with a project.",
                 "How do capital cities differ from other cities?",
                 "Summarise the plot of a heist film in a paragraph.",
                 "Tell me about the history of the comma."):
        assert read_form(task) == [], task


def test_program_fixes_lose_nothing_and_meet_their_instruction():
    task = ("Write about tea. Keep every letter lowercase and skip commas entirely. Put your whole reply in quotation "
            "marks. End with: That is all.")
    instructions = read_form(task)
    assert {i["kind"] for i in instructions} == {"lowercase", "no_commas", "quoted", "ends_with"}
    draft = "Tea, as Green Tea and Black Tea, is good."
    fixed = fix_form(instructions, draft)
    assert fixed == '"tea as green tea and black tea is good.\nthat is all."'
    assert [form_problem(i, fixed) for i in instructions] == [None] * len(instructions)


def test_missing_highlights_mark_opening_sentences_and_keep_every_word():
    highlights = {"kind": "highlights", "min": 4}  # one is there: three to mark
    draft = ("Bees matter. They pollinate crops.\n\n## Why\n- Hives need *clean* water\n- Flowers feed them all year."
             "\n```\nx = 1. y = 2.\n```\nPlant clover, thyme and lavender, which bloom at different times of the "
             "summer and keep the hive fed from the first warm day until the first frost comes.")
    fixed = fix_form([highlights], draft)
    assert fixed == ("*Bees matter.* They pollinate crops.\n\n## Why\n- Hives need *clean* water\n- *Flowers feed "
                     "them all year.*\n```\nx = 1. y = 2.\n```\n*Plant clover*, thyme and lavender, which bloom at "
                     "different times of the summer and keep the hive fed from the first warm day until the first "
                     "frost comes.")
    assert form_problem(highlights, fixed) is None and fixed.replace("*", "") == draft.replace("*", "")


def test_json_is_wrapped_as_a_string_and_its_commas_kept():
    instructions = read_form("Answer in JSON and don't use a single comma anywhere.")
    assert {i["kind"] for i in instructions} == {"json", "no_commas"}
    fixed = fix_form(instructions, "Hello, world")
    assert json.loads(fixed) == {"response": "Hello, world"}
    assert fix_form(instructions, '{"a": 1, "b": 2}') == '{"a": 1, "b": 2}'  # already JSON: left alone


def test_a_json_answer_cut_off_or_said_inside_prose_is_closed_not_wrapped_as_a_string():
    json_asked = [{"kind": "json"}]
    cut = 'Here it is:\n```json\n{"title": "Garden study", "aims": ["soil", "bees"], "summary": "We will measure'
    assert json.loads(fix_form(json_asked, cut)) == {"title": "Garden study", "aims": ["soil", "bees"],
                                                     "summary": "We will measure"}
    said = '```json\n{"city": "Lyon", "days": 3}\n```\nThis JSON covers the whole trip.'
    assert json.loads(fix_form(json_asked, said)) == {"city": "Lyon", "days": 3}
    # prose with a brace in it holds no object: wrapped whole
    brace = "I think {curly} braces are fun to type."
    assert json.loads(fix_form(json_asked, brace)) == {"response": brace}


@pytest.mark.parametrize("instruction, good, bad", [
    ({"kind": "title"}, "<<Tea Time>>\nText", "Tea Time\nText"),
    ({"kind": "highlights", "min": 2}, "*one* and *two*", "*one* only"),
    ({"kind": "placeholders", "min": 1}, "Dear [name],", "Dear you,"),
    ({"kind": "postscript", "marker": "P.S."}, "Body.\n\nP.S. See you.", "Body."),
    ({"kind": "paragraphs", "count": 2}, "One.\n***\nTwo.", "One.\n\nTwo."),
    ({"kind": "sections", "marker": "Day", "count": 2}, "Day 1\na\nDay 2\nb", "Day 1\na"),
    ({"kind": "two_responses"}, "First.\n******\nSecond.", "First.\n******\nFirst."),
    ({"kind": "sentences", "min": None, "max": 2}, "One. Two.", "One. Two. Three."),
    ({"kind": "word_times", "word": "river", "min": 2, "max": None}, "River and river.", "River."),
    ({"kind": "letter_times", "letter": "p", "min": None, "max": 0}, "No such letter.", "Happy."),
])
def test_each_marked_part_is_checked(instruction, good, bad):
    assert form_problem(instruction, good) is None
    assert form_problem(instruction, bad)


def test_the_messages_to_the_model_show_the_form_not_a_benchmarks_words():
    assert form_problem({"kind": "title"}, "No title") == "it needs a title wrapped in << and >>, like <<A Title>>"
    said = form_problem({"kind": "highlights", "min": 2}, "plain")
    assert "single asterisks" in said and "*a key phrase*" in said and "section" not in said


def test_the_repair_by_program_joins_the_instruction_check():
    task = "Write three bullet points about tea and keep every letter lowercase."
    instructions = read_instructions(task)
    draft = "- Green Tea\n- Black Tea\n- White Tea"
    assert problems(instructions, draft) == ["it has capital letters; use only lowercase"]
    assert problems(instructions, repair_by_program(instructions, draft)) == []


@pytest.mark.parametrize("task, request_", [
    ("Before you answer, copy my request below exactly as it is.\n\nSuggest a name for a bakery in Lisbon. Keep it "
     "to one word.", "Suggest a name for a bakery in Lisbon. Keep it to one word."),
    ("What makes a sourdough starter fail?\nRepeat my question word for word first, and only then answer it.",
     "What makes a sourdough starter fail?"),
    ('Echo "Where do swallows go in winter?" verbatim, then reply.', "Where do swallows go in winter?"),
    ("Start your reply by writing out my request below exactly as it is, then do it:\n\nName a good first houseplant.",
     "Name a good first houseplant."),
    ("For my revision cards I want the question at the top of your reply exactly as I wrote it, then the answer.\n\n"
     "Why do leaves change colour in autumn?", "Why do leaves change colour in autumn?"),
    ("I save what I ask, so begin by pasting my request below exactly as written, then do it:\n\nWrite a short "
     "note thanking our neighbours for the flowers.", "Write a short note thanking our neighbours for the flowers."),
])
def test_the_request_to_repeat_is_read_and_put_first(task, request_):
    instructions = read_form(task)
    assert {"kind": "repeat_request", "text": request_} in instructions
    fixed = fix_form(instructions, "My answer.")
    assert fixed.startswith(request_) and fixed.endswith("My answer.")
    assert form_problem({"kind": "repeat_request", "text": request_}, fixed) is None


def test_no_repeat_without_the_instruction():
    for task in ("Repeat after me: tea is good. Then explain why.", "Rewrite the text above in simpler words.",
                 "Tell me about owls.\n\nWhy do owls repeat their calls at night?",
                 "Write out the text of the poem exactly, then explain it.",
                 "Put the question at the top of your reply in bold, then answer it.\n\nWhy is the sea salty?",
                 "Paste the text below into a table, then sort it by date.\n\nJan 3 rent\nJan 1 food"):
        assert all(i["kind"] != "repeat_request" for i in read_form(task)), task


def test_paragraphs_and_sections_are_regrouped_keeping_every_word():
    text = ("Bikes\n\nThe first ones had no pedals. Riders pushed with their feet.\n\nChains came later.\n\n"
            "Tyres with air made rides soft. Racing grew. Clubs formed.\n\nToday millions ride.")
    three = {"kind": "paragraphs", "count": 3}
    fixed = fix_form([three], text)
    assert form_problem(three, fixed) is None
    assert fixed == ("Bikes\n\nThe first ones had no pedals. Riders pushed with their feet.\n\n***\n\nChains came "
                     "later.\n\nTyres with air made rides soft. Racing grew. Clubs formed.\n\n***\n\nToday millions "
                     "ride.")
    six = {"kind": "paragraphs", "count": 6}
    assert form_problem(six, fix_form([six], text)) is None  # split between sentences
    assert fix_form([six], "One line only.") == "One line only."  # cannot be made: left to the reviser
    sections = {"kind": "sections", "marker": "Part", "count": 2}
    fixed = fix_form([sections], text)
    assert form_problem(sections, fixed) is None and fixed.startswith("Part 1\nBikes\n\n")
    assert re.sub(r"Part \d\n|\*\*\*|\s", "", fixed) == re.sub(r"\s", "", text)


def test_regrouping_keeps_lines_as_lines_and_headings_with_their_text():
    from hierplan.rules.form_check import regroup

    poem = "Roses are red.\nViolets are blue.\nSugar is sweet.\nAnd so are you."
    assert regroup(poem, 2) == ["Roses are red.\nViolets are blue.", "Sugar is sweet.\nAnd so are you."]
    walk = "Reasons to walk:\n- It is cheap.\n- It is healthy.\n- It clears the head."
    assert "\n".join(regroup(walk, 2)) == walk
    costs = ("Moving house takes planning, and most of it is about money, time and the people who help.\n\n"
             "## Costs\n\nThe van costs the most.")
    groups = regroup(costs, 2)
    assert groups[1].startswith("## Costs") and groups[1].endswith("The van costs the most.")


def test_sections_are_numbered_once():
    text = "SECTION 1\nFirst point. Second point.\n\nSECTION 2\nThird point."
    fixed = fix_form([{"kind": "sections", "marker": "SECTION", "count": 3}], text)
    assert len(re.findall(r"SECTION \d", fixed)) == 3 and "First point." in fixed and "Third point." in fixed
    days = "Day 1 was rainy. We stayed in.\n\nDay 2 was sunny."  # a marker in a sentence is the sentence's
    fixed = fix_form([{"kind": "sections", "marker": "Day", "count": 3}], days)
    assert "Day 1 was rainy." in fixed and "Day 2 was sunny." in fixed


def test_highlights_leave_a_required_ending_json_tables_and_numbers_whole():
    end = [{"kind": "ends_with", "text": "See you on the trail."}, {"kind": "highlights", "min": 2}]
    fixed = fix_form(end, "Cities grow fast. Roads fill up.\nParks matter too.")
    assert fixed.endswith("\nSee you on the trail.") and form_problem(end[1], fixed) is None
    already = "Cities grow fast.\nSee you on the trail."
    assert fix_form(end, already).endswith("\nSee you on the trail.")
    data = '{"city": "Oslo", "people": 700000}'
    assert fix_form([{"kind": "json"}, {"kind": "highlights", "min": 1}], data) == data
    table = "Name | Age\nBob | 30\n\nAbout 3.5 million people live here."
    fixed = fix_form([{"kind": "highlights", "min": 1}], table)
    assert fixed == "Name | Age\nBob | 30\n\n*About 3.5 million people live here.*"


def test_json_in_one_letter_case_keeps_its_escapes():
    upper = [{"kind": "json"}, {"kind": "uppercase"}]
    fixed = fix_form(upper, '{"note": "first line\\nsecond line, caf\\u00e9"}')
    assert json.loads(fixed) == {"NOTE": "FIRST LINE\nSECOND LINE, CAFÉ"}
    fenced = fix_form(upper, '```json\n{"steps": ["mix\\tstir", 2]}\n```')
    assert fenced.startswith("```json\n") and fenced.endswith("\n```")
    assert json.loads(fenced[len("```json\n"):-len("\n```")]) == {"STEPS": ["MIX\tSTIR", 2]}
    # not JSON: the text as it is, cased
    assert fix_form([{"kind": "uppercase"}], "one\\ntwo") == "ONE\\NTWO"


def test_two_responses_written_as_two_labelled_parts_are_separated_by_program():
    draft = ("- **Formal reply:**\n  Dear Ms Kay,\n  I am away until Monday.\n\n"
             "- **Casual reply:**\n  Hey! Off till Monday, back soon.")
    fixed = fix_form([{"kind": "two_responses"}], draft)
    assert fixed == "Dear Ms Kay,\nI am away until Monday.\n\n******\n\nHey! Off till Monday, back soon."
    assert form_problem({"kind": "two_responses"}, fixed) is None
    # a part that says more than its label keeps its words
    assert fix_form([{"kind": "two_responses"}], "1. Take the bus.\n2. Walk there.") == (
        "Take the bus.\n\n******\n\nWalk there.")


def test_an_answer_that_is_not_two_parts_is_left_to_the_reviser():
    for draft in ("Here are two ideas:\n- one\n- two", "- one\n- two\n- three", "Just one reply."):
        assert fix_form([{"kind": "two_responses"}], draft) == draft


@pytest.mark.parametrize("task, spec", [
    ("Write the staff memo. No more than 3 words in all caps, please, it reads like shouting.", (None, 3)),
    ("a short note for the fridge, two all-caps words at most", (None, 2)),
    ("Make the flyer loud: use at least 4 words in capital letters.", (4, None)),
    ("Write the chant and use all caps for at least 5 words so it pops.", (5, None)),
    ("Don't put more than 2 words in uppercase.", (None, 2)),
    ("Shout a bit: words in all caps should appear at least 6 times.", (6, None)),
    ("Words in caps may show up at most 5 times.", (None, 5)),
    ("Please limit the number of all-caps words to fewer than four.", (None, 3)),
])
def test_a_count_of_words_in_capitals_is_read_and_is_no_length(task, spec):
    found = [i for i in read_instructions(task) if i["kind"] in ("caps_words", "words", "uppercase")]
    assert found == [{"kind": "caps_words", "min": spec[0], "max": spec[1]}]


@pytest.mark.parametrize("task", [
    "Write a story of at most 200 words in all caps.",  # its length, and its case
    "I want 3 to 5 words in capital letters.",          # a range: left unread rather than misread
    "Write a poem with fewer than 5 capitalized words.",  # capitalized is not all caps
])
def test_a_length_or_an_unclear_count_is_no_count_of_words_in_capitals(task):
    assert not [i for i in read_instructions(task) if i["kind"] == "caps_words"]


def test_words_in_capitals_are_counted_and_those_past_the_limit_written_as_ordinary_words():
    at_most = {"kind": "caps_words", "min": None, "max": 2}
    memo = "URGENT: the lot closes FRIDAY. I said it before: NO parking on the grass.\n```\nSET MODE=ON\n```"
    assert "3 words in all capital letters (URGENT, FRIDAY, NO)" in form_problem(at_most, memo)
    fixed = fix_form([at_most], memo)
    # the last long ones go first; a short one (an acronym, perhaps) stays while a longer one can go
    assert fixed == "URGENT: the lot closes Friday. I said it before: NO parking on the grass.\n```\nSET MODE=ON\n```"
    assert form_problem(at_most, fixed) is None
    at_least = {"kind": "caps_words", "min": 3, "max": None}
    assert "at least 3 words in ALL CAPS" in form_problem(at_least, fixed)
    assert fix_form([at_least], fixed) == fixed  # adding emphasis is the reviser's, not a program's


def test_a_titles_label_and_quotes_are_no_part_of_it():
    title = [{"kind": "title"}]
    for drafted in ('<<Title: "The Last Dance">>\n\nJack froze.', "<<Title: The Last Dance>>\n\nJack froze.",
                    "<<\u201cThe Last Dance\u201d>>\n\nJack froze."):
        assert fix_form(title, drafted) == "<<The Last Dance>>\n\nJack froze.", drafted
    assert fix_form(title, "<<The Last Dance>>\n\nJack froze.") == "<<The Last Dance>>\n\nJack froze."


def test_a_one_sentence_part_of_each_item_is_no_sentence_count_of_the_answer():
    task = ("Suggest 6 board games as JSON: a list where each game has name, player_count, play_time_minutes, "
            "difficulty and a one-sentence why_its_good.")
    assert "sentences" not in kinds(task)
    summary = kinds("Give me a one-sentence summary of the book.")["sentences"]
    assert summary == {"kind": "sentences", "min": 1, "max": 1}


def test_two_labelled_responses_with_the_separator_misplaced_are_separated_again():
    two = [{"kind": "two_responses"}]
    drafted = ("Short and direct:\n\"Hey, I had fun, but I don't feel a spark. Take care.\"\n\nWarmer and longer:\n"
               "\"I've really enjoyed our dates, and you're so kind. I just don't feel the spark I'm looking for.\""
               "\n\n******")
    fixed = fix_form(two, drafted)
    assert form_problem(two[0], fixed) is None and "Short and direct" not in fixed
    first, second = [part.strip() for part in fixed.split("******")]
    assert first.startswith('"Hey, I had fun') and second.startswith('"I\'ve really enjoyed')


def test_an_ending_after_a_colon_runs_to_the_lines_end():
    assert kinds("Use the word firm, and end with exactly: Let me know")["ends_with"]["text"] == "Let me know"


def test_full_caps_are_capitals_and_many_words_in_capitals_are_the_length():
    def read(task):
        return [i for i in read_instructions(task) if i["kind"] in ("caps_words", "words")]

    assert read("Put at least 4 words in full caps for that energy.") == [{"kind": "caps_words", "min": 4, "max": None}]
    assert read("Write an essay with at least 150 words in all caps.") == [{"kind": "words", "min": 150, "max": None}]
    # capitalised words are not words in capitals
    assert read("Words with capital letters should appear less than 4 times.") == []


def test_words_in_capitals_written_as_ordinary_words_keep_their_apostrophes_and_acronyms_go_last():
    at_most_two = [{"kind": "caps_words", "min": None, "max": 2}]
    fixed = fix_form(at_most_two, "The FBI said STOP, DON'T WAIT, then MP3s LEAKED.")
    assert fixed == "The FBI said Stop, Don't Wait, then MP3s Leaked."


def test_a_count_of_all_caps_words_after_a_colon_is_read():
    task = "She gets stressed by yelling, so go easy on all-caps words: fewer than 3 of them in the whole thing."
    assert [i for i in read_instructions(task) if i["kind"] in ("caps_words", "words")] == \
        [{"kind": "caps_words", "min": None, "max": 2}]
