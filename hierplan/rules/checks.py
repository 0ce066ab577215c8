"""A check of an answer against the checkable instructions read by rules.instructions (what it gets wrong, and by
how much), and what a program repairs without losing anything: the chat frame around the piece, lines said twice,
the form instructions of rules.form_check; with the views of an answer's lists (its list lines and blocks).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Iterable

# The text views (code fences, words) are shared with the evaluation, so a count here and there means the same.
from hierplan.config import MIN_TOPIC_WORDS, SHORTEN_TO, TOPIC_SHARE, WORDS_PER_SENTENCE
from hierplan.rules.form_check import fix_form, form_problem
from hierplan.rules.instructions import LIST_KINDS
from hierplan.rules.language import language_problem
from hierplan.rules.repeats import LINE_MARKUP, drop_repeats, repeats_problem
from hierplan.rules.told_back import drop_told_back, told_back_sentences
from hierplan.rules.text import PYTHON_LABELS, split_code
from hierplan.rules.text import words as prose_words

# not a rule line ("* * *", "- - -"), which separates parts and lists nothing
_BULLET_LINE_RE = re.compile(r"^ {0,1}(?!(?:[-*_][ \t]*){3,}$)[-*+\u2022][ \t]+\S")
_NUMBERED_LINE_RE = re.compile(r"^ {0,1}(?:\d{1,3}[.)]|step\s+\d{1,3}[.:)]?)[ \t]+\S", re.I)
_HEADING_LINE_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+\S")


def _count_lines(prose: str, kind: str) -> int:
    patterns = {"bullets": (_BULLET_LINE_RE,), "numbered": (_NUMBERED_LINE_RE,), "headings": (_HEADING_LINE_RE,),
                "items": (_BULLET_LINE_RE, _NUMBERED_LINE_RE)}[kind]
    return sum(1 for line in prose.splitlines() if any(p.match(line) for p in patterns))


def list_lines(text: str) -> tuple[int, int]:
    """(the prose's bullet or numbered lines, its non-empty lines): how much of an answer is a list."""
    prose, _ = split_code(text)
    lines = [line for line in prose.splitlines() if line.strip()]
    return _count_lines(prose, "items"), len(lines)


# A list item's mark at a line's start (every line's, in a text of several).
ITEM_MARK_RE = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+", re.M)


def outside_code(lines: list[str]) -> list[bool]:
    """For each line, whether it lies outside a fenced code block (a fence line itself is inside)."""
    outside, in_code = [], False
    for line in lines:
        fence = line.lstrip().startswith(("```", "~~~"))
        in_code = in_code != fence
        outside.append(not in_code and not fence)
    return outside


def list_blocks(text: str) -> list[tuple[int, int]]:
    """Each run of top-level list lines outside code, as (first, last) line numbers of ``text.splitlines()``:
    blank lines and indented lines within a run belong to it (a nested item, an item's second paragraph)."""
    lines = text.splitlines()
    blocks: list[tuple[int, int]] = []
    start = last = None
    for k, (line, outside) in enumerate(zip(lines, outside_code(lines))):
        if outside and (_BULLET_LINE_RE.match(line) or _NUMBERED_LINE_RE.match(line)):
            start = k if start is None else start
            last = k
        elif start is not None and (not outside or (line.strip() and not line.startswith((" ", "\t")))):
            blocks.append((start, last))
            start = None
    if start is not None:
        blocks.append((start, last))
    return blocks


def put_list(text: str, items: list[str], kind: str) -> str:
    """``text`` with its list (its one run of top-level list lines outside code: list_blocks) replaced by
    ``items``, as bullet points ('- ') or, for ``kind`` "numbered", numbered lines; ``items`` alone when ``text``
    has no list. A text with several lists is returned unchanged: which of them the count is about is not known."""
    marked = [f"{n}. {item}" if kind == "numbered" else f"- {item}"
              for n, item in enumerate((ITEM_MARK_RE.sub("", " ".join(i.split())) for i in items), 1)]
    lines = text.splitlines()
    blocks = list_blocks(text)
    if not blocks:
        return "\n".join(marked)
    if len(blocks) > 1:
        return text
    first, last = blocks[0]
    return "\n".join([*lines[:first], *marked, *lines[last + 1:]])


def _word_in(word: str, text: str) -> bool:
    """The whole word, singular or plural ("executors" is mentioned by "executor", "routing" not by "route")."""
    base = word[:-1] if word.lower().endswith("s") and len(word) > 3 else word
    return re.search(rf"(?<![^\W_]){re.escape(base)}(?:s|es|'s|\u2019s)?(?![^\W_])", text, re.I) is not None


def _lines(prose: str) -> list[str]:
    return [line.strip().strip(LINE_MARKUP) for line in prose.splitlines() if line.strip().strip(LINE_MARKUP)]


def problem(instruction: dict[str, Any], text: str) -> str | None:
    """What ``text`` gets wrong about one instruction, in words the model can act on; None when it is met."""
    prose, blocks = split_code(text)
    kind = instruction["kind"]
    if kind in ("bullets", "numbered", "headings", "items"):
        n, lo, hi = _count_lines(prose, kind), instruction["min"], instruction["max"]
        if (lo is None or n >= lo) and (hi is None or n <= hi):
            return None
        what = {"bullets": "bullet points ('- ' lines)", "numbered": "numbered lines ('1. ')",
                "headings": "Markdown headings ('## ' lines)", "items": "list items"}[kind]
        wanted = f"exactly {lo}" if lo == hi else (f"{lo} to {hi}" if lo is not None and hi is not None
                                                    else f"at least {lo}" if lo is not None else f"at most {hi}")
        nested = " (nested ones do not count: make every item a top-level line)" if kind != "headings" and any(
            re.match(r"^\s{2,}(?:[-*+\u2022]|\d{1,3}[.)])\s", line) for line in prose.splitlines()) else ""
        extra = (" (use bold text or list items for anything else)" if kind == "headings" and hi is not None and n > hi
                 else "")
        return f"it has {n} {what}{nested}; the task asks for {wanted}{extra}"
    if kind == "heading_text":
        want = instruction["text"].lstrip("#").strip().lower()
        found = any(line.lstrip().startswith("#") and line.lstrip("# \t").strip().lower().startswith(want)
                    for line in prose.splitlines())
        return None if found else f"it lacks the heading line '{instruction['text']}'"
    if kind == "words":
        n, lo, hi = len(prose_words(prose)), instruction["min"], instruction["max"]
        if lo is not None and n < lo:
            return f"it has {n} words outside code; the task asks for at least {lo}"
        if hi is not None and n > hi:
            # A small model asked for "at most 99" trims a few words; a concrete, lower target it meets.
            target = max(lo or 0, int(hi * SHORTEN_TO))
            return (f"it has {n} words outside code; the task asks for at most {hi}: shorten it to about "
                    f"{target} words ({max(1, round(target / WORDS_PER_SENTENCE))} short sentences or items)")
        return None
    if kind == "avoid_word":
        word = instruction["word"]
        found = re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", prose, re.I)
        return f"it uses the word '{word}', which the task forbids" if found else None
    if kind == "begins_with":
        lines = _lines(prose if not text.lstrip().startswith("```") else text)
        want = instruction["text"].strip(LINE_MARKUP)
        ok = bool(lines) and lines[0].lower().startswith(want.lower())
        return None if ok else f"its first line must begin with '{want}'"
    if kind == "ends_with_question":
        lines = _lines(prose)
        return None if lines and lines[-1].rstrip(")").endswith("?") else (
            "its last line must be a question, with nothing after it (no sign-off or name)")
    if kind == "python_block":
        code = [c for label, c in blocks if label in PYTHON_LABELS]
        if not code:
            return "it needs the code in a ```python block"
        for block in code:
            try:
                ast.parse(block)
            except SyntaxError as exc:
                return f"its Python code block does not parse ({exc.msg}, line {exc.lineno})"
        return None
    if kind == "no_repeats":
        return repeats_problem(prose, refrain=instruction.get("refrain", False))
    if kind == "language":
        return language_problem(instruction, text)
    if kind == "told_back":
        told = told_back_sentences(prose, instruction)
        return None if not told else (f"it says the task's instructions back, e.g. '{told[0]}': leave them out of "
                                      f"the answer and just follow them")
    if kind == "mentions":
        words = instruction["term"].split()
        found = [_word_in(w, text) for w in words]
        # a topic of three words or more is mentioned by its last word and most of the rest ("keeping trash in the
        # bear-proof bin" by "keep the trash in the bear-proof bin"); a name of one or two words, whole
        met = all(found) or (len(words) >= MIN_TOPIC_WORDS and found[-1] and sum(found) >= TOPIC_SHARE * len(words))
        return None if met else f"it does not mention {instruction['term']}"
    if kind in FORM_KINDS:
        return form_problem(instruction, text)
    raise ValueError(f"unknown instruction kind {kind!r}")


# The letter case of the whole answer, which a program applies exactly (repair_by_program): the writer is not asked
# for it. Asked for it, a small model took "in all lowercase letters" for a request to copy the task's words in that
# case, or wrote a line where a poem was asked.
CASE_KINDS = ("lowercase", "uppercase")
PLACED_KINDS = ("repeat_request",)
"""What a program puts in place whatever the writer writes (the request said back first): not shown to the writer,
who, told of it, wrote the request under a label or into a title."""


def program_cased(instructions: Iterable[dict[str, Any]]) -> bool:
    """Whether the answer's letter case is the program's to apply (the task asks for one case throughout)."""
    return any(i.get("kind") in CASE_KINDS for i in instructions)


FORM_KINDS = ("lowercase", "uppercase", "no_commas", "quoted", "ends_with", "json", "title", "highlights",
              "placeholders", "postscript", "paragraphs", "sections", "two_responses", "sentences", "word_times",
              "letter_times", "repeat_request", "caps_words")


# A chat model's frame around the piece: an opening line that announces it ("Certainly! Here is the letter:") and
# a closing remark about the request after a rule ("---\n\nThis letter includes the postscript as requested.").
# The opener names what it announces (a "Here is the thing:" or "Sure as the sunrise, ...:" opens the piece itself).
_FRAME_NOUNS = (r"(?:answer|response|reply|version|draft|rewrite|text|piece|letter|e-?mail|poem|haiku|limerick|"
                r"sonnet|song|lyrics|rap|story|essay|article|post|blog|speech|script|review|summary|description|"
                r"list|outline|plan|proposal|pitch|report|memo|note|message|riddle|joke|slogan|tweet|ad|"
                r"advertisement|itinerary|rubric|resume|cover\s+letter|(?:\w+\s+)?ideas?|(?:\w+\s+)?names?)")
_ASSENT = r"(?:certainly|sure|of\s+course|absolutely|okay|ok)\s*[!,.]\s*"
_HERE = r"(?:here(?:'s|\s+is|\s+are)|below\s+is|below\s+are)\b"
# An opening line that announces the piece: "Here's a haiku about rain:" names what it announces; after an assent
# ("Certainly! Here's the back-cover blurb:") any piece is announced.
_OPENER_RE = re.compile(r"^\s*(?:" + _ASSENT + ")?" + _HERE + r"[^\n]*\b" + _FRAME_NOUNS + r"\b[^\n]*:\s*$|"
                        r"^\s*" + _ASSENT + _HERE + r"[^\n]*:\s*$|^\s*" + _ASSENT + "$", re.I)
# A rule line that may set a frame off; *** is left alone (it separates paragraphs: rules.form_check).
_RULE_RE = re.compile(r"^\s*(?:-{3,}|_{3,})\s*$")
# A closing remark is about the request: it says how the answer meets it, in its first sentence.
_REMARK_RE = re.compile(r"^\s*(?:\*{0,2}note:?\*{0,2}\s*)?(?:[^.!?\n]*\bas\s+(?:you\s+)?requested\b|"
                        r"[^.!?\n]*\b(?:meets|follows|fulfil(?:l?s)|adheres\s+to|satisfies|complies\s+with)\s+"
                        r"(?:all\s+(?:of\s+)?|each\s+of\s+|every\s+)?(?:the|your)\s+(?:task'?s?|instructions?|request|"
                        r"requirements?|guidelines|constraints)\b|"
                        r"this\s+(?:letter|poem|essay|story|response|answer|reply|post|version|draft|text)\s+"
                        r"(?:includes|meets|follows|uses|contains|adheres|incorporates))", re.I)
# A closing remark without a rule line before it: only one that says the answer meets the task's requirements.
_META_REMARK_RE = re.compile(r"^\s*(?:\*{0,2}note:?\*{0,2}\s*)?[^.!?\n]*\b(?:meets|follows|fulfil(?:l?s)|adheres\s+to|"
                             r"satisfies|complies\s+with)\s+(?:all\s+(?:of\s+)?|each\s+of\s+|every\s+)?(?:the|your)\s+"
                             r"(?:task'?s?|instructions?|request|requirements?|guidelines|constraints)\b(?!\s+(?:of|for)\b)", re.I)
# A closing line that gives the answer ("Final answer: 42") is never a frame.
_ANSWER_LINE_RE = re.compile(r"^\W*final\s+answer\b", re.I | re.M)
FRAME_MAX_WORDS = 40
"""An opening line or closing remark longer than this is part of the answer, not its frame."""


def drop_chat_frame(text: str, instructions: list[dict[str, Any]] = ()) -> str:
    """``text`` without a chat model's frame around the piece (an opening line announcing it, ending in ':'; a
    closing remark about the request after a rule line, outside code), which is no part of what the task asked
    for; kept when the task asks for how the answer begins (its words may be the frame's)."""
    if any(i["kind"] in ("begins_with", "repeat_request") for i in instructions):
        return text
    lines = text.split("\n")
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is not None and _OPENER_RE.match(lines[first]) and len(lines[first].split()) <= FRAME_MAX_WORDS:
        rest = lines[first + 1:]
        while rest and not rest[0].strip():
            rest = rest[1:]
        if rest and _RULE_RE.match(rest[0]):
            rest = rest[1:]
        if any(line.strip() for line in rest):
            lines = rest
    outside = outside_code(lines)
    rules = [k for k, line in enumerate(lines) if outside[k] and _RULE_RE.match(line)]
    if rules and all(outside[rules[-1]:]):
        tail = "\n".join(lines[rules[-1] + 1:]).strip()
        if tail and len(tail.split()) <= FRAME_MAX_WORDS and _REMARK_RE.match(tail) and \
                not _ANSWER_LINE_RE.search(tail) and "\n".join(lines[:rules[-1]]).strip():
            lines = lines[:rules[-1]]
    # without a rule line, only a last paragraph (or line) that says the answer meets the task's requirements
    last = max((k for k, line in enumerate(lines) if outside[k] and not line.strip()), default=None)
    filled = [k for k, line in enumerate(lines) if line.strip()]
    start = last + 1 if last is not None and filled and last < filled[-1] else (filled[-1] if filled else None)
    if start is not None and all(outside[start:]) and any(line.strip() for line in lines[:start]):
        tail = "\n".join(lines[start:]).strip()
        if len(tail.split()) <= FRAME_MAX_WORDS and _META_REMARK_RE.match(tail) and not _ANSWER_LINE_RE.search(tail):
            lines = lines[:start]
    return "\n".join(lines).strip("\n") if lines != text.split("\n") else text


def repair_by_program(instructions: list[dict[str, Any]], text: str) -> str:
    """``text`` with what a program can fix without losing anything: the chat frame dropped (drop_chat_frame),
    lines and sentences said twice and loops dropped (rules.repeats), the task's instructions said back dropped
    (rules.told_back), and the form instructions (case, commas,
    quotes, the ending, JSON) applied (rules.form.fix_form)."""
    refrain = any(i.get("refrain") for i in instructions if i["kind"] == "no_repeats")
    text = drop_repeats(drop_chat_frame(text, instructions), refrain=refrain)
    for told in (i for i in instructions if i["kind"] == "told_back"):
        text = drop_told_back(text, told)
    if "```" not in text:  # what was dropped leaves no run of empty lines behind
        text = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text)
    return fix_form(instructions, text)


def problems(instructions: list[dict[str, Any]], text: str) -> list[str]:
    return [p for p in (problem(i, text) for i in instructions) if p is not None]


def miss(instruction: dict[str, Any], text: str) -> float:
    """How far ``text`` is from meeting one instruction: 0 when it is met; for a count (words, list lines) the
    distance from the bound as a share of it (at 335 words, "at most 30" is missed by 10.2, at 60 words by 1.0);
    1 for anything else it breaks. What check_instructions compares two answers by when they break as many."""
    if problem(instruction, text) is None:
        return 0.0
    kind = instruction["kind"]
    if kind == "words" or kind in LIST_KINDS or kind == "headings":
        prose, _ = split_code(text)
        n = len(prose_words(prose)) if kind == "words" else _count_lines(prose, kind)
        lo, hi = instruction["min"], instruction["max"]
        if lo is not None and n < lo:
            return (lo - n) / max(lo, 1)
        if hi is not None and n > hi:
            return (n - hi) / max(hi, 1)
    return 1.0


def total_miss(instructions: list[dict[str, Any]], text: str) -> float:
    return sum(miss(i, text) for i in instructions)
