"""The answer stays the answer: a rewrite may fix the form, never trade the piece away for it.

The rule, in one sentence: a rewrite replaces the answer kept so far only when it is still the piece, that is at
least KEEP_SHARE of the kept answer's words (a loop's words counted once; or of the task's own word limit, when that
is lower; scaled by the share of its list items it keeps, when it holds a list to fewer items) and no more of the
task's words than the kept answer had (beyond ECHO_MARGIN), and not short of the floor below when the kept answer is
not, whatever instructions it fixes.

Why: a small model asked to fix "it must end with X" can reply with X alone, and asked for exactly four bullets
can copy the task's sentences into them; both break fewer checked instructions and leave the user with nothing.
Fixes made by program (rules.checks.repair_by_program) lose nothing the answer said and are not judged
here.

The floor under any answer, draft or rewrite (``not_the_piece``): an answer is not the piece when most of it is the
task's own words (ECHO_LIMIT, at MIN_ECHO_WORDS words or more; a list of the task's sentences too), or when it is
only the parts the task asks for beside the answer (a postscript, the request repeated, a given opening or closing, a
<<title>> where the task asks for no title or name itself, and no word besides them), or when the task names a piece
of writing (an essay, a letter, a post, an ad...) or asks to expand on something and the answer has fewer than
MIN_PIECE_WORDS words besides those parts and its title where the task's limits allow that many, or when the task
names a piece in sentences or verse (a poem, a story, a letter: RUNNING_PIECE_RE) or counts its sentences, and
asks for no list, and the answer is a list (another kind of piece: LIST_SHARE of its lines are list items), or when the task asks for a piece
in verse to be written (a poem, a song, a rap: VERSE_PIECE_RE) and the answer has no verse in it (prose: fewer than
MIN_VERSE_LINES short lines, or fewer than VERSE_SHARE of its lines), unless JSON, a program or a list is what the
task allows. Such an answer is a problem to fix like a broken instruction, so the reviser writes the piece anew; for
the same reason a rewrite that turns a kept answer in sentences into a list the task did not ask for is not kept.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from hierplan.rules.checks import ITEM_MARK_RE, list_lines
from hierplan.rules.instructions import LIST_KINDS
from hierplan.rules.pieces import PIECE_RE, RUNNING_PIECE_RE, VERSE_PIECE_RE
from hierplan.rules.repeats import unlooped_words
from hierplan.rules.text import split_code, words

KEEP_SHARE = 0.6
"""A rewrite keeps at least this share of the kept answer's words (or of the task's word limit, if lower)."""
ECHO_NGRAM = 4
ECHO_MARGIN = 0.15
"""A rewrite may hold this much more of the task's word 4-grams (as a share of its own) than the kept answer."""
ECHO_LIMIT = 0.5
"""An answer more than this share of whose word 4-grams are the task's is the task copied back, not an answer."""
MIN_ECHO_WORDS = 8
"""An answer of fewer words is never the task copied back: it may be one of the replies the task offers ("My
answer is yes.") or a few words the task asks to finish."""
MIN_PIECE_WORDS = 40
"""Fewer words than this is not a piece of writing (a title, a required line, a template), unless the task's
own limits (words, sentences) ask for less."""
VERSE_LINE_WORDS = 16
"""A line of verse has at most this many words."""
MIN_VERSE_LINES = 3
"""Verse has at least this many short lines, and they are at least VERSE_SHARE of its lines."""
VERSE_SHARE = 1 / 3
# Words by which a task asks for a list, read or not as an instruction: then a list is what it asks for.
LIST_WORDS_RE = re.compile(r"\b(?:lists?|listing|bullet(?:s|ed)?|points|numbered|items|steps|outline|ideas|tips|"
                           r"names|options|examples|reasons|ways)\b", re.I)
