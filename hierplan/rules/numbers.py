"""Written numbers: the last one in a text, its value, and whether two are the same number; and whole numbers
written in words ("twenty-five", "a hundred"), read the same way by every rule that reads a count."""

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


# Numbers written in words: "seven", "nineteen", "forty", "twenty-five", "twenty five", "a hundred", "three hundred
# and twelve", "a dozen", "two thousand". One reader for every rule that reads a count or a quantity in words.
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORD_VALUES: dict[str, int] = {**{w: i for i, w in enumerate(_UNITS)}, **{w: 20 + 10 * i for i, w in enumerate(_TENS)}}
_SCALES = {"dozen": 12, "hundred": 100, "thousand": 1000}


def _alternatives(words: list[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))  # longest first: "fourteen" before "four"


_UNIT = _alternatives(_UNITS)
_DIGIT_WORD = _alternatives(_UNITS[1:10])
_BELOW_100 = rf"(?:(?:{_alternatives(_TENS)})(?:[\s-]+(?:{_DIGIT_WORD}))?|{_UNIT})"
_BELOW_1000 = rf"(?:(?:a|one|{_DIGIT_WORD})\s+hundred(?:\s+(?:and\s+)?{_BELOW_100})?|{_BELOW_100})"
NUMBER_WORDS_PATTERN = (rf"(?:(?:a|one|{_BELOW_100})\s+(?:thousand|dozen)(?:\s+(?:and\s+)?{_BELOW_1000})?"
                        rf"|{_BELOW_1000})")
"""A regex (no groups, no flags) for a whole number written in words, longest reading first; use it with
re.IGNORECASE and word boundaries around it."""
RANGE_TO = r"(?:\s*(?:to|\u2013)\s*|(?<=\d)\s*-\s*(?=\d))"
"""The word or dash between the ends of a range ("4 to 6", "4-6"); a hyphen only between digits, so that
"twenty-five" is one number, not 20 to 5."""
NUMBER_WORDS_RE = re.compile(rf"\b{NUMBER_WORDS_PATTERN}\b", re.IGNORECASE)


def word_number(text: str | None) -> int | None:
    """The value of a whole number written in words or digits ('twenty-five' -> 25, 'a hundred' -> 100, 'three
    hundred and twelve' -> 312, 'a dozen' -> 12, '7' -> 7); None when ``text`` is not one such number."""
    if text is None:
        return None
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if not re.fullmatch(NUMBER_WORDS_PATTERN, text, re.IGNORECASE):
        return None
    total, current = 0, 0
    for token in re.split(r"[\s-]+", text):
        if token in ("a", "and"):
            current = current or (1 if token == "a" else 0)
        elif token in WORD_VALUES:
            current += WORD_VALUES[token]
        elif token == "thousand":
            total, current = total + (current or 1) * 1000, 0
        else:  # hundred, dozen
            current = (current or 1) * _SCALES[token]
    return total + current
