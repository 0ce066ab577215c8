"""The answer stays the answer: a rewrite that is no longer the piece is never kept (rules.substance)."""

import json

import pytest

from hierplan.rules.substance import NOT_AN_ANSWER, echo_share, not_the_piece, substance_lost

TASK = ("Write a blog post about moving to a small town for someone thinking about it. Keep it friendly and end it "
        "with the exact sentence 'Is there anything else I can help with?'")
POST = ("Moving to a small town changed how I spend my days. Mornings start at the bakery, where the owner knows "
        "my order, and evenings end on the porch with neighbours who wave. Rent is lower, the air is cleaner, and "
        "the library hosts a book club every Thursday. You give up late-night takeout and some career options, so "
        "visit for a week first, talk to people at the market, and check the commute before you sign a lease. ")
ENDING = [{"kind": "ends_with", "text": "Is there anything else I can help with?"}]


def test_a_rewrite_that_is_only_the_required_ending_is_rejected():
    why = substance_lost(POST, "Is there anything else I can help with?", TASK, ENDING)
    assert why is not None and "dropped the piece" in why


def test_a_rewrite_of_the_same_piece_that_fixes_the_ending_is_kept():
    assert substance_lost(POST, POST + "Is there anything else I can help with?", TASK, ENDING) is None


def test_a_rewrite_may_shrink_to_the_tasks_own_word_limit():
    limit = [{"kind": "words", "min": None, "max": 30}]
    short = " ".join(POST.split()[:25])
    assert substance_lost(POST, short, TASK, limit) is None
    assert substance_lost(POST, " ".join(POST.split()[:10]), TASK, limit) is not None


def test_a_rewrite_that_copies_the_request_back_is_rejected():
    copied = TASK + " " + " ".join(POST.split()[:40])
    why = substance_lost(POST, copied, TASK, ENDING)
    assert why is not None and "task's words" in why


def test_the_phrases_the_task_asks_for_do_not_count_as_copying():
    # the required ending is the task's words by request
    assert echo_share(POST + "Is there anything else I can help with?", TASK,
                      ["Is there anything else I can help with?"]) == echo_share(POST, TASK)
    assert echo_share("", TASK) == 0.0


def test_an_answer_that_is_the_request_copied_back_is_not_the_piece():
    task = "Write a short story about a lighthouse keeper who finds a message in a bottle, all in capital letters."
    assert not_the_piece(task.upper(), task, [{"kind": "uppercase"}]) == NOT_AN_ANSWER
    assert not_the_piece("Write a short story about a lighthouse keeper.", task, []) == NOT_AN_ANSWER


def test_a_request_to_repeat_the_task_does_not_make_the_repeat_an_echo():
    task = "Say this sentence back first, word for word: tell me about the tides. Then tell me about the tides."
    asked = [{"kind": "repeat_request", "text": "tell me about the tides."}]
    answer = "tell me about the tides. " + POST.replace("small town", "coast")
    assert not_the_piece(answer, task, asked) is None


def test_a_title_or_a_required_line_is_not_the_essay_the_task_names():
    task = "I need an essay on why cities should plant more trees. Put a title like <<Green streets>> on top."
    why = not_the_piece("<<Why Cities Need Trees>>", task, [{"kind": "title"}])
    assert why is not None and "essay" in why and "0 words besides its title" in why
    assert not_the_piece(POST, task, [{"kind": "title"}]) is None


def test_a_short_answer_is_fine_where_the_task_allows_it_or_names_no_piece():
    essay = "Write an essay on trees in at most 30 words."
    assert not_the_piece("Trees shade streets, cool the air and calm people.", essay,
                         [{"kind": "words", "min": None, "max": 30}]) is None
    assert not_the_piece("Trees shade streets.", "Write an essay on trees in two sentences.",
                         [{"kind": "sentences", "min": None, "max": 2}]) is None
    assert not_the_piece("A bronze bust of a bearded, moustached gentleman.",
                         'How would you say "A bust of a man with a beard." more elegantly?', []) is None
    assert not_the_piece("Fight Laughs, Punch Harder!", "Come up with a slogan for my funny fighting game.",
                         []) is None


