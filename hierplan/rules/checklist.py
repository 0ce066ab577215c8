"""The model's reading of a task's requirements about its answer, made checkable.

The read_requirements node asks the model, under the grammar, for a checklist (schema.Checklist): each item the
task's own words (``quote``), a requirement kind and its arguments. A small model misreads now and then, so an
item is kept only when the task bears it out (``grounded``): its quote is the task's words, its number is written
in the quote, its word or phrase is in the task, and the quote speaks of that kind of thing (a word count speaks
of words; a forbidden word is said with a negation). A kept item becomes the same instruction dict the regex
readers give (rules.instructions), so one set of checkers checks both.

The regex readers go first and are cheap; the model's items fill what they missed (``merge``): an item of a kind
the regexes already read is dropped, so the two never disagree on one instruction.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from hierplan.rules.form import read_caps_words, request_beside
from hierplan.rules.numbers import NUMBER_WORDS_RE, word_number
from hierplan.rules.text import some_words

# How much of a quote's words must be the task's for a paraphrased quote to count as the task's words.
QUOTE_WORDS_IN_TASK = 0.8
MIN_END_CHARS = 2
MAX_WORD_ITEM_WORDS = 4
MENTION_REACH = 5
"""A term to hold stands at most this many words from the words that ask for it ("mention", "use", "appear")."""
READ_BY_MODEL = "model"

_NEGATION_RE = re.compile(r"\b(?:not|no|never|without|avoid\w*|refrain\w*|exclude\w*|forbid\w*|ban\w*|nor)\b|n't\b",
                          re.I)
# Words that say what a quote is about, per kind: a quote that names none of them is not that requirement.
CUES: dict[str, tuple[str, ...]] = {
    "lowercase": ("lower", "capital", "caps", "upper"),
    "uppercase": ("upper", "capital", "caps", "block letters"),
    "no_commas": ("comma",),
    "word_count": ("word",),
    "sentence_count": ("sentence",),
    "bullet_count": ("bullet", "point", "list", "item", "dash"),
    "numbered_count": ("number", "step", "list", "item"),
    "heading_count": ("heading", "header", "section", "#"),
    "highlight_count": ("highlight", "italic", "asterisk", "emphas", "bold", "*"),
    "placeholder_count": ("placeholder", "bracket", "["),
    "title": ("<<", "angle"),
    "postscript": ("p.s", "ps", "postscript", "post script"),
    "starts_with": ("start", "begin", "open", "first"),
    "ends_with": ("end", "finish", "close", "last", "conclu", "final", "sign off"),
    "forbidden_word": (),
    "required_word": ("include", "use", "using", "mention", "contain", "keyword", "the word", "the words", "term",
                      "phrase", "appear"),
    "word_frequency": ("time", "once", "twice"),
    "letter_frequency": ("letter",),
    "caps_word_count": ("capital", "caps", "upper", "block letters"),
    "json": ("json",),
    "quoted": ("quot",),
    "repeat_request": ("repeat", "copy", "copied", "paste", "echo", "restate", "reproduce", "write out", "type out",
                       "writing out", "typing out"),
}
# Kinds that take no number, where the model's stray "number" is ignored.
UNCOUNTED = frozenset({"repeat_request"})
# How a request to repeat the task says it wants the words unchanged ("word for word", "exactly as I typed it").
_VERBATIM_RE = re.compile(r"\b(?:word\s+(?:for|by)\s+word|verbatim|exactly|unchanged|without\s+chang\w*|as\s+it\s+is|"
                          r"as\s+(?:I\s+)?(?:written|wrote|typed|asked))\b", re.I)
# Kinds whose quote must say "not ...", and kinds a negation of their subject turns into something else.
NEGATED = frozenset({"forbidden_word", "no_commas"})
NOT_NEGATED = frozenset({"uppercase", "required_word", "json", "quoted", "title", "highlight_count",
                         "placeholder_count", "postscript", "repeat_request"})
# The kinds whose cues name a mark or a case of the answer: a term to mention that holds one ("italicize",
# "bold") is that instruction's own word, not something the answer must say.
_MARK_KINDS = ("lowercase", "uppercase", "no_commas", "highlight_count", "placeholder_count", "json", "quoted")
# What asks for a term: a verb or noun before it ("mention", "the word"; "use" only before "the word" or a quote:
# "use the oven" asks for no word), or "appear" after it.
_TERM_CUE_RE = re.compile(r"(?<![\w])(?:(?P<after>mention|include|contain|keyword|term|phrase|words?|"
                          r"us(?:e|es|ing)(?=\s+(?:the\s+)?(?:key\s*)?(?:words?|terms?|phrases?|keywords?)\b|\s*[\"'])"
                          r")|(?P<before>appear))", re.I)
# A term offered among others ("one of these sentences: ...", "red or blue") is no term the answer must hold.
_CHOICE_RE = re.compile(r"\bone\s+of\b|\beither\b|\bor\b", re.I)
NEGATION_REACH = 3
"""How many words a negation may stand before what it negates ("do not use any capital letters")."""
_WORDS_RE = re.compile(r"\bwords\b", re.I)
# "fewer than 4 words in capitals": a case for some words, not for the whole answer
_COUNTED_WORDS_RE = re.compile(r"(?:\d+|" + NUMBER_WORDS_RE.pattern + r")\s+(?:[\w'-]+\s+)?words?\b", re.I)
_POSTSCRIPT_MARKER_RE = re.compile(r"(?:p\.?\s*)+s\b\.?", re.I)
# "less than 5" is at most 4; "more than 5" at least 6.
_STRICT_BELOW_RE = re.compile(r"\b(?:less|fewer)\s+than\b|\bunder\b|\bbelow\b", re.I)
_STRICT_ABOVE_RE = re.compile(r"\bmore\s+than\b|\bover\b|\babove\b|\bexceed", re.I)

def _norm(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    return " ".join(text.lower().split())


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", text.lower())


def in_task(phrase: str, task: str) -> bool:
    """``phrase`` is written in the task (case, spacing and curly quotes aside)."""
    return bool(phrase.strip()) and _norm(phrase) in _norm(task)


def quote_in_task(quote: str, task: str) -> bool:
    """The quote is the task's words: written there, or nearly all of its words are the task's."""
    if in_task(quote, task):
        return True
    words, task_words = _words(quote), set(_words(task))
    return len(words) >= 3 and sum(w in task_words for w in words) >= QUOTE_WORDS_IN_TASK * len(words)


def says_number(quote: str, n: int) -> bool:
    """``n`` is written in the quote, in digits or in words (rules.numbers reads the words)."""
    if str(n) in re.findall(r"\d+", quote):
        return True
    words = [word_number(m.group(0)) for m in NUMBER_WORDS_RE.finditer(quote)]
    return n in words or (n == 1 and re.search(r"\b(?:a|an|single|once)\b", quote, re.I) is not None) or (
        n == 2 and re.search(r"\b(?:twice|pair)\b", quote, re.I) is not None)


def _bounds(bound: str | None, n: int, quote: str, default: str | None) -> dict[str, int | None] | None:
    """{"min", "max"} for the stated number: "at most 5" (None, 5); read stricter when the quote says "less than"
    or "more than". None when no bound is stated and the kind has no default."""
    bound = bound or default
    if bound is None:
        return None
    if bound == "at most":
        return {"min": None, "max": n - 1 if _STRICT_BELOW_RE.search(quote) else n}
    if bound == "at least":
        return {"min": n + 1 if _STRICT_ABOVE_RE.search(quote) else n, "max": None}
    return {"min": n, "max": n}


def _negated(quote: str, subjects: Iterable[str]) -> bool:
    """A negation stands before one of ``subjects`` in the quote, at most NEGATION_REACH words before it."""
    for subject in subjects:
        pattern = (rf"(?:\b(?:not|no|never|without|avoid\w*|refrain\w*|exclude\w*|forbid\w*|nor)\b|n't)"
                   rf"\W+(?:[\w']+\W+){{0,{NEGATION_REACH}}}?{re.escape(subject.lower())}")
        if re.search(pattern, quote.lower()):
            return True
    return False


def _speaks_of(kind: str, quote: str, text: str = "") -> bool:
    """The quote names the kind's subject (CUES) and carries a negation exactly where the kind needs one."""
    low = quote.lower()
    cues = CUES[kind]
    if cues and not any(_cue_at(c, low) is not None for c in cues):
        return False
    if kind in NEGATED:
        return bool(_NEGATION_RE.search(quote))
    if kind == "lowercase":
        return "lower" in low or _negated(quote, ("capital", "caps", "upper"))
    if kind in NOT_NEGATED:
        return not _negated(quote, cues or ((text,) if text else ()))
    return True


