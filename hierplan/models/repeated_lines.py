"""Ending a row that has fallen into a loop of free text.

A small model that starts repeating lines rarely stops before its token budget: in an idle evaluation of the
20 non-numeric tasks (docs/eval.md), 8 final answers repeated one line 8 to 37 times and ran to the 600-token
budget. A row given ``stop_repeated_lines=N`` ends, with finish reason "repetition", once a line has been
written for the Nth time and every line since its previous time was one written before: the text has gone
round a whole cycle with nothing new. A refrain with new verses between its returns goes on.

Lines are compared without their digits ("Step 3: ..." and "Step 4: ..." are one line of a loop) and
whitespace; lines shorter than MIN_LINE_CHARS are not counted ("", "---", "- [ ]" repeat in good text). The
lines are checked only when a token holding a newline was generated, so once per line. A loop inside one line
("... list of items that can be used as a list of items that can be used as ...", which the demo wrote for
400 tokens) is caught by its tokens: the row ends once its last N runs of the same ids, each at least
MIN_PERIOD_TOKENS long, follow each other. The text written stays as it is: what was streamed is what is kept.
"""

from __future__ import annotations

import re
from typing import Any

from hierplan.models.vocab import newline_ids

MIN_LINE_CHARS = 12
# A phrase repeated back to back: shorter runs ("no, no, no", table rules) repeat in good text; longer cycles
# than MAX_PERIOD_TOKENS are left to the line check.
MIN_PERIOD_TOKENS = 8
MAX_PERIOD_TOKENS = 160
_DIGITS_AND_SPACE = re.compile(r"[\d\s]+")


def looping(lines: list[str], limit: int) -> bool:
    """Whether the last of the complete ``lines`` is the ``limit``-th time of one line, and the lines since its
    previous time were all written before it (a cycle with nothing new)."""
    keys = [key for key in (_DIGITS_AND_SPACE.sub(" ", line).strip() for line in lines) if len(key) >= MIN_LINE_CHARS]
    if not keys:
        return False
    last = keys[-1]
    times = [i for i, key in enumerate(keys) if key == last]
    if len(times) < limit:
        return False
    before = set(keys[:times[-2]])
    return all(key in before for key in keys[times[-2] + 1:-1])


def repeated_tail(ids: list[int], limit: int) -> bool:
    """Whether ``ids`` end with ``limit`` copies of one run of MIN_PERIOD_TOKENS to MAX_PERIOD_TOKENS ids,
    back to back."""
    n = len(ids)
    for period in range(MIN_PERIOD_TOKENS, min(MAX_PERIOD_TOKENS, n // limit) + 1):
        if ids[n - 1 - period] != ids[-1]:  # cheap test first: the last id one period earlier
            continue
        tail = ids[n - period:]
        if all(ids[n - (k + 1) * period:n - k * period] == tail for k in range(1, limit)):
            return True
    return False


class RepeatedLines:
    """A row's stop test: called with the ids generated so far after each token."""

    def __init__(self, tokenizer: Any, limit: int):
        self.tokenizer = tokenizer
        self.limit = limit
        self.newline_ids = newline_ids(tokenizer)

    def __call__(self, generated: list[int]) -> bool:
        if not generated:
            return False
        if repeated_tail(generated, self.limit):
            return True
        if generated[-1] not in self.newline_ids:
            return False
        text = self.tokenizer.decode(generated, skip_special_tokens=True)
        return looping(text.split("\n")[:-1], self.limit)
