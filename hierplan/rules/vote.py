"""The number most programs agree on (self-consistency over program-aided answers: Wang et al., 2023; Gao
et al., 2023). Only printed numbers are read, and of programs that agree, which one labels its values with the
names the task spells: nothing here knows any task or data set.

The programs are, in order: the plan's last Python step, then the whole-task programs the checker drew. While no
number has a majority, the graph draws one more whole-task program (a tie-break), at most MAX_TIE_BREAKS. A split
keeps the first whole-task program's number (a whole-task program was right more often than a plan's chain of
steps), except for a question about the user's files, whose plan step is itself one whole-task program, written
from the table's preview before any check: a split keeps the step's.
"""

from __future__ import annotations

import re
from collections import Counter

from hierplan.rules.numbers import NUMBER_RE, last_number, number_key

# What a data answer's programs agree on: the values they print, in order (numbers and true/false), not the
# words around them, so two programs that print the same answers with other labels agree.
_TRUTH_RE = re.compile(r"\b(?:true|false)\b", re.I)
_VALUE_RE = re.compile(NUMBER_RE.pattern + r"|\b(?:true|false)\b", re.I)


def voted(ok: bool, stdout: str | None, every_value: bool = False) -> str | None:
    """The number a program votes for: its last printed number, normalised; None when it failed. With
    ``every_value`` (an answer from the user's data, which may ask for several values): every number and
    true/false it printed, in order, else its output's words; None when it failed or printed nothing."""
    if not ok:
        return None
    if not every_value:
        return number_key(last_number(stdout))
    values = [m.group(0).lower() if _TRUTH_RE.fullmatch(m.group(0)) else (number_key(m.group(0)) or m.group(0))
              for m in _VALUE_RE.finditer(stdout or "")]
    return " ".join(values) or (" ".join((stdout or "").lower().split()) or None)


def has_majority(keys: list[str | None]) -> bool:
    """Some number has at least two votes and more than any other."""
    top = Counter(k for k in keys if k is not None).most_common(2)
    return bool(top) and top[0][1] >= 2 and (len(top) == 1 or top[0][1] > top[1][1])


def tally(keys: list[str | None], labelled: list[int] | None = None, plan_first: bool = False) -> tuple[int, int]:
    """(index of the program whose number is kept, how many voted for it). Most votes wins; on a tie, the first
    whole-task program's number (keys[1:]), or the plan's (keys[0]) when every whole-task program failed; with
    ``plan_first`` (the plan's step is itself a whole-task program), the plan's when it printed one.
    ``labelled`` (each program's count of names_spelled): of the programs that printed the kept values, the
    one that spells most of the task's names is kept, else the first. Raises ValueError when no program printed a
    number."""
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        raise ValueError("no program printed a number to vote on")
    order = keys if plan_first else [*keys[1:], keys[0]]
    preferred = next(k for k in order if k is not None)
    best, votes = max(counts.items(), key=lambda kv: (kv[1], kv[0] == preferred))
    agreeing = [i for i, k in enumerate(keys) if k == best]
    labelled = labelled or [0] * len(keys)
    return max(agreeing, key=lambda i: (labelled[i], -i)), votes


# A name the task spells for an answer, as a program would print it: one word joined by underscores
# ("mean_fare", "p_value"), not a word of the task's prose.
_NAME_RE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")


def names_spelled(task: str, stdout: str | None) -> int:
    """How many of the names the task spells for its answers (words joined by underscores) a program's output
    prints: two programs that print the same values may differ in whether they label them as the task asked."""
    names = {m.group(0).lower() for m in _NAME_RE.finditer(task)}
    printed = {m.group(0).lower() for m in _NAME_RE.finditer(stdout or "")}
    return len(names & printed)