def _cue_at(cue: str, low: str) -> int | None:
    """Where the cue starts a word of the lowercased quote ("use" in "use it", "used", not in "reuse", "pauses" or
    "house"; "end" not in "friend"); a cue of marks ("*", "<<") anywhere. None when it is not there."""
    m = re.search((r"(?<![\w])" if cue[0].isalnum() else "") + re.escape(cue), low)
    return None if m is None else m.start()


def _near_cue(word: str, quote: str) -> bool:
    """The term stands in the quote where a cue asks for it: within MENTION_REACH words after "mention", "include",
    "the word", "use the word" ..., or before "appear" ("the word 'tide' must appear"); not elsewhere in a sentence
    that asks for something else ("I want to buy a used guitar", "a note explaining how to use the machine", "a
    writing challenge: the letter e has to appear fewer than 25 times")."""
    low = _norm(quote)
    at = low.find(_norm(word))
    if at < 0:
        return False
    first = len(_words(low[:at]))
    last = first + max(1, len(_words(word))) - 1
    for m in _TERM_CUE_RE.finditer(low):
        cue_at = len(_words(low[:m.start()]))
        if m.group("after") and 0 < first - cue_at <= MENTION_REACH:
            return True
        if m.group("before") and 0 < cue_at - last <= MENTION_REACH:
            return True
    return False


