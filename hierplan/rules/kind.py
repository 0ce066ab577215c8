"""A task's kind: numeric (it asks for a quantity) or writing (anything else). Decided once per run, before
planning; every branch of the graph reads the recorded kind, and a caller may set it instead.

A task is numeric when it asks for a quantity ("how many", "how much", "what is the total ...", "calculate ...")
and holds at least one number (in digits or in words: rules.numbers), or comes with the user's data (files, or
registered tools to call), where the numbers are: "What is the total amount in orders.csv?" holds none. "Write a
3-day itinerary" or "a 5-item checklist" hold numbers but ask for no quantity, so they are writing tasks. With the
user's files, a question or a request to analyse them ("Check if the fares are skewed", "Identify the outliers")
is a question about the data, numeric too, unless it asks for a piece of writing ("Summarise notes.txt"). The
numbers that size the answer ("3 paragraphs", "at least 9 sentences": its form instructions, read by
rules.instructions) are not the task's values: "What's the difference between weather and climate? 3 paragraphs,
at least 9 sentences" asks for no quantity to compute. Only the task's words (and whether data came with it) are
read, by the English patterns below.
"""

from __future__ import annotations

import re
from typing import Literal

from hierplan.rules.instructions import read_instructions
from hierplan.rules.numbers import NUMBER_WORDS_PATTERN

TaskKind = Literal["numeric", "writing"]
NUMERIC: TaskKind = "numeric"
WRITING: TaskKind = "writing"
KINDS: tuple[TaskKind, ...] = (NUMERIC, WRITING)

# A number in words (rules.numbers), or a word for a multiple or a part of one.
_NUMBER_WORDS = (rf"{NUMBER_WORDS_PATTERN}|half|halves|twice|double|triple|quarters?|dozens?|hundreds?|thousands?|"
                 r"millions?|billions?")
NUMBER_RE = re.compile(rf"\d|\b(?:{_NUMBER_WORDS})\b", re.IGNORECASE)
# Each value the task gives ("3.50", "1,200" and "twelve" once each).
VALUE_RE = re.compile(rf"\d+(?:[.,]\d+)*|\b(?:{_NUMBER_WORDS})\b", re.IGNORECASE)
# "one" as a pronoun gives no value: "each one", "this one", "the one", "which one".
_PRONOUN_ONE_RE = re.compile(r"\b(?:each|every|which|another|little|other)\s+one\b|\b(?:this|that|the|any|no|some)\s+"
                             r"one\b(?=\s+(?:on|in|that|who|which|with|for|at|of|is|was)\b|\s*[,.?!;:)]|\s*$)",
                             re.IGNORECASE)

_QUANTITY_NOUNS = (r"total|sum|difference|product|quotient|average|mean|median|cost|costs|price|value|number|"
                   r"amount|percentage|percent|ratio|rate|area|perimeter|volume|speed|distance|profit|loss|"
                   r"age|weight|height|length|width|balance|score|change|count|remainder|fraction|budget|temperature|"
                   r"largest|smallest|highest|lowest|maximum|minimum|time|duration")
# "How many ...?", "What is the total ...?", "Calculate ...": the task wants a quantity back.
QUANTITY_QUESTION_RE = re.compile(
    r"\bhow\s+(?:many|much|long|far|old|fast|often|tall|heavy|big|large)\b"
    r"|\bwhat\s+(?:percent|fraction|portion|share)\b"
    r"|\bwhat\s+(?:does|do|did|will)\s+(?:\S+\s+){1,8}?cost\b"  # "What does shipping all of them cost?"
    r"|\b(?:calculate|compute|work\s+out)\b"
    # "What is fifteen more than a quarter of 48?", "What's 20% of 80?": an expression asked for
    rf"|\bwhat(?:'s|\s+is|\s+are)\s+(?:(?:\d[\d,.]*|{_NUMBER_WORDS})\s+(?:more|less|fewer|times|plus|minus|"
    r"divided|multiplied|squared|cubed)\b|(?:a\s+|one\s+)?(?:half|third|quarter|fifth|tenth|\d[\d,.]*\s*%|"
    r"\d[\d,.]*\s+percent)\s+of\b)"
    rf"|\b(?:what(?:'s|\s+is|\s+was|\s+are|\s+were|\s+will\s+be)|find|determine)\s+(?:the\s+|her\s+|his\s+"
    rf"|their\s+|its\s+|my\s+|our\s+)?(?:\w+\s+){{0,2}}(?:{_QUANTITY_NOUNS})(?:\b|_)",  # amount_eur: a column
    re.IGNORECASE)


# What combines several values ...
AGGREGATE_RE = re.compile(r"\b(?:total|sum|difference|product|quotient|average|mean|median|ratio)\b", re.IGNORECASE)
# ... asked about people of an age ("the mean height of a 10 year old"), where that age is the task's only number,
# it asks for a fact about such people: the one value says who, and there is nothing to combine. ("The sum of the
# first 100 integers" and "the total area of a cube with side 4 cm" give one value too, and are computed.)
AGE_RE = re.compile(r"\b\d{1,3}[\s-]+(?:years?|months?|weeks?)[\s-]+old\b", re.IGNORECASE)


# With the user's files: a question, or a request to analyse what they hold.
DATA_REQUEST_RE = re.compile(
    r"\?|\b(?:calculate|compute|count|find|determine|identify|check|test|detect|compare|predict|estimate|measure|"
    r"perform|apply|analy[sz]e|rank|group|filter|sort|correlat\w*|aggregate|tabulate|plot|chart)\b", re.IGNORECASE)
# ... unless it asks for a piece of writing about them.
WRITING_REQUEST_RE = re.compile(
    r"\b(?:write|draft|compose|summar(?:y|ies|i[sz]e)|essay|letter|e-?mail|blog|story|poem|memo|speech)\b",
    re.IGNORECASE)


def form_values(task: str) -> int:
    """How many of the task's numbers size its answer: the distinct numbers each of its form instructions holds
    (rules.instructions: "between 3 and 5 sentences" two, "exactly 3 paragraphs" one)."""
    return sum(len({v for v in i.values() if isinstance(v, int) and not isinstance(v, bool)})
               for i in read_instructions(task))


def task_kind(task: str, with_data: bool = False, with_files: bool = False) -> TaskKind:
    """numeric when the task asks for a quantity and holds at least one number besides those that size the answer
    (form_values), other than an age it asks an average or a total about (AGGREGATE_RE, AGE_RE), or comes
    ``with_data`` (the user's files or tools), or comes ``with_files`` and asks a question about them or to analyse
    them (and for no piece of writing); else writing."""
    if with_files and DATA_REQUEST_RE.search(task) and not WRITING_REQUEST_RE.search(task):
        return NUMERIC
    quantity = QUANTITY_QUESTION_RE.search(task)
    if quantity is None:
        return WRITING
    if with_data or with_files:
        return NUMERIC
    values = len(VALUE_RE.findall(task)) - len(_PRONOUN_ONE_RE.findall(task)) - form_values(task)
    if AGGREGATE_RE.search(quantity.group(0)) and values == 1 and AGE_RE.search(task):
        return WRITING
    return NUMERIC if values > 0 else WRITING
