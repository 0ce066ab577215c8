"""The model's checklist, kept only where the task bears it out (rules.checklist), and merged behind the regexes."""

import pytest

from hierplan.rules.checklist import grounded, merge, says_number
from hierplan.schema import Checklist

TASK = ("Could you write my sister a birthday poem? Keep every letter lowercase, no capitals at all, and don't use "
        "the word 'old'. Make sure it mentions the word lighthouse, stays under forty words, and gives it a title "
        "inside << and >>. Please finish with the line 'love, tom' and add a P.S. underneath.")


def item(kind, quote, number=None, bound=None, text=None):
    return {"kind": kind, "quote": quote, "number": number, "bound": bound, "text": text}


@pytest.mark.parametrize("read, expected", [
    (item("lowercase", "Keep every letter lowercase"), {"kind": "lowercase"}),
    (item("lowercase", "no capitals at all"), {"kind": "lowercase"}),
    (item("forbidden_word", "don't use the word 'old'", text="old"), {"kind": "avoid_word", "word": "old"}),
    (item("required_word", "mentions the word lighthouse", text="lighthouse"),
     {"kind": "mentions", "term": "lighthouse"}),
    # "under forty" is at most 39, whatever bound the model chose
    (item("word_count", "stays under forty words", 40, "at most"), {"kind": "words", "min": None, "max": 39}),
    (item("title", "gives it a title inside << and >>"), {"kind": "title"}),
    (item("ends_with", "finish with the line 'love, tom'", text="love, tom"), {"kind": "ends_with", "text": "love, tom"}),
    (item("postscript", "add a P.S. underneath", text="P.S."), {"kind": "postscript", "marker": "P.S."}),
])
def test_an_item_the_task_bears_out_becomes_the_checkers_instruction(read, expected):
    got = grounded(read, TASK)
    assert got is not None
    assert {k: v for k, v in got.items() if k not in ("read_by", "quote")} == expected
    assert got["read_by"] == "model" and got["quote"] == read["quote"]


@pytest.mark.parametrize("read", [
    item("uppercase", "no capitals at all"),                       # a negation turns capitals into lowercase
    item("word_count", "stays under forty words", 50, "at most"),  # 50 is not the number the task wrote
    item("word_count", "in no more than 200 words", 200, "at most"),  # not the task's words at all
    item("forbidden_word", "don't use the word 'old'", text="young"),  # the word is not in the task
    item("required_word", "don't use the word 'old'", text="old"),  # the task forbids it
    item("required_word", "Could you write my sister a birthday poem?", text="poem"),  # a topic, not a requirement
    item("json", "Could you write my sister a birthday poem?"),    # the quote says nothing about JSON
    item("ends_with", "finish with the line 'love, tom'", text="x"),
    item("letter_frequency", "Keep every letter lowercase", 3, "at least", "e"),  # no number in the quote
    item("starts_with", "Keep every letter lowercase"),             # no text to begin with
])
def test_an_item_the_task_does_not_bear_out_is_dropped(read):
    assert grounded(read, TASK) is None


SOME_WORDS_TASK = ("Write a song about my noisy flat that has at least 12 words in all capital letters, and let the "
                   "letter z show up at least 5 times. Fewer than 4 words may be in lowercase. Don't say \"I\" more "
                   "than twice in the letter to my landlord.")


CHOICE_TASK = ("Should I repaint the fence this spring? Use one of these two lines to open: \"Go for it.\" or "
               "\"Wait a year.\" Then make 2 of your reasons bold by using double asterisks.")


@pytest.mark.parametrize("read", [
    # a term offered among others is not required: asking for it turned a "Wait a year." reply into the other
    item("required_word", 'Use one of these two lines to open: "Go for it."', text="Go for it."),
    item("required_word", 'Use one of these two lines to open: "Go for it." or "Wait a year."', text="year"),
    # the instruction's own word is no term to say ("italicize at least 2 phrases" read as "mention italicize")
    item("required_word", "make 2 of your reasons bold by using double asterisks", text="bold"),
])
def test_a_term_offered_as_a_choice_or_naming_a_mark_is_not_required(read):
    assert grounded(read, CHOICE_TASK) is None


