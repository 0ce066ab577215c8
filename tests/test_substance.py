"""The answer stays the answer: a rewrite that is no longer the piece is never kept (rules.substance)."""

from hierplan.rules.substance import echo_share, substance_lost

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
