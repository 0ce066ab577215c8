"""The language a task asks its answer in (rules.language): read from the task's words, checked by langdetect."""

import pytest

from hierplan.rules.checks import problem
from hierplan.rules.instructions import read_instructions
from hierplan.rules.language import read_language

GERMAN = ("Sehr geehrte Damen und Herren, wir laden Sie herzlich zu unserem Sommerfest im Garten ein. Es gibt "
          "Kuchen, Musik und viele Spiele für die Kinder. Bitte melden Sie sich bis Freitag an, damit wir genug Stühle haben.")
ENGLISH = ("Dear neighbours, we warmly invite you to our summer party in the garden. There will be cake, music and "
           "plenty of games for the children. Please let us know by Friday so that we have enough chairs for all.")


@pytest.mark.parametrize("task, language", [
    ("Write the invitation in German only, no other language.", "German"),
    ("A short poem about rain, in Italian and nothing else.", "Italian"),
    ("Respond in French, please.", "French"),
    ("Translate this note into Spanish: we are closed on Monday.", "Spanish"),
    ("Your whole reply should be in the Hindi language.", "Hindi"),
    ("Describe a market using only the Swahili language.", "Swahili"),
    ("Write me a short story in Portuguese.", "Portuguese"),
    ("Tell me a joke about ferries. Swahili only, please, no other language.", "Swahili"),
    ("Write a get-well note for my neighbour. Just the Portuguese please, no English version.", "Portuguese"),
])
def test_the_language_asked_for_is_read(task, language):
    assert read_language(task)["language"] == language


@pytest.mark.parametrize("task", [
    "Write about the best dishes in Spanish cuisine.",
    "Summarize the key events in German history.",
    "How do you say thank you in Japanese?",
    "Answer in a language other than English.",
    "Explain how tides work.",
    "Explain how to order food in Japanese.",
    "Give me a list of common greetings in French.",
    "I am fluent in German. Write me a cover letter for a bank job.",
    "Write a resume for someone with a degree in Chinese.",
    "Write about a character who only speaks in Spanish.",
    "Write a poem with the title in French.",
    "My aunt speaks just Spanish and a bit of French. Write me a story about her garden.",
    "Write the menu in English, with just the French names of the cheeses in brackets.",
])
def test_no_language_is_read_where_the_answer_is_asked_for_in_none(task):
    assert read_language(task) is None


def test_an_answer_in_another_language_is_a_problem_and_a_short_one_is_not_judged():
    german = {"kind": "language", "language": "German", "code": "de"}
    assert german in read_instructions("Write the invitation in German only.")
    assert problem(german, GERMAN) is None
    assert problem(german, ENGLISH) == "it is not written in German: write all of it in German, no other language"
    assert problem(german, "Hello there, friends.") is None  # too short to tell
    capitals = "\n".join(f"{n}. {city}" for n, city in enumerate(
        "Paris London Berlin Madrid Rome Vienna Prague Warsaw Lisbon Dublin Oslo Bern Athens Sofia Riga Kyiv Minsk "
        "Tallinn Vilnius Bratislava".split(), 1))
    assert problem({"kind": "language", "language": "English", "code": "en"}, capitals) is None  # names say little