CUE_TASK = ("My aunt runs a bakery in our house and wants a flyer she can reuse every week, because prices change. "
            "It's for a spelling contest at school too: the letter s must appear at most ten times. Make sure the "
            "word crumb appears in it. I want to buy a used oven too, so add a note explaining how to use the "
            "timer.")


@pytest.mark.parametrize("read", [
    # a cue inside another word is none: "use" in "house", "reuse" and "because"
    item("required_word", "My aunt runs a bakery in our house", text="bakery"),
    item("required_word", "wants a flyer she can reuse every week", text="flyer"),
    item("required_word", "because prices change", text="prices"),
    # a term far from the words that ask for it: the sentence asks for a letter count, not the contest
    item("required_word", "It's for a spelling contest at school too: the letter s must appear at most ten times",
         text="spelling contest"),
    # before "use", not after it: what the task is about, not a word to say
    item("required_word", "I want to buy a used oven too", text="buy"),
    item("required_word", "add a note explaining how to use the timer", text="note"),
])
def test_a_term_is_required_only_where_the_quote_asks_for_it(read):
    assert grounded(read, CUE_TASK) is None


def test_a_term_next_to_the_words_that_ask_for_it_is_kept():
    got = grounded(item("required_word", "Make sure the word crumb appears in it", text="crumb"), CUE_TASK)
    assert got is not None and got["term"] == "crumb"


@pytest.mark.parametrize("read", [
    # a letter to count, not a word
    item("word_frequency", "let the letter z show up at least 5 times", 5, "at least", "z"),
    # a case for some words, not for the whole answer
    item("uppercase", "has at least 12 words in all capital letters"),
    item("lowercase", "Fewer than 4 words may be in lowercase"),
])
def test_a_count_of_some_words_or_of_a_letter_is_no_length_or_word_count(read):
    assert grounded(read, SOME_WORDS_TASK) is None
    assert grounded(item("letter_frequency", "let the letter z show up at least 5 times", 5, "at least", "z"),
                    SOME_WORDS_TASK)["kind"] == "letter_times"
    # a one-letter word in a quote that says "letter" elsewhere is still a word
    said = grounded(item("word_frequency", 'Don\'t say "I" more than twice in the letter', 2, "at most", "I"),
                    SOME_WORDS_TASK)
    assert said is not None and said["kind"] == "word_times" and said["max"] == 2
    # the model quoting another sentence for it: the task still counts the letter
    task = "Draft a memo asking for the quarterly numbers. It should have the letter q in it at least 5 times."
    assert grounded(item("required_word", "Draft a memo asking for the quarterly numbers.", None, None, "q"),
                    task) is None


def test_a_quote_with_curly_quotes_or_other_spacing_is_still_the_tasks_words():
    task = "Write a note, and do not use the word \u201csoon\u201d anywhere."
    got = grounded(item("forbidden_word", 'do not  use the word "soon"', text="soon"), task)
    assert got is not None and got["word"] == "soon"


def test_numbers_are_read_in_digits_and_in_words():
    assert says_number("in 25 words or fewer", 25)
    assert says_number("twenty-five words at most", 25)
    assert says_number("twenty five words", 25)
    assert says_number("no more than twice", 2)
    assert says_number("a hundred words", 100)
    assert not says_number("125 words", 25)
    assert not says_number("twenty words", 25)


def test_the_models_items_fill_only_what_the_regexes_missed():
    by_rule = [{"kind": "lowercase"}, {"kind": "bullets", "min": 3, "max": 3}, {"kind": "avoid_word", "word": "Old"}]
    by_model = [{"kind": "uppercase", "read_by": "model"},            # the regexes already read the case
                {"kind": "numbered", "min": 4, "max": 4, "read_by": "model"},  # and the list's count
                {"kind": "avoid_word", "word": "old", "read_by": "model"},     # and this word
                {"kind": "avoid_word", "word": "young", "read_by": "model"},   # not this one
                {"kind": "title", "read_by": "model"},
                {"kind": "title", "read_by": "model"}]
    merged = merge(by_rule, by_model)
    assert merged == [*by_rule, {"kind": "avoid_word", "word": "young", "read_by": "model"},
                      {"kind": "title", "read_by": "model"}]


