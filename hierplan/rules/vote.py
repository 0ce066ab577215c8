"""The number most programs agree on (self-consistency over program-aided answers: Wang et al., 2023; Gao
et al., 2023). Only printed numbers are read: nothing here knows any task or data set.

The programs are, in order: the plan's last Python step, then the whole-task programs the checker drew. While no
number has a majority, the graph draws one more whole-task program (a tie-break), at most MAX_TIE_BREAKS; a split
keeps the first whole-task program's number (on the dev set a whole-task program was right more often than a
plan's chain of steps).
"""

from __future__ import annotations

from collections import Counter

from hierplan.rules.numbers import last_number, number_key


def voted(ok: bool, stdout: str | None) -> str | None:
    """The number a program votes for: its last printed number, normalised; None when it failed."""
    return number_key(last_number(stdout)) if ok else None


def has_majority(keys: list[str | None]) -> bool:
    """Some number has at least two votes and more than any other."""
    top = Counter(k for k in keys if k is not None).most_common(2)
    return bool(top) and top[0][1] >= 2 and (len(top) == 1 or top[0][1] > top[1][1])


def tally(keys: list[str | None]) -> tuple[int, int]:
    """(index of the program whose number is kept, how many voted for it). Most votes wins; on a tie, the first
    whole-task program's number (keys[1:]), or the plan's (keys[0]) when every whole-task program failed.
    Raises ValueError when no program printed a number."""
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        raise ValueError("no program printed a number to vote on")
    preferred = next((k for k in keys[1:] if k is not None), keys[0])
    best, votes = max(counts.items(), key=lambda kv: (kv[1], kv[0] == preferred))
    return keys.index(best), votes