def test_asked_to_expand_on_a_text_two_short_bullets_are_not_enough():
    task = 'Can you expand on this text: "Measure twice, cut once." Two bullet points, please.'
    why = not_the_piece("* Plan before you act\n* Check your work", task, [{"kind": "bullets", "min": 2, "max": 2}])
    assert why is not None and "the whole piece" in why


def test_capital_letters_are_not_a_letter_to_write():
    task = "Name three startups that do software for the planet, in all capital letters."
    assert not_the_piece("- TERRA CODE\n- GREEN STACK\n- ORBIT SOFT", task, [{"kind": "uppercase"}]) is None
    assert not_the_piece("Dear Sam, thanks.", "Write a letter to Sam about the move.", []) is not None
    name = "Think up a name for my bakery. All letters in the reply should be lower case letters."
    assert not_the_piece("crumb and co", name, [{"kind": "lowercase"}]) is None


POEM_TASK = "Could you write me a poem about a lighthouse keeper who misses the mainland? Keep it gentle."
POEM = ("The lamp turns slow above the foam,\nhe counts the ships that carry home\nthe bread, the letters, "
        "voices wide,\nwhile he keeps watch on the other side.\n\nAt dawn he folds the night away\nand waves to "
        "boats that never stay.")
POINTS = ("- The lighthouse keeper lives alone on a rock far from the coast and its towns.\n- He misses the "
          "mainland, his family and the market on Saturdays.\n- He watches the ships every night and writes down "
          "their names.\n- The poem should be gentle and calm in tone, with soft images of the sea.")


def test_a_list_where_the_task_names_one_poem_is_not_the_piece():
    why = not_the_piece(POINTS, POEM_TASK, [])
    assert why is not None and "list of points, not the poem" in why
    assert not_the_piece(POEM, POEM_TASK, []) is None


def test_a_list_is_the_piece_when_the_task_asks_for_one():
    assert not_the_piece(POINTS, POEM_TASK, [{"kind": "bullets", "min": 4, "max": 4}]) is None
    assert not_the_piece(POINTS, "Give me the main points of a poem about a lighthouse keeper.", []) is None
    # several pieces may come as a list of them
    assert not_the_piece(POINTS, "Write three short poems about a lighthouse keeper.", []) is None


def test_a_rewrite_that_turns_the_piece_into_a_list_is_rejected():
    why = substance_lost(POEM, POINTS + "\n- He waves to boats.", POEM_TASK, [])
    assert why is not None and "into a list" in why
    assert substance_lost(POEM, POEM.replace("gentle", "soft"), POEM_TASK, []) is None


def test_a_list_where_the_task_names_one_pep_talk_or_paragraph_is_not_the_piece():
    for task in ["My brother failed his driving test twice. Write him a warm pep talk before the third try.",
                 "Sum up why people keep lighthouses in one paragraph, for a museum card."]:
        why = not_the_piece(POINTS, task, [])
        assert why is not None and "list of points" in why, task
    assert not_the_piece(POINTS, "How do I make french toast?", []) is None  # a toast is no piece here
    assert not_the_piece(POINTS, "Write release notes for version 2 of our app.", []) is None


def test_a_list_where_the_task_counts_its_sentences_is_not_the_piece():
    sentences = [{"kind": "sentences", "min": None, "max": 6}]
    task = "Write the blurb for our radio show about old maps. Keep it to 6 sentences max."
    why = not_the_piece(POINTS, task, sentences)
    assert why is not None and "list of points" in why
    assert not_the_piece(POINTS, task, []) is None  # no sentence count, no running piece named: a list may do
    assert not_the_piece(POINTS, task + " Give it as bullet points.", sentences) is None  # a list asked for
    assert not_the_piece(POEM, task, sentences) is None