def test_the_checklist_schema_bounds_what_the_model_may_write():
    ok = Checklist.model_validate({"requirements": [item("title", "a title in << >>")]})
    assert ok.requirements[0].kind == "title"
    with pytest.raises(ValueError):
        Checklist.model_validate({"requirements": [item("rhyme_scheme", "make it rhyme")]})


REPEAT_TASK = ("For my notes, start with my request copied over just as I typed it, nothing changed, and then answer "
               "it.\n\nWhat is the difference between baking soda and baking powder?")


def test_a_request_to_repeat_the_task_is_read_with_the_request_it_points_to():
    # the model often writes a number where the kind takes none
    got = grounded(item("repeat_request", "start with my request copied over just as I typed it", 1, "exactly"),
                   REPEAT_TASK)
    assert got is not None and got["kind"] == "repeat_request"
    assert got["text"] == "What is the difference between baking soda and baking powder?"


@pytest.mark.parametrize("task, quote", [
    # no word asks for the words unchanged: a summary of the request is no copy of it
    ("Start by restating my question in your own words.\n\nWhy is the sky blue?", "restating my question"),
    # the quote is not where the task says it
    (REPEAT_TASK, "repeat my question word for word"),
    # copying asked of something else than the request
    ("Copy this recipe exactly and double the amounts: 2 eggs, 1 cup flour.", "Copy this recipe exactly"),
])
def test_a_repeat_the_task_does_not_ask_for_is_dropped(task, quote):
    assert grounded(item("repeat_request", quote), task) is None


def test_a_count_of_words_in_capitals_read_by_the_model_is_kept_where_the_quote_counts_words():
    task = "Write the sign for the pool. Keep it calm, with two all-caps words at most."
    got = grounded(item("caps_word_count", "two all-caps words at most", 2, "at most"), task)
    assert {k: got[k] for k in ("kind", "min", "max")} == {"kind": "caps_words", "min": None, "max": 2}
    # a quote that counts no words is no such count; nor is a case for the whole answer one
    assert grounded(item("caps_word_count", "Keep it calm", 2, "at most"), task) is None
    assert grounded(item("uppercase", "two all-caps words at most"), task) is None


def test_a_word_count_the_model_read_of_words_in_capitals_counts_those_words():
    task = "Walk her through it step by step, and go easy on all-caps words: fewer than 3 of them in the whole thing."
    got = grounded(item("word_count", "go easy on all-caps words: fewer than 3 of them", 3, "at most"), task)
    assert {k: got[k] for k in ("kind", "min", "max")} == {"kind": "caps_words", "min": None, "max": 2}


def test_under_another_language_an_english_term_to_mention_is_not_checked_but_a_name_is():
    read = [{"kind": "mentions", "term": "countertops before cutting anything"}, {"kind": "mentions", "term": "Marek"}]
    merged = merge(read, [{"kind": "language", "language": "Polish", "code": "pl", "read_by": "model", "quote": "q"}])
    assert [i.get("term") for i in merged if i["kind"] == "mentions"] == ["Marek"]
    assert len(merge(read, [])) == 2


def test_a_word_count_of_words_in_capitals_counts_those_words_not_the_length():
    caps = grounded(item("word_count", "at least 12 words in all capital letters", 12, "at least"), SOME_WORDS_TASK)
    assert (caps["kind"], caps["min"], caps["max"]) == ("caps_words", 12, None)
    # a length beside a wish for no shouting stays a length
    task = "Write at least 300 words about my trip, and no all-caps shouting."
    got = grounded(item("word_count", "Write at least 300 words about my trip", 300, "at least"), task)
    assert (got["kind"], got["min"]) == ("words", 300)
