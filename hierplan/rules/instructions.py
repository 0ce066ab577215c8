"""The explicit, checkable instructions a task states about its answer's form, read from its words: how many
bullet points, numbered steps or headings, how many words, words to avoid, how to begin and end, a Python code
block, things to mention; with the form instructions of rules.form. An answer is checked against them in
rules.checks.

Read from the task's words by English patterns ("exactly 5 bullet points", "under 120 words", "do not use the word
'simply'"), a cheap first reader: only instructions a program can check are read, and what the patterns do not
recognise is not checked here. A small model follows a stated count or limit unreliably, and a program counts
exactly (the final answer is revised against what fails: the check_instructions and reviser nodes).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

# The text views (code fences, words) are shared with the evaluation, so a count here and there means the same.
from hierplan.config import MIN_LIST_ITEMS
from hierplan.rules.form import QUOTED, read_form
from hierplan.rules.language import read_language
from hierplan.rules.numbers import NUMBER_WORDS_PATTERN, RANGE_TO as _TO, word_number
from hierplan.rules.pieces import VERSE_PIECE_RE
from hierplan.rules.told_back import sentences
from hierplan.rules.text import some_words
from hierplan.rules.text import words as prose_words

_N = r"(\d{1,4}|" + NUMBER_WORDS_PATTERN + r")"

# List items: which kind each noun asks for ("items" is either kind).
_LIST_NOUNS = r"(bullet[\s-]?points?|bullets?|numbered\s+(?:steps?|items?|points?|list\s+items?)|steps?|items?|" \
              r"points?|questions?|tips?|ideas?|reasons?|examples?|headings?|sections?)"
_BOUND = r"(exactly|at\s+least|at\s+most|no\s+more\s+than|no\s+fewer\s+than|no\s+less\s+than|up\s+to|between|" \
         r"a\s+maximum\s+of|a\s+minimum\s+of)?"
# Up to two words that describe the list noun ("3 short warm-up questions", "5 beginner-level tips"): not a
# word that joins or ends a phrase, and not a plural noun, which would be the thing counted ("2 paragraphs with tips"
# counts paragraphs, not tips).
_FUNCTION_WORDS = ("a|an|the|of|and|or|nor|but|for|to|in|on|at|by|with|from|per|about|than|that|which|who|each|every|"
                   "all|any|this|these|those|their|your|our|my|his|her|its|is|are|was|were|be|been|has|have|had|do|"
                   "does|did|as|if|so|not|no|into|over|under|after|before|between|among|within|without|times|more|"
                   "less|fewer|most|least")
_DESCRIBER = r"(?!(?:" + _FUNCTION_WORDS + r")\b)(?![a-z'-]*[^su\W]s\b)[a-z][a-z'-]*"
_COUNT_RE = re.compile(_BOUND + r"\s*\b" + _N + r"(?:(?:" + _TO + r"|\s*(?:and|or)\s*)" + _N + r")?\s+"
                       r"(?:" + _DESCRIBER + r"\s+){0,2}?" + _LIST_NOUNS + r"\b", re.I)
# "numbered steps (at least 4, at most 7)"
_PAREN_COUNT_RE = re.compile(_LIST_NOUNS + r"\s*\(\s*(?:at\s+least\s+" + _N + r")?\s*,?\s*(?:at\s+most\s+" + _N
                             + r")?\s*\)", re.I)
_WORDS_MAX_RE = re.compile(r"\b(?<!no )(under|fewer\s+than|less\s+than|at\s+most|no\s+more\s+than|up\s+to|within|"
                           r"a\s+maximum\s+of|maximum|max\.?)\s+" + _N + r"\s+words\b", re.I)
_WORDS_MIN_RE = re.compile(r"\b(?<!no )(at\s+least|more\s+than|over|no\s+fewer\s+than|no\s+less\s+than|a\s+minimum\s+of|"
                           r"minimum)\s+" + _N + r"\s+words\b", re.I)
_WORDS_RANGE_RE = re.compile(r"\b" + _N + r"(?:" + _TO + r"|\s*and\s*)" + _N + r"\s+words\b", re.I)
_BEGIN_RE = re.compile(r"\b(?:begin|start|open)s?\s+(?:it\s+|(?:the|your)\s+\w+\s+)?with\s+(?:a\s+line\s+|the\s+"
                       r"line\s+|the\s+words?\s+|a\s+)?" + QUOTED, re.I)
_END_QUESTION_RE = re.compile(r"\bend(?:s|ing)?\s+(?:it\s+|(?:the|your)\s+\w+\s+)?(?:by\s+asking|with\s+a\s+"
                              r"question)", re.I)
_PYTHON_BLOCK_RE = re.compile(r"```\s*python|\bpython\s+(?:code\s+)?block\b|\bcode\s+block\b.*\bpython\b|"
                              r"\bpython\b.*\bcode\s+block\b", re.I | re.S)
# "cover" as a verb, not the noun of "a cover letter" or "the back-cover blurb"; "includes" asked, not said of
# something ("two all-caps words at most, and that includes acronyms like FYI"; "a memo that includes the budget"
# asks for it)
_MENTION_RE = re.compile(r"\b(?:mention|mentions|mentioning|include|(?<!and that )(?<!, which )includes|including|"
                         r"(?<!-)cover(?!\s+letters?\b)|covering|"
                         # "use the word 'total'", not "use the oven"
                         r"(?:use|uses|using)(?=\s+(?:the\s+)?(?:key\s*)?(?:words?|terms?|phrases?|keywords?)\s*:?\s*"
                         r"['\"\u201c\u2018]))\s+"
                         r"(?:both\s+|all\s+of\s+)?([^.;:!?]+)", re.I)
# Checked on every answer, whatever the task says: the same lines said twice.
ALWAYS: tuple[dict[str, Any], ...] = ({"kind": "no_repeats"},)


# A count of sections to highlight, italicise or bold is of marked passages, not of headings.
_MARKED_BEFORE_RE = re.compile(r"(?:\b(?:highlight|italici[sz]e|emphasi[sz]e|bold|mark)\w*|"
                               r"\b(?:asterisks?|stars?)\s+(?:around|on))\b[^.!?\n]*$", re.I)
_EACH_RE = re.compile(r"\beach\b", re.I)
_PER_PART_AFTER_RE = re.compile(r"\s*(?:each|apiece|per\s+\w+|(?:in|on|for|about|of)\s+(?:each|every)|a\s+(?:day|week|"
                                r"month|year|section|paragraph|person|chapter|topic))\b", re.I)
# A checklist or list with no count given is still a list (of config.MIN_LIST_ITEMS items at least).
_LIST_RE = re.compile(r"\b(?:check\s?list|bulleted\s+list|numbered\s+list|list\s+of)\b", re.I)
LIST_KINDS = ("bullets", "numbered", "items")
# "include the (key)words / terms / phrases: ..." names what follows, not a thing to mention itself.
# ("the word count" is a thing to mention: a singular noun introduces a quoted word, or a word that is not one of
# the nouns "word" makes a compound with: "include the word whiskers")
_LIST_NOUN_RE = re.compile(r"^\s*(?:the\s+)?(?:following\s+)?(?:(?:key\s*)?(?:words|terms|phrases)|keywords\b|"
                           r"(?:key\s*)?(?:word|term|phrase)(?=\s*['\"\u201c\u2018])|"
                           r"(?:key\s*)?word(?=\s+(?!(?:counts?|limits?|lengths?|order|choices?|play|games?|"
                           r"problems?|clouds?|lists?|banks?|of)\b)\w))\s*", re.I)
# Where the task says the term goes ("... in your answer") or how ("by name"): no part of the term.
_WHERE_RE = re.compile(r"\s+(?:by\s+(?:its\s+|their\s+|full\s+)?names?\b|"
                       r"(?:in|into|within|throughout|somewhere\s+in|anywhere\s+in)\s+(?:your|the|this|my)\s+"
                       r"(?:\w+\s+)?(?:answer|reply|response|text|output|writing|essay|post|story|poem|piece|letter|"
                       r"email|summary)\b|(?:somewhere|anywhere)(?:\s+in\s+(?:it|there|\w+))?\s*$|in\s+(?:it|there)\s*$).*$",
                       re.I | re.S)
_MENTION_VERB_RE = re.compile(r"^\s*(?:also\s+)?(?:mention|include|cover)\w*\s+", re.I)
# An example of the form ("placeholders like [name]", "for example [address]") or the placeholders themselves (read
# by rules.form): no term to mention.
_EXAMPLE_RE = re.compile(r"^\s*(?:like|e\.?g\.?|for\s+(?:example|instance)|such\s+as|say)\b|\[[^\]]*\]|"
                         r"\b(?:placeholders?|blanks?|square\s+brackets)\b", re.I)
# A phrase after "mention ... and" that is the next instruction, not a thing to mention.
_NOT_A_TERM_RE = re.compile(r"^(?:keep|make|write|use|give|end|begin|start|add|avoid|put|do|be|stay|limit|"
                            # a clause of its own after a comma: "..., I've read it so often"
                            r"i|i'm|i've|i'd|we|we're|you|it|it's|they|he|she)\b|\d", re.I)
_HEADING_TEXT_RE = re.compile(r"['\"\u201c\u2018](#{1,6}\s+[^'\"\u201d\u2019]+)['\"\u201d\u2019]")
_STOPWORDS = frozenset("a an the of in on at to for and or with its their your our his her this that these those "
                       "both each every all some any how what why who which when where new".split())


def _number(text: str | None) -> int | None:
    return word_number(text)


def _list_kind(noun: str) -> str:
    noun = noun.lower()
    if noun.startswith(("bullet", "numbered")):
        return "bullets" if noun.startswith("bullet") else "numbered"
    return "headings" if noun.startswith(("heading", "section")) else "items"


def _count_spec(bound: str | None, low: int, high: int | None) -> tuple[int | None, int | None]:
    bound = re.sub(r"\s+", " ", (bound or "").lower())
    if high is not None:
        return low, high
    if bound in ("at least", "no fewer than", "no less than", "a minimum of"):
        return low, None
    if bound in ("at most", "no more than", "up to", "a maximum of"):
        return None, low
    return low, low  # "exactly 5" and a plain "5 bullet points" alike


def _lengths(pattern: re.Pattern, task: str) -> Iterable[re.Match]:
    """The word counts ``pattern`` finds in ``task`` that are the answer's length, not a count of some of its words
    ("10 words in all capital letters": rules.text.some_words)."""
    return (m for m in pattern.finditer(task) if not some_words(task, m.start(), m.end()))


def read_instructions(task: str) -> list[dict[str, Any]]:
    """The checkable instructions in ``task`` as JSON-safe dicts ({"kind", ...}), in a fixed order (ALWAYS is
    not among them: revise adds ``always(task)``)."""
    found: list[dict[str, Any]] = []
    per_section = []
    for m in _COUNT_RE.finditer(task):
        low, high = _number(m.group(2)), _number(m.group(3))
        if low is None:
            continue
        lo, hi = _count_spec(m.group(1), low, high)
        spec = {"kind": _list_kind(m.group(4)), "min": lo, "max": hi}
        if _PER_PART_AFTER_RE.match(task, m.end()):
            continue  # "2 tips per day", "3 examples for each": a count per part the task does not number
        if _MARKED_BEFORE_RE.search(task[max(0, m.start() - 40):m.start()]):
            continue  # "highlight at least 3 sections", "put asterisks around the 2 steps": passages to mark
            # (rules.form), not headings or a list's count
        # "two sections ..., each with exactly 3 bullet points": counted per section, so in all once they are known
        (per_section if _EACH_RE.search(task[max(0, m.start() - 24):m.start()]) else found).append(spec)
    for m in _PAREN_COUNT_RE.finditer(task):
        lo, hi = _number(m.group(2)), _number(m.group(3))
        if lo is not None or hi is not None:
            found.append({"kind": _list_kind(m.group(1)), "min": lo, "max": hi})
    if not any(f["kind"] == "headings" for f in found) and len(headings := _HEADING_TEXT_RE.findall(task)) > 0:
        found.append({"kind": "headings", "min": len(headings), "max": None})
    for heading in _HEADING_TEXT_RE.findall(task):
        found.append({"kind": "heading_text", "text": heading.strip()})
    sections = next((f["min"] for f in found if f["kind"] == "headings" and f["min"] == f["max"]), None)
    if sections:
        found += [{**s, "min": s["min"] and s["min"] * sections, "max": s["max"] and s["max"] * sections}
                  for s in per_section if s["kind"] != "headings"]
    if not any(f["kind"] in LIST_KINDS for f in found) and _LIST_RE.search(task):
        found.append({"kind": "items", "min": MIN_LIST_ITEMS, "max": None})
    for m in _lengths(_WORDS_RANGE_RE, task):
        found.append({"kind": "words", "min": _number(m.group(1)), "max": _number(m.group(2))})
    for m in _lengths(_WORDS_MAX_RE, task):
        n = _number(m.group(2))
        strict = m.group(1).lower().split()[0] in ("under", "fewer", "less")
        found.append({"kind": "words", "min": None, "max": n - 1 if strict else n})
    for m in _lengths(_WORDS_MIN_RE, task):
        n = _number(m.group(2))
        found.append({"kind": "words", "min": n + 1 if m.group(1).lower() in ("more than", "over") else n,
                      "max": None})
    if m := _BEGIN_RE.search(task):
        raw = next(g for g in m.groups() if g)
        text = raw.replace("\u2026", "...").split("...")[0].strip()
        # 'begin with " and end with "': quote marks named on their own, not a text between them
        if text and raw == raw.strip():
            found.append({"kind": "begins_with", "text": text})
    if _END_QUESTION_RE.search(task):
        found.append({"kind": "ends_with_question"})
    if _PYTHON_BLOCK_RE.search(task):
        found.append({"kind": "python_block"})
    for m in _MENTION_RE.finditer(task):
        if re.search(r"(?:\bnot|\bnever|\bwithout|n't)\s+$", task[:m.start()]):
            continue
        found += [{"kind": "mentions", "term": t} for t in _terms(m.group(1))]
    if language := read_language(task):
        found.append(language)
    form = read_form(task)
    # a word the task counts ("use the word 'plan' two times at most") is the count's, not a term to mention
    counted = {f["word"].lower() for f in form if f["kind"] == "word_times"}
    found = [f for f in found if f["kind"] != "mentions" or f["term"].split()[0].lower() not in counted]
    return _unique(found + form)


def always(task: str, read: Iterable[dict[str, Any]] = ()) -> tuple[dict[str, Any], ...]:
    """The instructions checked on every answer (ALWAYS), as they hold for ``task``: in verse asked to be written
    (a song, a shanty, a poem) a refrain says its lines again by design, so only a loop is a repeat there; and where
    the task states requirements, its sentences that state them (read by the patterns, or holding the quote of one
    the model read) are not said back in the answer (rules.told_back), outside the phrases the task asks the answer
    to contain. ``read``: the requirements already read from the task (read_requirements' list)."""
    read = list(read)
    checked = ALWAYS
    if VERSE_PIECE_RE.search(task):
        checked = tuple({**i, "refrain": True} if i["kind"] == "no_repeats" else i for i in checked)
    quotes = [r["quote"].lower() for r in read if r.get("quote")]  # where the model read one
    # a sentence that only asks for things to mention is about the answer's content, which the answer may say
    said = [s for s in sentences(task) if any(i["kind"] != "mentions" for i in read_instructions(s))
            or any(q in s.lower() for q in quotes)]
    if said:
        asked = [i["text"] for i in read
                 if i["kind"] in ("repeat_request", "ends_with", "begins_with") and i.get("text")]
        checked = (*checked, {"kind": "told_back", "said": said, "asked": asked})
    return checked


def _unique(instructions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each instruction once (two phrasings of one instruction read the same), in the order first read."""
    seen: list[dict[str, Any]] = []
    for instruction in instructions:
        key = {**instruction, **({"word": instruction["word"].lower()} if "word" in instruction else {})}
        if key not in [{**s, **({"word": s["word"].lower()} if "word" in s else {})} for s in seen]:
            seen.append(instruction)
    return seen


def _terms(clause: str) -> list[str]:
    """'the planner, both executors (routing, inventory) and the memory store' -> its noun phrases; the noun that
    introduces a list ("the keywords 'x', 'y'") is not one of them."""
    parts = re.split(r",|\(|\)|\band\b|\bas\s+well\s+as\b|\bplus\b", clause)
    terms = []
    for part in (_WHERE_RE.sub("", _LIST_NOUN_RE.sub("", p, count=1)) for p in parts):
        if _EXAMPLE_RE.search(part):
            continue
        part = _MENTION_VERB_RE.sub("", part)  # "..., and mention the parking": the next thing to mention
        words = [w for w in prose_words(part) if w.lower() not in _STOPWORDS and len(w) > 2]
        if words and len(words) <= 4 and not _NOT_A_TERM_RE.search(part.strip()):
            terms.append(" ".join(words))
    return terms
