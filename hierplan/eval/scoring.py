"""Scoring: by final number (the last number in the agent's answer against the expected one); for a task whose
answer is a name (``answer_text``), by that text appearing in the answer; for a task with named answers
(``answers``: the task's format asks for ``@name[value]`` items), each name's value as InfiAgent-DABench's
closed-form scorer compares them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hierplan.rules.numbers import NUMBER_RE, last_number, numbers_equal, parse_number

__all__ = ["NUMBER_RE", "find_text", "last_number", "named_values", "numbers_equal", "parse_number", "score",
           "score_named", "score_text"]

NAMED_RE = re.compile(r"@(\w+)\[(.*?)\]")
"""A named answer item, ``@name[value]``, as the closed-form scorer reads it."""
FLOAT_TOLERANCE = 1e-6


def score(final: str | None, expected: str | None) -> tuple[str | None, bool | None]:
    """(predicted number, correct): correct is None when there is no expected answer."""
    predicted = last_number(final)
    if expected is None:
        return predicted, None
    return predicted, numbers_equal(predicted, expected)


def _text_re(expected: str) -> re.Pattern[str]:
    """``expected`` as whole words, case-insensitive; inner spaces match any run of spaces (a line break too)."""
    body = r"\s+".join(re.escape(part) for part in expected.split())
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.I)


def find_text(final: str | None, expected: str) -> str | None:
    """The first place ``expected`` appears in ``final`` as whole words (case-insensitive), as written there;
    None when it does not ("Brennick Hotels" is in "brennick  hotels." but "Ostrel" is not in "Ostrelia")."""
    if not final or not expected.strip():
        return None
    match = _text_re(expected).search(final)
    return match.group(0) if match else None


def score_text(final: str | None, expected: str) -> tuple[str | None, bool]:
    """(the expected text as the answer wrote it, or None; correct)."""
    found = find_text(final, expected)
    return found, found is not None


def named_values(final: str | None) -> dict[str, str]:
    """Every ``@name[value]`` item of an answer, {name: value}; a name given twice keeps its last value."""
    return {name: value for name, value in NAMED_RE.findall(final or "")}


def _same_value(given: str, expected: str) -> bool:
    if given.strip() == expected.strip():
        return True
    try:
        return abs(float(given) - float(expected)) <= FLOAT_TOLERANCE
    except ValueError:
        return False


def score_named(final: str | None, answers: Sequence[tuple[str, str]]) -> tuple[dict[str, str], bool, int]:
    """(the named values the answer gives, all right, how many of the expected names are right): a name is right
    when its value equals the expected string or both read as floats within FLOAT_TOLERANCE."""
    given = named_values(final)
    right = sum(1 for name, value in answers if name in given and _same_value(given[name], value))
    return given, right == len(answers), right
