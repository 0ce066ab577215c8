"""Text views shared by the product and its evaluation: code fences and words.

One definition, so that a count the product checks and a count the evaluation scores mean the same thing.
"""

from __future__ import annotations

import re

MAX_PROSE_LINES = 8
PYTHON_LABELS = ("", "python", "py", "python3")
# "3 words that start with q", "at least 10 words in all capital letters": a count of some of the answer's words,
# not its length ("a story of at most 200 words in all caps" is its length).
_SOME_WORDS_AFTER_RE = re.compile(r"\s+(?:that\s+(?:start|starts|begin|begins|end|ends|rhyme)|starting\s+with|"
                                  r"beginning\s+with|ending\s+(?:with|in))\b", re.I)
# How a task names letters in capitals ("caps", "capital letters", "upper-case", "block capitals").
CAPS_PHRASE = r"(?:caps|capitals|capital\s+letters|upper[\s-]?case(?:\s+letters)?|block\s+capitals)"
_CAPS_AFTER_RE = re.compile(r"\s+(?:(?:written\s+)?in\s+)?(?:all\s+|full\s+)?" + CAPS_PHRASE + r"\b", re.I)
MAX_CAPS_WORDS = 100
"""A count of words in capitals above this is the piece's length ("150 words in all caps"), not a count of some."""
# "a story of at most 200 words in all caps", "in 50 words in capitals": the piece's length, its case for all of it.
LENGTH_BEFORE_RE = re.compile(r"\b(?:of|in)\s+$", re.I)
_CAPS_BEFORE_RE = re.compile(r"\b(?:all[\s-]?)?" + CAPS_PHRASE + r"\s+(?:for|on)\s+$", re.I)
_HAVE_BEFORE_RE = re.compile(r"\b(?:use|uses|using|include|includes|including|contain|contains|containing|have|has|"
                             r"having)\b[^.!?\n]*$", re.I)


def some_words(text: str, start: int, end: int) -> bool:
    """Whether the word count at ``text[start:end]`` ("at least 10 words") counts some of the answer's words (those
    that start with q, those in capitals) rather than the answer's length."""
    after = text[end:]
    if _SOME_WORDS_AFTER_RE.match(after):
        return True
    # "use at least 10 words in all caps", "No more than 3 words in all caps.": words in capitals counted, unless
    # too many to be some ("at least 150 words in all caps" is the piece's length)
    counts = [int(n) for n in re.findall(r"\d+", text[start:end])]
    if counts and max(counts) > MAX_CAPS_WORDS:
        return False
    before = text[max(0, start - 60):start]
    if _CAPS_BEFORE_RE.search(before):
        return True  # "all caps for at least 4 words"
    return bool(_CAPS_AFTER_RE.match(after) and (_HAVE_BEFORE_RE.search(before) or not LENGTH_BEFORE_RE.search(before)))


_FENCE_RE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.M | re.S)
_WORD_RE = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")


def prose_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) spans of ``text`` outside its fenced code blocks, as split_code sees them."""
    spans, pos = [], 0
    for m in _FENCE_RE.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    return [*spans, (pos, len(text))]


def split_code(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(the prose with fenced blocks removed, [(label, code)] of each fenced block). An unclosed fence runs
    to the end (a reply cut at the token budget)."""
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE_RE.finditer(text)]
    return _FENCE_RE.sub("\n", text), blocks


def words(text: str) -> list[str]:
    """Words of the prose: letters/digits runs, with inner apostrophes and hyphens ("don't", "long-term")."""
    return _WORD_RE.findall(split_code(text)[0])


def strip_code_fences(text: str) -> str:
    """The code inside the first Markdown fence; without a fence, the text less any prose around the code."""
    match = re.search(r"```(?:python|py|Python)?[ \t]*\n(.*?)(?:```|\Z)", text, re.DOTALL)
    return match.group(1).strip("\n") if match else trim_prose(text.strip("\n"))


def trim_prose(text: str) -> str:
    """The longest compiling run of lines after dropping up to MAX_PROSE_LINES lines of prose at either end,
    so "Here is the code:" before the code does not break it.

    Compiles only, never runs. Returns the text unchanged when nothing compiles (the syntax error is then
    shown to the model). Prose in the middle of the code is deliberately not handled.
    """
    lines = text.splitlines()
    n = len(lines)
    candidates = [(start, end) for start in range(min(n, MAX_PROSE_LINES + 1))
                  for end in range(n, max(start, n - MAX_PROSE_LINES - 1), -1)]
    for start, end in sorted(candidates, key=lambda c: c[0] - c[1]):  # longest first
        chunk = "\n".join(lines[start:end])
        if chunk.strip() and _compiles(chunk):
            return chunk
    return text


def _compiles(code: str) -> bool:
    try:
        compile(code, "<step>", "exec")  # compiles only; nothing runs
    except (SyntaxError, ValueError):
        return False
    return True