LIST_SHARE = 0.6
"""An answer at least this share of whose lines (and MIN_LIST_LINES of them) are list items is a list."""
MIN_LIST_LINES = 3
_SENTENCE_FLOOR = 3
"""A task allowing at most this many sentences may be answered in fewer than MIN_PIECE_WORDS words."""
# A title the task asks for in << >>: its own line, no part of the piece's length.
_TITLE_LINE_RE = re.compile(r"^[ \t]*<<[^\n]*>>[ \t]*$", re.M)
# A task whose answer is a title or a name ("suggest a title for my post"): a title alone answers it.
_TITLE_ASKED_RE = re.compile(r"\b(?:suggest|give|propose|come\s+up\s+with|think\s+of|need|want|write|brainstorm)\s+"
                             r"(?:me\s+|us\s+)?(?:a|an|one|some|two|three|\d+|a\s+few)?\s*(?:[\w'-]+\s+)?"
                             r"(?:titles?|names?|headlines?)\b", re.I)
# A code fence's own line: what a fence holds (JSON, a program) is the answer's too, for its length and its echo.
_FENCE_LINE_RE = re.compile(r"^[ \t]*```[^\n]*$", re.M)
UNSPACED_CHARS_PER_WORD = 2
"""About how many characters of a script written without spaces say what one English word says."""
_UNSPACED_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\u0e00-\u0e7f]")
NOT_AN_ANSWER = "it repeats the task's words instead of answering it: write the piece the task asks for"
REFUSED = "it declines the task instead of doing it: write what the task asks for"
# The whole reply a refusal: "I'm sorry, but I can't assist with that request." (and an offer of other help); "I
# can't write poems like Keats, yet I try: ..." goes on, and "we cannot provide refunds" is a reply's content.
_REFUSAL_RE = re.compile(
    r"^\W*(?:(?:i'?m|i\s+am)\s+(?:so\s+|very\s+|really\s+)?sorry|sorry|i\s+apologi[sz]e)?[\s,.!]*(?:but\s+)?"
    r"i(?:\s+|'m\s+|\s+am\s+)(?:can'?t|cannot|can\s+not|unable\s+to|not\s+able\s+to)\s+(?:assist|help|comply|"
    r"fulfil+|provide|write|create|complete)\b(?:\s+(?:you\s+)?(?:with\s+)?(?:that|this|it|your|the|such)\b"
    r"(?:(?!\b(?:but|yet|however|here|instead)\b)[^.!?\n])*)?"
    r"[.!]?(?:\s+(?:is\s+there\s+anything\s+else|let\s+me\s+know|if\s+you\s+have)[^\n]*)?\s*$", re.I)
ONLY_PARTS = ("it is only {parts}, with no answer besides: write the answer the task asks for, with {parts} as "
              "well")
TOO_SHORT = ("it has only {n} words{besides}, which is not the {piece} the task asks for: write the whole {piece}, "
             "meeting the task's instructions")
PROSE = ("it is written as prose, not the {piece} the task asks for: write the {piece} itself, in verse, in short "
         "lines, meeting the task's instructions")
A_LIST = ("it is a list of points, not the {piece} the task asks for: write the {piece} itself, in sentences "
          "or verse, meeting the task's instructions")
# The instructions whose text the answer is asked to contain: their words are the task's by request.
_QUOTED_KINDS = ("repeat_request", "ends_with", "begins_with", "heading_text")


def _asked(instructions: Iterable[dict[str, Any]]) -> list[str]:
    """The phrases the task asks the answer to contain (its words by request, not copying)."""
    return [i["text"] for i in instructions if i.get("kind") in _QUOTED_KINDS and i.get("text")]


