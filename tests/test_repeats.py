"""What an answer says again instead of writing on (rules.repeats), and how a program takes it out."""

from hierplan.rules.checks import problem, repair_by_program
from hierplan.rules.instructions import always
from hierplan.rules.repeats import drop_repeats, repeats_problem, unlooped_words
from hierplan.rules.substance import said_words, substance_lost
from hierplan.rules.text import words

STUCK_NAMES = ("Yes, Lin is a common family name. Names like it include Lin Wei, Lin Tao, "
               + "Lin Bo, " * 40 + "Lin")
STUCK_SPEECH = ("Friends, the vote is ours to cast. Every street has a voice in this. "
                + "The people who show up are the people who decide. It is not about money but about hope. " * 6)


def test_a_run_of_the_same_words_is_cut_to_its_first_round():
    kept = drop_repeats(STUCK_NAMES)
    assert kept == "Yes, Lin is a common family name. Names like it include Lin Wei, Lin Tao, Lin Bo, Lin"


def test_a_list_stuck_on_one_item_keeps_the_item_once_and_what_follows():
    stuck = "Similar names:\n" + "*Chen*\n" * 30 + "\nThat is all."
    assert drop_repeats(stuck) == "Similar names:\n*Chen*\n\nThat is all."


def test_a_list_said_again_whole_is_cut_to_its_first_round():
    names = "".join(f"Lin {given} (short)\n" for given in ("Wei", "Tao", "Bo", "Min", "Hui", "Jun", "Yan", "Ling"))
    assert drop_repeats("Names like Lin:\n" + names * 4) == "Names like Lin:\n" + names


def test_sentences_said_again_in_one_paragraph_are_dropped_and_the_rest_kept_in_order():
    kept = drop_repeats(STUCK_SPEECH)
    assert kept.count("decide") == 1 and kept.count("hope") == 1
    assert kept.startswith("Friends, the vote is ours to cast.") and kept.endswith("about hope.")


def test_a_loop_keeps_the_stop_its_last_round_ends_with():
    assert drop_repeats("Other names: " + "Lin Bo, " * 8 + "Lin Bo. He left.") == "Other names: Lin Bo. He left."
    objects = '[' + ', '.join(['{"id": 1, "ok": true}'] * 4) + ']'
    assert drop_repeats(objects) == '[{"id": 1, "ok": true}]'


def test_numbered_steps_and_abbreviations_are_not_cut_as_sentences():
    steps = ("1. Open the app.\n2. Tap on Settings in the top menu.\n3. Scroll down.\n"
             "4. Tap on Settings in the top menu.")
    assert drop_repeats(steps).splitlines()[-1] == "4. Tap on Settings in the top menu."
    visit = "Dr. Smith went to Washington D.C. today. She met the staff there."
    # the sentence said again goes whole, "Dr." and "D.C." with it
    assert drop_repeats(visit + "\n" + visit.replace("She met", "Then she met")) == (
        visit + "\nThen she met the staff there.")


def test_short_repeats_numbers_code_and_tables_are_left_alone():
    for text in ("Let it snow! Let it snow! Let it snow!",
                 "Row, row, row your boat, gently down the stream.",
                 "Ha ha ha, she said.",
                 "The series: 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2.",
                 "```python\n" + "print('loop')\n" * 12 + "```",
                 "| a | a |\n|---|---|\n" + "| yes | yes |\n" * 10):
        assert drop_repeats(text) == text


def test_an_answer_going_round_in_circles_is_a_problem_even_when_no_line_repeats():
    assert repeats_problem(STUCK_SPEECH.replace(". ", ".\n", 1)) is not None
    circles = " ".join(f"the sky is blue and the sea is wide number {n}" for n in range(12))
    found = repeats_problem(circles)
    assert found.startswith("it goes round in circles, saying 'the sky is blue'") and "12 times" in found
    assert problem({"kind": "no_repeats"}, circles) == found
    essay = ("Tides rise and fall twice a day because the moon pulls on the oceans. The sun adds a smaller pull, "
             "so spring tides come when both line up. Coasts with wide shelves see the largest ranges, and narrow "
             "seas such as the Mediterranean barely move. Sailors once read tide tables printed each year.")
    assert repeats_problem(essay) is None


def test_a_loops_words_are_counted_once():
    assert unlooped_words(words("one two three four five")) == 5
    assert unlooped_words(words("a b c d " * 20)) < 10
    assert said_words(STUCK_NAMES, []) < 25


def test_a_short_rewrite_of_a_looping_answer_is_not_a_lost_piece():
    task = "Is Lin a family name, and what names are like it?"
    rewrite = "Yes, Lin is a family name.\n******\nNames like it: Lin Wei, Lin Tao and Lin Bo."
    assert len(words(STUCK_NAMES)) > 80
    assert substance_lost(STUCK_NAMES, rewrite, task, [{"kind": "no_repeats"}]) is None


def test_the_program_repair_drops_loops_before_any_check():
    assert repair_by_program([{"kind": "no_repeats"}], STUCK_NAMES).endswith("Lin Bo, Lin")


CHORUS = "Chorus:\nHeave away, the lantern's lit,\nWe sail the frost till morning's near,\nSing it loud and don't you quit.\n"
SHANTY = ("Verse 1:\nThe cook burned all the biscuits black,\nThe captain swore and turned us back.\n\n" + CHORUS
          + "\nVerse 2:\nThe ice came thick upon the rail,\nWe hauled the ropes through sleet and hail.\n\n" + CHORUS)


def test_a_songs_chorus_said_again_is_its_refrain_not_a_repeat():
    assert always("Write me a sea shanty about a ship's cook, a few verses and a chorus.") == (
        {"kind": "no_repeats", "refrain": True},)
    assert always("Write an essay about ships.") == ({"kind": "no_repeats"},)
    refrain = {"kind": "no_repeats", "refrain": True}
    assert problem(refrain, SHANTY) is None
    assert repair_by_program([refrain], SHANTY) == SHANTY
    # in prose the same lines said twice are a repeat
    assert problem({"kind": "no_repeats"}, SHANTY) is not None
    assert drop_repeats(SHANTY).count("Heave away") == 1


def test_a_song_that_goes_round_in_circles_is_still_a_repeat():
    stuck = "Verse 1:\nWe sail away.\n\n" + CHORUS * 12
    assert repeats_problem(stuck, refrain=True) is not None
