"""Written numbers: the last one in a text, its value, and whether two are the same number."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from hierplan.config import NUMBER_TOLERANCE, UNIT_FACTORS

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
    return abs(x - y) <= NUMBER_TOLERANCE


def restates_in_other_unit(answer: str | None, computed: str) -> bool:
    """Whether ``answer`` is ``computed`` times or divided by one of UNIT_FACTORS (cents and dollars, grams and
    kilograms, minutes and hours: the same quantity in another unit)."""
    a, c = parse_number(answer) if answer else None, parse_number(computed)
    if a is None or c is None or a == 0 or c == 0:
        return False
    return any(a == c * f or c == a * f for f in UNIT_FACTORS)


def number_key(text: str | None) -> str | None:
    """A written number normalised for counting votes ('1,234.0' and '$1234' -> '1234'); None for no number."""
    value = parse_number(text) if text is not None else None
    return None if value is None else format(value.normalize(), "f")