def _counts_some_words(quote: str, task: str) -> bool:
    """The quote's word count is of some words ("has at least 10 words in capitals"), read where the quote stands in
    the task, so that the words before it count."""
    at = task.lower().find(quote.lower())
    text, offset = (task, at) if at >= 0 else (quote, 0)
    return any(some_words(text, offset + m.start(), offset + m.end()) for m in _WORDS_RE.finditer(quote))


def grounded(item: dict[str, Any], task: str) -> dict[str, Any] | None:
    """The checker's instruction for one model-read item (schema.Requirement as a dict), or None when the task
    does not bear it out."""
    kind, quote = item.get("kind"), (item.get("quote") or "").strip()
    n, text = item.get("number"), (item.get("text") or "").strip()
    if kind not in CUES or not quote_in_task(quote, task) or not _speaks_of(kind, quote, text):
        return None
    if n is not None and kind not in UNCOUNTED and not says_number(quote, n):
        return None
    found = _instruction(kind, n, item.get("bound"), text, quote, task)
    return None if found is None else {**found, "read_by": READ_BY_MODEL, "quote": quote}


def _instruction(kind: str, n: int | None, bound: str | None, text: str, quote: str,
                 task: str) -> dict[str, Any] | None:
    if kind in ("lowercase", "uppercase") and _COUNTED_WORDS_RE.search(quote):
        return None  # "at least 10 words in all capital letters" is no case for the whole answer
    simple = {"lowercase": "lowercase", "uppercase": "uppercase", "no_commas": "no_commas", "json": "json",
              "quoted": "quoted", "title": "title"}
    if kind in simple:
        return {"kind": simple[kind]}
    counts = {"word_count": ("words", None), "sentence_count": ("sentences", None),
              "caps_word_count": ("caps_words", None),
              "bullet_count": ("bullets", "exactly"), "numbered_count": ("numbered", "exactly"),
              "heading_count": ("headings", "exactly")}
    if kind in counts:
        if kind in ("word_count", "caps_word_count") and (caps := read_caps_words(quote)):
            return caps  # "all-caps words: fewer than 3 of them" counts words in capitals, read as the patterns do
        if kind == "caps_word_count" or _counts_some_words(quote, task):
            return None  # "10 words that start with q" counts some words, not the answer's length
        name, default = counts[kind]
        spec = None if n is None else _bounds(bound, n, quote, default)
        return None if spec is None else {"kind": name, **spec}
    if kind == "repeat_request":
        return _repeat(quote, task)
    if kind in ("highlight_count", "placeholder_count"):
        name = "highlights" if kind == "highlight_count" else "placeholders"
        return {"kind": name, "min": max(1, n or 1)}
    if kind == "postscript":
        marker = _POSTSCRIPT_MARKER_RE.search(text or quote)
        if marker is None or not in_task(marker.group(0).strip(), task):
            return None
        return {"kind": "postscript", "marker": re.sub(r"\s", "", marker.group(0)).rstrip(".").upper() + "."}
    if not text or not in_task(text, task):
        return None
    if kind == "starts_with":
        return {"kind": "begins_with", "text": text}
    if kind == "ends_with":
        return {"kind": "ends_with", "text": text} if len(re.findall(r"\w", text)) >= MIN_END_CHARS else None
    if kind == "letter_frequency":
        letter = text.strip("'\"").lower()
        if len(letter) != 1 or not letter.isalpha() or n is None:
            return None
        spec = _bounds(bound, n, quote, "at least")
        return {"kind": "letter_times", "letter": letter, **spec}
    word = text.strip("'\"\u201c\u201d")
    if not word or len(word.split()) > MAX_WORD_ITEM_WORDS:
        return None
    if len(word) == 1 and re.search(r"\bletter\s+['\"\u201c\u2018]?" + re.escape(word) + r"\b", task, re.I):
        return None  # "the letter g at least 8 times" (in the quote or elsewhere) is a letter to count, not a word
    if kind == "forbidden_word":
        return {"kind": "avoid_word", "word": word}
    if kind == "required_word":
        if _CHOICE_RE.search(quote) or any(c in word.lower() for k in _MARK_KINDS for c in CUES[k] if c.isalpha()):
            return None
        if not _near_cue(word, quote):
            return None
        return {"kind": "mentions", "term": word}
    if kind == "word_frequency" and n is not None:
        return {"kind": "word_times", "word": word, **_bounds(bound, n, quote, "at least")}
    return None