def test_a_blurb_is_a_piece_not_a_line():
    why = not_the_piece("**The Lighthouse Keeper's Secret**", "Write the back-cover blurb for my mystery novel.", [])
    assert why is not None and "not the blurb" in why


def test_a_speech_bubble_or_a_text_to_speech_app_names_no_speech_to_write():
    rules = "- No poking.\n- No loud music.\n- Seeds at noon."
    assert not_the_piece(rules, "Write three house rules from my cat's point of view for a speech bubble.", []) is None
    assert not_the_piece("Vaccines train the body.", "She uses a text-to-speech app. How do vaccines work?",
                         []) is None
    assert not_the_piece("Thanks all.", "Write a short speech for my sister's wedding.", []) is not None


def test_a_word_that_names_something_else_is_no_piece_to_write():
    for task in ["Write a product description for a speech therapy app.",
                 "Write a pitch for a song-writing course.", "Give me a review of the story app I use."]:
        assert not_the_piece(POINTS, task, []) is None


def test_a_list_cut_to_the_count_asked_keeps_its_substance():
    eight = "\n".join(f"- Point {n}: walk a little further every day, and rest well at night." for n in range(8))
    three = "\n".join(eight.splitlines()[:3])
    asked = [{"kind": "bullets", "min": 3, "max": 3}]
    assert substance_lost(eight, three, "List ways to keep fit in exactly 3 bullets.", asked) is None
    # but three bare words are not those points
    assert substance_lost(eight, "- a\n- b\n- c", "List ways to keep fit in exactly 3 bullets.", asked) is not None


SONG_TASK = "My niece wants a song about her hamster Biscuit escaping at night. Keep it silly, please."
SONG = ("Biscuit left his cage at midnight,\nsqueezed right through the bars,\nraced across the kitchen floor\n"
        "and climbed up to the jars.\n\nOh Biscuit, Biscuit, where'd you go?\nThe cereal box is shaking so!\n"
        "We found him in the morning light,\nasleep on flakes of gold,\nthe bravest hamster in the house\n"
        "and twice as fat, we're told.")
SONG_AS_PROSE = ("Biscuit the hamster escaped from his cage one night and ran across the kitchen floor, where he "
                 "climbed up the shelves to reach the cereal box. In the morning the family found him asleep inside "
                 "it, full of cornflakes and very pleased with himself, and everyone laughed about it all day.")


def test_prose_where_the_task_names_a_song_or_poem_is_not_the_piece():
    assert "written as prose, not the song" in not_the_piece(SONG_AS_PROSE, SONG_TASK, [])
    assert not_the_piece(SONG, SONG_TASK, []) is None
    # verse beside the explanation the task asks for is still the piece
    explained = SONG + "\n\nThe chorus repeats his name so that a small child can sing along with it from the first time."
    assert not_the_piece(explained, SONG_TASK + " Explain the chorus afterwards.", []) is None
    # the same prose is fine where the task names no verse, or where a poem is only a style or asked as JSON
    assert not_the_piece(SONG_AS_PROSE, "Tell my niece a silly story about her hamster Biscuit escaping.", []) is None
    assert not_the_piece(SONG_AS_PROSE, "Tell the tale of Biscuit's escape in a rap style.", []) is None
    assert not_the_piece('{"song": "' + SONG_AS_PROSE + '"}', SONG_TASK, [{"kind": "json"}]) is None
    # a poem or song the task asks about, or only names, is no verse to write
    for task in ("Summarize the poem my niece wrote about Biscuit, in a few sentences.", "What is a limerick?",
                 "Is a limerick harder to write than a sonnet?", "Recommend a song for my niece's party and say why.",
                 "Write a blog post about the history of rap in the 1990s."):
        assert not_the_piece(SONG_AS_PROSE, task, []) is None, task
    # verse in a form the task allows: JSON it names (read or not), a program, a list it asks for
    assert not_the_piece('{"lines": "Biscuit left his cage\\nat midnight"}', "Write a haiku about Biscuit as JSON.",
                         []) is None
    program = "```python\nimport random\nprint(random.choice(LINES))\n```"
    assert not_the_piece(program, "Write a Python program that makes a random haiku for me.", []) is None
    tips = "\n".join(f"{n}. " + SONG_AS_PROSE[:120] for n in range(1, 4))
    assert not_the_piece(tips, "Give me three tips to write a song that kids remember.", []) is None


