"""Scoring by final number: the last number in the agent's answer against the expected one."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# A number as written in prose: optional sign (not when glued to a word or digit, so "3-4" is not -4),
# optional currency sign, digits with optional thousands commas, optional decimals.
# "1,234" is one number; "1,2,3" is three. Unicode minus is accepted.
NUMBER_RE = re.compile(
    r"(?<![\w.])[-\u2212]?[$\u20ac\u00a3]?\s?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?"
    r"|(?<![\w.])[-\u2212]?[$\u20ac\u00a3]?\s?\.\d+"
    r"|(?<=[$\u20ac\u00a3])(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?"
)
# The sign may also come after the currency sign: "$-5".
_CURRENCY_SIGN_RE = re.compile(r"[$\u20ac\u00a3]\s?[-\u2212]\s?(?=[\d.])")

TOLERANCE = Decimal("1e-6")


def parse_number(text: str | None) -> Decimal | None:
    """'1,234' -> 1234, '$5' -> 5, '-3.50' -> -3.5, ' 7 ' -> 7; None when it is not one number."""
    if text is None:
        return None
    cleaned = text.strip().replace("\u2212", "-")
    cleaned = re.sub(r"[$\u20ac\u00a3,\s]", "", cleaned)
    if cleaned.endswith("%"):
        cleaned = cleaned[:-1]
    if not cleaned or not re.fullmatch(r"-?(?:\d+(?:\.\d*)?|\.\d+)", cleaned):
        return None
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


def last_number(text: str | None) -> str | None:
    """The last number written in ``text``, as written (e.g. '$1,234.50'); None if there is none."""
    if not text:
        return None
    text = _CURRENCY_SIGN_RE.sub(lambda m: "-" + m.group(0)[0], text)
    matches = NUMBER_RE.findall(text)
    return matches[-1].strip() if matches else None


def numbers_equal(a: str | Decimal | None, b: str | Decimal | None) -> bool:
    """Numeric equality of two written numbers: '5.0' == '5', '1,234' == '1234', '$5' == '5'."""
    x = a if isinstance(a, Decimal) else parse_number(a)
    y = b if isinstance(b, Decimal) else parse_number(b)
    if x is None or y is None:
        return False
    return abs(x - y) <= TOLERANCE


def score(final: str | None, expected: str | None) -> tuple[str | None, bool | None]:
    """(predicted number, correct): correct is None when there is no expected answer."""
    predicted = last_number(final)
    if expected is None:
        return predicted, None
    return predicted, numbers_equal(predicted, expected)