def _repeat(quote: str, task: str) -> dict[str, Any] | None:
    """The request repeated first, where the quote asks for it unchanged and stands in the task as written: the
    request is the text beside the quote's paragraph (rules.form.request_beside)."""
    found = re.search(r"\W+".join(re.escape(w) for w in re.findall(r"\w+", quote)), task, re.I)
    if found is None or not _VERBATIM_RE.search(quote):
        return None
    request = request_beside(task, found.start(), found.end())
    return None if request is None else {"kind": "repeat_request", "text": request}


# Kinds that say the same thing about one answer: a model item is dropped when the regexes read any of its group.
_SAME_SUBJECT = ({"lowercase", "uppercase"}, {"bullets", "numbered", "items"})


def _key(instruction: dict[str, Any]) -> tuple:
    kind = instruction["kind"]
    group = next((tuple(sorted(g)) for g in _SAME_SUBJECT if kind in g), (kind,))
    word = instruction.get("word") or instruction.get("term") or instruction.get("letter")
    return (group, word.lower()) if isinstance(word, str) else (group,)


def merge(by_rule: Iterable[dict[str, Any]], by_model: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The regex readers' instructions, then the model's grounded ones that say something the regexes did not
    (another kind, or another word of a word kind), each once. Where the answer is asked in a language other than
    English, a thing to mention written in lowercase English words is not checked: the answer says it in its own
    language ("cover the countertops" in a message to be written in Polish); a name stays."""
    kept = list(by_rule)
    seen = {_key(i) for i in kept}
    for instruction in by_model:
        if _key(instruction) not in seen:
            kept.append(instruction)
            seen.add(_key(instruction))
    if any(i["kind"] == "language" and i.get("code") != "en" for i in kept):
        kept = [i for i in kept if i["kind"] != "mentions" or not i["term"][:1].islower()]
    return kept


def _count(spec: dict[str, Any], noun: str) -> str:
    lo, hi = spec.get("min"), spec.get("max")
    if lo is not None and hi is not None:
        return f"exactly {lo} {noun}" if lo == hi else f"{lo} to {hi} {noun}"
    return f"at least {lo} {noun}" if lo is not None else f"at most {hi} {noun}"


_PLAIN = {"lowercase": "only lowercase letters", "uppercase": "only capital letters", "no_commas": "no commas",
          "quoted": "the whole answer wrapped in double quotation marks", "json": "the whole answer as valid JSON",
          # said as the piece's first line: "a title wrapped in << and >>" alone drew many drafts of the title only
          "title": "a title wrapped in << and >> on its own first line, then the whole piece below it",
          "two_responses": "two different responses separated by ******",
          "ends_with_question": "the last line a question", "python_block": "the code in a ```python block",
          "no_repeats": "no line said twice", "told_back": "none of the task's instructions said back"}
_COUNTED = {"bullets": "bullet points", "numbered": "numbered items", "items": "list items", "headings":
            "Markdown headings", "words": "words", "sentences": "sentences"}


def describe(instruction: dict[str, Any]) -> str:
    """One requirement in a few plain words, for the writer and for a person reading the plan."""
    kind = instruction["kind"]
    if kind in _PLAIN:
        return _PLAIN[kind]
    if kind in _COUNTED:
        return _count(instruction, _COUNTED[kind])
    if kind in ("highlights", "placeholders"):
        what = "parts highlighted with *single asterisks*" if kind == "highlights" else "placeholders like [name]"
        return f"at least {instruction['min']} {what}"
    if kind == "word_times":
        return f"the word '{instruction['word']}' {_count(instruction, 'times')}"
    if kind == "letter_times":
        return f"the letter '{instruction['letter']}' {_count(instruction, 'times')}"
    if kind == "caps_words":
        return _count(instruction, "words in ALL CAPS")
    texts = {"avoid_word": "never the word '{word}'", "mentions": "mentions {term}", "begins_with": "begins with "
             "'{text}'", "ends_with": "ends with exactly '{text}'", "heading_text": "a heading '{text}'",
             "postscript": "a postscript starting with {marker}", "repeat_request": "the request repeated first, "
             "word for word", "paragraphs": "exactly {count} paragraphs separated by ***",
             "sections": "{count} sections, each starting with '{marker} 1', '{marker} 2', ...",
             "language": "all of it in {language}"}
    return texts[kind].format(**instruction) if kind in texts else kind.replace("_", " ")
