"""The task's instructions said back inside the answer, and how a program takes them out.

A small model writing an email asked to "keep it friendly, so nothing that sounds like a threat: leave out the words
'lawyer' and 'fault'" may write "We get along fine and I want to keep it that way, so nothing that sounds like a
threat or blame." into the email; asked for a reply "in a quote bubble, so the very first character ... needs to be a
double quote mark", it may say so in the obituary. Those sentences are the user's instructions to the writer, not
part of the piece. The sentences of the task that state a requirement are the ones a reader reads one from
(rules.instructions); an answer's sentence of at least MIN_TOLD_WORDS words most of whose word 4-grams
(TOLD_SHARE) are one such sentence's is said back. A program drops it (``drop_told_back``); what the task asks the
answer to contain (the request said back, a given opening or ending) is never dropped.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from hierplan.rules.text import words

MIN_TOLD_WORDS = 6
# What the task tells the answer to say is the answer's content, not an instruction to the writer: "add a P.S.
# asking them to confirm the cancellation in writing", "end by inviting him over for a barbecue". Said in the
# answer, it is the piece doing as asked. Only the -ing forms: "keep it short" after "a thank-you note" or "don't
# ask questions" is an instruction.
_TO_SAY_RE = re.compile(r"\b(?:asking|telling|inviting|reminding|thanking|saying|wishing|explaining|that\s+says|"
                        r"letting\s+\w+\s+know)\b.*$", re.I)
TOLD_SHARE = 0.6
_GRAM = 4
# A sentence ends after its stop, before the next one's first word, whatever its case: a task typed all in
# lowercase is still many sentences, and only those that state a requirement are instructions. Before a lowercase
# word, only a stop after a word of two letters or more ends one ("a P.S. thanking him", "e.g. rain" go on).
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[*])|(?<=[a-z]{2}[.!?])\s+(?=[a-z])")


# A stop after one of these ends no sentence: "mr. smith", "approx. ten lines".
_ABBREVIATION_END_RE = re.compile(r"\b(?:mr|mrs|ms|dr|st|jr|sr|prof|approx|fig|etc|vs|no|inc|ltd|co)\.$", re.I)


def sentences(text: str) -> list[str]:
    merged: list[str] = []
    for piece in _SENTENCE_END_RE.split(" ".join(text.split())):
        if merged and _ABBREVIATION_END_RE.search(merged[-1]):
            merged[-1] += " " + piece
        else:
            merged.append(piece)
    return [s for s in merged if s.strip()]


def _grams(text: str) -> set[tuple[str, ...]]:
    tokens = [w.lower() for w in words(text)]
    return {tuple(tokens[i:i + _GRAM]) for i in range(len(tokens) - _GRAM + 1)}


def instruction_part(sentence: str) -> str:
    """The task's sentence less what it tells the answer to say (``_TO_SAY_RE``)."""
    return _TO_SAY_RE.sub("", sentence)


def told_back(sentence: str, said: Iterable[str]) -> bool:
    """Whether ``sentence`` of the answer is one of the task's instruction sentences (``said``) said back, what
    they tell the answer to say aside."""
    if len(words(sentence)) < MIN_TOLD_WORDS:
        return False
    grams = _grams(sentence)
    return bool(grams) and any(len(grams & _grams(instruction_part(s))) >= TOLD_SHARE * len(grams) for s in said)


def _asked(text: str, asked: Iterable[str]) -> str:
    for phrase in asked:
        text = text.replace(phrase, " ")
    return text


def told_back_sentences(text: str, instruction: dict[str, Any]) -> list[str]:
    """The answer's sentences that say the task's instructions back, outside what the task asks it to contain."""
    found = []
    for line in _asked(text, instruction.get("asked", ())).splitlines():
        found += [s for s in sentences(line) if told_back(s, instruction["said"])]
    return found


def drop_told_back(text: str, instruction: dict[str, Any]) -> str:
    """``text`` less its sentences that say the task's instructions back (a line left empty goes too); the text
    as it was when there are none, or when they are all of it (what is left to fix is then the reviser's)."""
    told = set(told_back_sentences(text, instruction))
    if not told:
        return text
    out = []
    for line in text.split("\n"):
        kept = [s for s in sentences(line) if s not in told]
        if len(kept) == len(sentences(line)):
            out.append(line)
        elif kept:
            out.append(re.match(r"\s*", line).group(0) + " ".join(kept))
    left = "\n".join(out)
    return left if words(left) else text
