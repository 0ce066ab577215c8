"""Scoring: by final number (the last number in the agent's answer against the expected one), or, for a task
whose answer is a name (``answer_text``), by that text appearing in the answer."""

from __future__ import annotations

import re

from hierplan.rules.numbers import NUMBER_RE, last_number, numbers_equal, parse_number

__all__ = ["NUMBER_RE", "find_text", "last_number", "numbers_equal", "parse_number", "score", "score_text"]


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
