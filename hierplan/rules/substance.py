"""The answer stays the answer: a rewrite may fix the form, never trade the piece away for it.

The rule, in one sentence: a rewrite replaces the answer kept so far only when it is still the piece, that is at
least KEEP_SHARE of the kept answer's words (or of the task's own word limit, when that is lower) and no more of
the task's words than the kept answer had (beyond ECHO_MARGIN), whatever instructions it fixes.

Why: a small model asked to fix "it must end with X" can reply with X alone, and asked for exactly four bullets
can copy the task's sentences into them; both break fewer checked instructions and leave the user with nothing.
Fixes made by program (rules.instructions.repair_by_program) lose nothing the answer said and are not judged
here.
"""

from __future__ import annotations

from typing import Any, Iterable

from hierplan.rules.text import words

KEEP_SHARE = 0.6
"""A rewrite keeps at least this share of the kept answer's words (or of the task's word limit, if lower)."""
ECHO_NGRAM = 4
ECHO_MARGIN = 0.15
"""A rewrite may hold this much more of the task's word 4-grams (as a share of its own) than the kept answer."""
# The instructions whose text the answer is asked to contain: their words are the task's by request.
_QUOTED_KINDS = ("repeat_request", "ends_with", "begins_with", "heading_text")


def _word_limit(instructions: Iterable[dict[str, Any]]) -> int | None:
    limits = [i["max"] for i in instructions if i.get("kind") == "words" and i.get("max") is not None]
    return min(limits) if limits else None


def _ngrams(tokens: list[str], n: int = ECHO_NGRAM) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def echo_share(text: str, task: str, asked: Iterable[str] = ()) -> float:
    """The share of ``text``'s word 4-grams that are the task's, leaving out the phrases the task asks the
    answer to contain (``asked``: a request to repeat, an ending, an opening)."""
    for phrase in asked:
        text = text.replace(phrase, " ")
    grams = _ngrams([w.lower() for w in words(text)])
    if not grams:
        return 0.0
    task_grams = set(_ngrams([w.lower() for w in words(task)]))
    return sum(g in task_grams for g in grams) / len(grams)


def substance_lost(kept: str, rewrite: str, task: str, instructions: Iterable[dict[str, Any]]) -> str | None:
    """Why ``rewrite`` may not replace ``kept`` (it shrank the piece, or it is the task's words), or None."""
    instructions = list(instructions)
    kept_words, new_words = len(words(kept)), len(words(rewrite))
    limit = _word_limit(instructions)
    floor = KEEP_SHARE * min(kept_words, limit if limit is not None else kept_words)
    if new_words < floor:
        return f"the rewrite has {new_words} words where the kept answer had {kept_words}: it dropped the piece"
    asked = [i["text"] for i in instructions if i.get("kind") in _QUOTED_KINDS and i.get("text")]
    if echo_share(rewrite, task, asked) > echo_share(kept, task, asked) + ECHO_MARGIN:
        return "the rewrite repeats the task's words instead of answering it"
    return None