def test_a_rewrite_that_turns_the_song_into_prose_is_not_kept_over_the_song():
    from hierplan.nodes.revise import with_revision, first_check
    check, kept = first_check(SONG_TASK + " Put a title in << >> on it.", SONG, [{"kind": "title"}])
    assert kept == SONG and not check["ok"]
    check, kept = with_revision(check, kept, "<<Biscuit>>\n" + SONG_AS_PROSE, SONG_TASK + " Put a title in << >> on it.")
    assert kept == SONG and check["revisions"][-1]["rejected"].startswith("the rewrite is no longer the piece: "
                                                                          "it is written as prose")


def test_a_reply_that_is_only_the_parts_asked_beside_the_answer_is_no_answer():
    task = "Which bus gets me from the station to the museum? Put a note at the very end starting with P.S."
    only = "P.S. Remember to check the timetable before you go, since buses change in winter."
    why = not_the_piece(only, task, [{"kind": "postscript", "marker": "P.S."}])
    assert why is not None and why.startswith("it is only a postscript (P.S.)")
    answered = "Take bus 12 from stop C outside the station; it stops at the museum's door.\n\n" + only
    assert not_the_piece(answered, task, [{"kind": "postscript", "marker": "P.S."}]) is None
    # the same P.S. where the task asks for none is the answer's own words
    assert not_the_piece(only, "Which bus gets me from the station to the museum?", []) is None
    # the request said back as asked, and nothing more
    ask = "Say my question back first, word for word: which bus goes to the museum? Then answer it."
    repeated = [{"kind": "repeat_request", "text": "which bus goes to the museum?"}]
    assert not_the_piece("which bus goes to the museum?", ask, repeated).startswith("it is only the words")
    assert not_the_piece("which bus goes to the museum?\nBus 12.", ask, repeated) is None  # short, and the answer


def test_the_parts_asked_beside_the_piece_do_not_count_toward_its_length():
    task = "Write an ad for my bike repair shop, Spoke & Chain. Add a P.S. at the end."
    tagline = "Spoke & Chain: we fix it fast."
    why = not_the_piece(tagline + "\n\nP.S. " + "Bring your bike in any day of the week and we will look at it. " * 3,
                        task, [{"kind": "postscript", "marker": "P.S."}])
    assert why is not None and "6 words besides a postscript (P.S.)" in why and "the ad" in why
    assert not_the_piece(tagline, "Write an ad hoc reply to my landlord saying the bike stays in the hall.", []) is None


def test_a_list_of_the_tasks_own_sentences_is_the_task_copied_back():
    task = ("Make up 30 names for a cat, all different. Put your 3 favourites in italics, like so:\n"
            "1. *FAVOURITE 1*\n2. *FAVOURITE 2*")
    copied = ("1. **Make up 30 names for a cat, all different.**\n2. **Put your 3 favourites in italics, like so:**\n"
              "3. *FAVOURITE 1*\n4. *FAVOURITE 2*")
    assert echo_share(copied, task) > 0.5 and not_the_piece(copied, task, []) == NOT_AN_ANSWER
    names = "\n".join(f"{n}. {name}" for n, name in enumerate(["Miso", "Pepper", "Juniper", "Biscuit", "Olive"], 1))
    assert not_the_piece(names, task, []) is None


