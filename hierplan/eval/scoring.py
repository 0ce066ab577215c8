"""Scoring by final number: the last number in the agent's answer against the expected one."""

from __future__ import annotations

from hierplan.rules.numbers import NUMBER_RE, last_number, numbers_equal, parse_number

__all__ = ["NUMBER_RE", "last_number", "numbers_equal", "parse_number", "score"]


def score(final: str | None, expected: str | None) -> tuple[str | None, bool | None]:
    """(predicted number, correct): correct is None when there is no expected answer."""
    predicted = last_number(final)
    if expected is None:
        return predicted, None
    return predicted, numbers_equal(predicted, expected)
