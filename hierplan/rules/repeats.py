"""What an answer says again instead of writing on, and how a program takes it out without losing anything.

A small model stuck in a loop writes the same lines, the same sentences or the same few words until its token limit
("Jiang Zhi, Jiang Zhi, Jiang Zhi, ..."; a paragraph whose last three sentences come round again and again). The
repeats are no part of what the answer says, so a program drops them (``drop_repeats``): a prose line or sentence
of REPEAT_MIN_WORDS words or more said before, and a run of the same words said LOOP_MIN_REPEATS times or more in a
row, of which the first is kept. Code blocks and tables are left whole, and so is a run without a word in letters
(numbers, rules, table marks). What is left, or an answer that still goes round in circles (its word 4-grams mostly
said before), is the no_repeats instruction's problem, which the reviser is asked to fix.

``unlooped_words`` counts an answer's words without its loops, so a long loop is never "more" than a short answer.
"""

from __future__ import annotations

import re
from collections import Counter

from hierplan.config import (LOOP_CHECK_WORDS, LOOP_MAX_SPAN, LOOP_MIN_REPEATS, LOOP_MIN_WORDS, LOOP_NEW_SHARE,
                             REPEAT_LOOP_LINES, REPEAT_MIN_WORDS)
from hierplan.rules.text import words as prose_words

LINE_MARKUP = "*_`#>\"' \t"
"""What a line's own marks may be, stripped before its words are compared."""
_FENCE_LINE_RE = re.compile(r"^\s*```")
_TABLE_LINE_RE = re.compile(r"^\s*\|")
# A sentence ends after a word in lowercase (or a closing quote or bracket) and its stop, before a capital: not after
# "4." of a numbered step, nor after "Dr." or "D.C.".
_SENTENCE_END_RE = re.compile(r"(?<=[a-z)\"'\u201d\u2019][.!?])(?<!\b[A-Z][a-z]\.)(?<!\b[A-Z][a-z]{2}\.)\s+"
                              r"(?=[A-Z\"'\u201c\u2018*(])")
_TOKEN_RE = re.compile(r"\S+")
_LOOP_GRAM = 4


def _repeat_key(text: str) -> str | None:
    """What a line or sentence is compared by, or None when it is too short to count as a repeat."""
    key = " ".join(prose_words(text.strip().strip(LINE_MARKUP).lower()))
    return key if len(key.split()) >= REPEAT_MIN_WORDS else None


def _norm(token: str) -> str:
    return re.sub(r"[\W_]+", "", token.lower()) or token


def _collapse_runs(text: str) -> str:
    """``text`` with each run of the same 1 to LOOP_MAX_SPAN tokens said LOOP_MIN_REPEATS times or more in a row
    (LOOP_MIN_WORDS tokens in all, a word in letters among them) cut to its first."""
    tokens = list(_TOKEN_RE.finditer(text))
    norms = [_norm(t.group()) for t in tokens]
    pieces, i, last = [], 0, 0
    while i < len(tokens):
        for span in range(1, LOOP_MAX_SPAN + 1):
            cycle = norms[i:i + span]
            if len(cycle) < span or not any(c.isalpha() for c in "".join(cycle)):
                continue
            times = 1
            while norms[i + times * span:i + (times + 1) * span] == cycle:
                times += 1
            if times >= LOOP_MIN_REPEATS and times * span >= LOOP_MIN_WORDS:
                # the first round, ending as the run ends ("Zhi." where the last round had the stop), then what
                # follows the run
                end = i + times * span
                pieces.append(text[last:tokens[i + span - 1].start()] + tokens[end - 1].group())
                last = tokens[end - 1].end()
                i = end
                break
        else:
            i += 1
    return "".join(pieces) + text[last:] if pieces else text


def _drop_said_before(line: str, seen: set[str]) -> str | None:
    """``line`` less its sentences said before (their keys in ``seen``, which grows), or None when nothing is left."""
    key = _repeat_key(line)
    if key is not None and key in seen:
        return None
    sentences, kept = _SENTENCE_END_RE.split(line), []
    for sentence in sentences:
        if not sentence.strip() and kept:
            continue
        sentence_key = _repeat_key(sentence)
        if sentence_key is not None and sentence_key in seen and len(sentences) > 1:
            continue
        if sentence_key is not None:
            seen.add(sentence_key)
        kept.append(sentence)
    if key is not None:
        seen.add(key)
    return " ".join(kept) if kept else None


def drop_repeats(text: str, refrain: bool = False) -> str:
    """``text`` without the lines and sentences said word for word before and with each loop cut to its first
    round; code blocks and tables are left whole. In verse with a ``refrain`` (a chorus), lines said again stay:
    only the loops go."""
    seen: set[str] = set()
    out, prose, in_code = [], [], False

    def flush() -> None:
        if prose:
            out.append(_collapse_runs("\n".join(prose)))
            prose.clear()

    for line in text.split("\n"):
        if _FENCE_LINE_RE.match(line):
            in_code = not in_code
            flush()
            out.append(line)
        elif in_code or _TABLE_LINE_RE.match(line):
            flush()
            out.append(line)
        elif refrain:
            prose.append(line)
        elif (kept := _drop_said_before(line, seen)) is not None:
            prose.append(kept if line.strip() else line)
    flush()
    result = "\n".join(out)
    return result if result.split() != text.split() else text


def _grams(tokens: list[str]) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + _LOOP_GRAM]) for i in range(len(tokens) - _LOOP_GRAM + 1)]


def unlooped_words(tokens: list[str]) -> int:
    """How many of ``tokens`` (words) say something new: those that start a word 4-gram not said before, and the
    last three."""
    seen: set[tuple[str, ...]] = set()
    new = 0
    for gram in _grams([t.lower() for t in tokens]):
        new += gram not in seen
        seen.add(gram)
    return new + min(len(tokens), _LOOP_GRAM - 1)


def repeats_problem(prose: str, refrain: bool = False) -> str | None:
    """What the answer says again instead of writing on (the no_repeats instruction), or None. In verse with a
    ``refrain``, lines said again are its chorus, and only an answer that goes round in circles is a problem."""
    lines = [line for line in prose.splitlines() if line.strip()]
    seen = Counter(filter(None, map(_repeat_key, lines)))
    repeated = [line for line, n in seen.items() if n > 1]
    if repeated and not refrain:
        return (f"it repeats {len(repeated)} line(s) word for word, e.g. '{repeated[0]}': say each thing once "
                f"and drop the repeats")
    short = Counter(key for key in (" ".join(prose_words(line.lower())) for line in lines) if key)
    looped = [(line, n) for line, n in short.most_common(1) if n >= REPEAT_LOOP_LINES]
    if looped and not refrain:
        line, n = looped[0]
        return f"it says '{line}' {n} times over instead of writing on: write the answer anew, each thing once"
    tokens = [t.lower() for t in prose_words(prose)]
    if len(tokens) >= LOOP_CHECK_WORDS and unlooped_words(tokens) < LOOP_NEW_SHARE * len(tokens):
        gram, n = Counter(_grams(tokens)).most_common(1)[0]
        return (f"it goes round in circles, saying '{' '.join(gram)}' {n} times among words said before: write the "
                f"answer anew, each thing once")
    return None