def test_a_piece_given_inside_a_code_fence_counts_its_words():
    task = "I need a grant proposal for a community garden, as JSON in a fenced block."
    fenced = "```json\n" + json.dumps({"title": "Seeds", "summary": POST}) + "\n```"
    assert not_the_piece(fenced, task, [{"kind": "json"}]) is None
    script = "```python\n" + "\n".join(f"print('line {n} of the greeting for the new neighbours')" for n in range(8)) + "\n```"
    assert not_the_piece(script, "Write a script that greets my new neighbours.", []) is None
    # a fence around the task's own words is still the task copied back
    assert not_the_piece("```json\n{\"reply\": \"" + task + "\"}\n```", task, [{"kind": "json"}]) == NOT_AN_ANSWER


def test_a_reply_of_a_few_words_the_task_offers_is_no_copy_of_the_task():
    task = "Is tea better than coffee? Reply with one of: My answer is yes. My answer is no. My answer is maybe."
    assert not_the_piece("My answer is maybe.", task, []) is None
    assert not_the_piece(task, task, []) == NOT_AN_ANSWER


def test_a_reply_that_is_only_its_title_is_no_answer_unless_a_title_is_what_the_task_asks_for():
    title = [{"kind": "title"}]
    riddle = "Could you make up a riddle about tide pools? Put a title on it like <<title>>."
    assert not_the_piece("<<The Pool at Low Tide>>", riddle, title).startswith("it is only a title")
    answer = "<<The Pool at Low Tide>>\nI hold the sea when the sea has gone; crabs keep house in me. What am I?"
    assert not_the_piece(answer, riddle, title) is None
    assert not_the_piece("<<Low Tide Notes>>", "Suggest a title for my blog about tide pools, in <<these>>.",
                         title) is None


def test_a_rewrite_in_a_script_without_spaces_is_measured_by_its_characters():
    task = ("Write a short note to my neighbour apologising for the noise. She reads only Japanese, so write it in "
            "Japanese.")
    english = ("Dear Mrs. Tanaka, I am so sorry about the noise from my party on Saturday night. It went on much "
               "later than I planned, and it will not happen again. Please enjoy these sweets.")
    japanese = ("田中様、土曜日の夜はパーティーの音がうるさくて、"
                "本当に申し訳ありませんでした。思っていたより遅くまで"
                "続いてしまいました。二度とこのようなことがないように"
                "気をつけます。ささやかですが、お菓子をどうぞ。")
    assert substance_lost(english, japanese, task, [{"kind": "language", "language": "Japanese", "code": "ja"}]) is None
    assert substance_lost(english, "田中様、すみません。", task, []) is not None  # a line is still no note


def test_a_refusal_is_no_answer_and_a_rewrite_with_the_tasks_facts_replaces_it():
    task = ("Write my wedding vows. We met when she rear-ended my car in a Costco parking lot, and we have a spoiled "
            "beagle named Pickles. About a minute and a half, please.")
    refusal = "I'm sorry, but I can't assist with that request."
    assert not_the_piece(refusal, task, []) is not None
    vows = ("From the day you rear-ended my car in a Costco parking lot, you have kept crashing into my heart. I "
            "promise to laugh at your jokes before the punchline, to walk Pickles when it rains, and to drive through "
            "any snowstorm for you, as you once did for me. I choose you today and every day after.")
    assert substance_lost(refusal, vows, task, []) is None
    # a sentence that says what the answer cannot do is part of an answer that goes on
    assert not_the_piece("I can't write the whole speech for you, but here is an opening you can build on: "
                         "friends, family, and the one person who never lets me win at cards.", task, []) is None


@pytest.mark.parametrize("reply", [
    "Unfortunately, we cannot provide refunds after 30 days. Best regards, Anna",  # the reply's own content
    "I won't do it again, I promise. Love, Sam",
    "I can't write poems like Keats, yet I try: the roses bloom and the river runs.",
])
def test_a_reply_that_says_what_someone_cannot_do_is_no_refusal(reply):
    assert not_the_piece(reply, "Write a short note.", []) is None


def test_a_refusal_with_an_offer_of_other_help_is_still_a_refusal():
    reply = "I'm sorry, but I can't assist with that request. Is there anything else I can help you with?"
    assert not_the_piece(reply, "Write my wedding vows.", []) is not None