def _words(text: str) -> list[str]:
    """Every word of ``text``, those inside code fences too (a proposal asked as JSON is all in its fence). A run of
    a script written without spaces (Chinese, Japanese, Thai) counts a word every UNSPACED_CHARS_PER_WORD
    characters: as one word, a note in Japanese counted as a handful of words against an English draft, and was
    rejected as a piece dropped."""
    found = []
    for word in words(_FENCE_LINE_RE.sub("", text)):
        if _UNSPACED_RE.search(word):
            found += [word[k:k + UNSPACED_CHARS_PER_WORD] for k in range(0, len(word), UNSPACED_CHARS_PER_WORD)]
        else:
            found.append(word)
    return found


def _added_parts(answer: str, instructions: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """(``answer`` less the parts the task asks for beside the answer: the phrases it asks the answer to contain, a
    postscript from its marker on; what was taken out, in words)."""
    taken = []
    for phrase in _asked(instructions):
        if phrase in answer:
            answer, taken = answer.replace(phrase, " "), [*taken, "the words the task asks you to write"]
    for i in instructions:
        marker = i.get("marker") if i.get("kind") == "postscript" else None
        found = re.search(r"(?m)^\W*" + re.escape(marker), answer) if marker else None
        if found:
            answer, taken = answer[:found.start()], [*taken, f"a postscript ({marker})"]
    return answer, list(dict.fromkeys(taken))


def said_words(answer: str, instructions: Iterable[dict[str, Any]]) -> int:
    """How many words ``answer`` says besides the parts the task asks for beside it and its title, a loop's words
    once (rules.repeats.unlooped_words)."""
    body, _ = _added_parts(answer, list(instructions))
    return unlooped_words(_words(_TITLE_LINE_RE.sub(" ", body)))


def more_of_the_piece(answer: str, kept: str, task: str, instructions: Iterable[dict[str, Any]]) -> bool:
    """Whether ``answer`` is more of the piece than a ``kept`` answer that is no piece: it is the piece, or it says
    more (said_words) and is not the task's words."""
    instructions = list(instructions)
    if not_the_piece(kept, task, instructions) is None:
        return False
    why = not_the_piece(answer, task, instructions)
    return why is None or (why != NOT_AN_ANSWER and said_words(answer, instructions) > said_words(kept, instructions))


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
    unmarked = ITEM_MARK_RE.sub("", text)  # a list of the task's sentences ("1. Generate ...") is the task too
    grams = _ngrams([w.lower() for w in _words(unmarked)])
    if not grams:
        return 0.0
    task_grams = set(_ngrams([w.lower() for w in _words(task)]))
    return sum(g in task_grams for g in grams) / len(grams)


def substance_lost(kept: str, rewrite: str, task: str, instructions: Iterable[dict[str, Any]]) -> str | None:
    """Why ``rewrite`` may not replace ``kept`` (it shrank the piece, or it is the task's words), or None."""
    instructions = list(instructions)
    kept_words, new_words = unlooped_words(_words(kept)), unlooped_words(_words(rewrite))
    limit = _word_limit(instructions)
    floor = KEEP_SHARE * min(kept_words, limit if limit is not None else kept_words)
    kept_items, new_items = list_lines(kept)[0], list_lines(rewrite)[0]
    if 0 < new_items < kept_items:  # a list cut to the count asked is shorter by design
        floor *= new_items / kept_items
    if new_words < floor:
        return f"the rewrite has {new_words} words where the kept answer had {kept_words}: it dropped the piece"
    asked = _asked(instructions)
    if echo_share(rewrite, task, asked) > echo_share(kept, task, asked) + ECHO_MARGIN:
        # the task's own facts in a rewrite are no loss against an answer that is no piece at all (a refusal)
        if not not_the_piece(kept, task, instructions) or not_the_piece(rewrite, task, instructions):
            return "the rewrite repeats the task's words instead of answering it"
    if is_list(rewrite) and not is_list(kept) and not _asks_list(instructions, task):
        return "the rewrite turned the piece into a list the task did not ask for"
    if (why := not_the_piece(rewrite, task, instructions)) and not not_the_piece(kept, task, instructions):
        return f"the rewrite is no longer the piece: {why.split(':')[0]}"
    return None


def is_list(text: str) -> bool:
    """Whether ``text`` is a list of points (LIST_SHARE of its lines list items, at least MIN_LIST_LINES)."""
    items, lines = list_lines(text)
    return items >= MIN_LIST_LINES and items >= LIST_SHARE * lines


def _asks_list(instructions: list[dict[str, Any]], task: str) -> bool:
    return any(i.get("kind") in LIST_KINDS for i in instructions) or LIST_WORDS_RE.search(task) is not None


def _allows_short(instructions: list[dict[str, Any]]) -> bool:
    for i in instructions:
        if i.get("kind") == "words" and i.get("max") is not None and i["max"] < 2 * MIN_PIECE_WORDS:
            return True
        if i.get("kind") == "sentences" and i.get("max") is not None and i["max"] <= _SENTENCE_FLOOR:
            return True
    return False


def not_the_piece(answer: str, task: str, instructions: Iterable[dict[str, Any]]) -> str | None:
    """Why ``answer`` is no answer to ``task`` at all (the task copied back, a line where the task names a piece
    of writing, or a list where it names a piece in sentences or verse), or None. Judged on every answer the loop may keep, the draft included."""
    instructions = list(instructions)
    asked = _asked(instructions)
    if _REFUSAL_RE.match(answer.strip()):
        return REFUSED
    if len(_words(answer)) >= MIN_ECHO_WORDS and echo_share(answer, task, asked) > ECHO_LIMIT:
        return NOT_AN_ANSWER
    body, parts = _added_parts(answer, instructions)
    if parts and not _words(body):  # a short answer besides them may be the answer: a name, a yes
        return ONLY_PARTS.format(parts=" and ".join(parts))
    untitled = _TITLE_LINE_RE.sub(" ", body)
    if untitled != body:
        if not _words(untitled) and not _TITLE_ASKED_RE.search(task) and not PIECE_RE.search(task):
            return ONLY_PARTS.format(parts=" and ".join(["a title", *parts]))
        parts = ["its title", *parts]
    n = len(_words(untitled))
    piece = PIECE_RE.search(task)
    if piece and n < MIN_PIECE_WORDS and not _allows_short(instructions):
        name = piece.group(0).lower()
        besides = f" besides {' and '.join(parts)}" if parts else ""
        return TOO_SHORT.format(n=n, besides=besides, piece="piece" if " on" in name else name)
    running = RUNNING_PIECE_RE.search(task)
    if is_list(answer) and not _asks_list(instructions, task):
        if running:
            return A_LIST.format(piece=running.group(0).lower())
        if any(i.get("kind") == "sentences" for i in instructions):  # sentences counted are sentences asked for
            return A_LIST.format(piece=piece.group(0).lower() if piece else "text")
    verse = VERSE_PIECE_RE.search(task)
    if verse and not is_verse(answer) and not _other_form(answer, task, instructions):
        return PROSE.format(piece=verse.group("piece").lower())
    return None


def _other_form(answer: str, task: str, instructions: list[dict[str, Any]]) -> bool:
    """The verse may stand in another form the task allows: JSON, a program, a list the task asks for."""
    if re.search(r"\bjson\b", task, re.I) or any(i.get("kind") == "json" for i in instructions):
        return True
    return bool(split_code(answer)[1]) or _asks_list(instructions, task)


def is_verse(text: str) -> bool:
    """Whether ``text`` holds verse: MIN_VERSE_LINES lines of at most VERSE_LINE_WORDS words, VERSE_SHARE of its
    lines at least (a poem beside its explanation is still verse; one paragraph of prose is not)."""
    prose, _ = split_code(text)
    lines = [len(words(line)) for line in prose.splitlines() if words(line)]
    short = sum(1 for n in lines if n <= VERSE_LINE_WORDS)
    return short >= MIN_VERSE_LINES and short >= VERSE_SHARE * len(lines)
