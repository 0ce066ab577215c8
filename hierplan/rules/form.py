"""Instructions about an answer's form, read from the task's words: the case of every letter, no commas, quotes
around the whole answer, the exact ending, JSON; and parts the answer must mark: a <<title>>, *highlighted*
sections, [placeholders], a postscript, paragraphs split by ***, numbered SECTION markers, two responses split by
******, sentence counts, how often a word or a letter appears.

Some are fixed by program with nothing lost (``fix_form``): lowercasing, uppercasing, removing commas, quoting,
appending the asked ending, wrapping the text as a JSON string. The request a task asks to be repeated first is put first. The others are checked (``form_problem``), and an
answer that breaks one is written anew by the model, told exactly what is wrong (the reviser node).

Only general English phrasings are read; nothing here knows any data set. What is not recognised is not checked.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hierplan.rules.text import split_code

NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"a": 1, "an": 1, "single": 1, "once": 1, "twice": 2, "thrice": 3})
_N = r"(\d{1,4}|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
_QUOTED = r"(?:\"([^\"]+)\"|\u201c([^\u201d]+)\u201d|'([^']+)')"
_WHOLE = r"(?:entire|whole|full)\s+(?:response|answer|reply|output|text|essay|letter|email|story|poem|post)"

_UPPER_RE = re.compile(
    rf"\b{_WHOLE}\b[^.!?]*?\b(?:in\s+)?(?:all\s+)?(?:capital\s+letters|upper\s?case(?:\s+letters)?|all\s+caps)\b"
    r"|\b(?:in|using|with|use)\s+(?:all\s+)?(?:capital\s+letters|upper\s?case\s+letters|all\s+caps)\s*(?:only)?\b"
    r"(?!\s+(?:to|that|appear|should|in\s+your|at\s+least|less|more|for))"
    r"|\bno\s+lower\s?case\s+letters\b|\ball\s+(?:in\s+)?capital\s+letters\b"
    r"|\bcapitali[sz]e\s+(?:all|every|each)\s+(?:of\s+)?(?:your\s+|the\s+)?(?:words|letters)\b", re.I)
# "words in all capital letters appear at most 10 times" is about some words, not the whole answer.
_SOME_WORDS_RE = re.compile(r"\bwords?\s+(?:with|in)\s+all\s+(?:capital\s+letters|caps)\b|\ball[- ]caps\s+words\b",
                            re.I)
_LOWER_RE = re.compile(
    r"(?<!no )\b(?:in\s+)?(?:all\s+)?lower\s?case(?:\s+letters|\s+english|\s+only)?\b(?!\s+letters\s+allowed)"
    r"|\bno\s+capitalization\b|\b(?:not|no|without)\b[^.]{0,60}?\b(?:capital\s+letters|capitali[sz]ed)\b"
    r"|\blowercased\b", re.I)
_NO_COMMAS_RE = re.compile(
    r"\b(?:no|without|never\s+use|not\s+(?:use|using|include)|don't\s+(?:use|include)|avoid(?:\s+using)?|"
    r"refrain\s+from\s+using)\s+(?:any\s+)?commas?\b|\bcommas?\s+(?:are|is)\s+not\s+(?:allowed|permitted)\b"
    r"|\b(?:not|no|never|without)\b(?:\s+[\w']+){0,5}?\s+commas?\b", re.I)
_QUOTED_RE = re.compile(r"\b(?:wrap|enclose|surround|put)\w*\s+[^.!?]{0,100}?\b(?:in|with|within|inside|by)\s+"
                        r"(?:a\s+pair\s+of\s+)?double\s+quot(?:ation\s*marks?|es)"
                        r"|\bdouble\s+quot(?:ation\s*marks?|es)\s+around\s+(?:your|the)\s+(?:entire|whole|full)", re.I)
_END_RE = re.compile(r"\b(?:end|finish|conclude)\w*\s+(?:(?:your|the|it|this)\s+(?:\w+\s+){0,2})?with\s+"
                     r"(?:the\s+|this\s+|a\s+)?(?:exact\s+|following\s+)*(?:phrase|sentence|words?|line)?\s*(?:of\s+)?"
                     r":?\s*" + _QUOTED + r"|\bvery\s+end\s+of\s+your\s+\w+\s+should\s+(?:read|be)\s+" + _QUOTED + r"|\b(?:end|finish|conclude)\w*\s+(?:(?:your|the|it|this)\s+(?:\w+\s+){0,2})?with\s*:\s*"
                     r"([^\n]+?[.!?])\s*(?:$|\n)|\bvery\s+last\s+(?:sentence|line)\s+of\s+your\s+\w+\s+should\s+be\s+"
                     + _QUOTED, re.I)
_JSON_RE = re.compile(r"\b(?:in|into|as|using)\s+(?:one\s+|a\s+|valid\s+)?json\b|\bjson\s+(?:format|block|object)\b",
                      re.I)
_TITLE_RE = re.compile(r"double\s+angular\s+brackets|<<[^<>\n]{1,60}>>", re.I)
_HIGHLIGHT_RE = re.compile(r"\bhighlight\w*\s+(?:at\s+least\s+|exactly\s+)?" + _N + r"\s+(?:\w+\s+){0,2}"
                           r"(?:sections?|parts?|phrases?|words?)\b|\b(?:at\s+least\s+)?" + _N + r"\s+(?:\w+\s+){0,2}"
                           r"(?:sections?\s+(?:highlighted|in\s+italics?)|(?:italic|highlighted)\s+(?:text\s+)?"
                           r"(?:sections?|parts?|phrases?))", re.I)
# "Highlight each section name ...: *section name*" with "5 or more sections" elsewhere in the task.
_HIGHLIGHT_EACH_RE = re.compile(r"\bhighlight\w*\s+(?:each|every|all)\b[^.]*\*", re.I)
_N_SECTIONS_RE = re.compile(r"\b(?:at\s+least\s+)?" + _N + r"\s+(?:or\s+more\s+)?(?:\w+\s+)?sections?\b", re.I)
_PLACEHOLDER_RE = re.compile(r"\b(?:at\s+least\s+)?" + _N + r"\s+placeholders?\b", re.I)
_POSTSCRIPT_RE = re.compile(r"\bpost\s?script\b|\bP\.\s?(?:P\.\s?)?S\b", re.I)
_MARKER_RE = re.compile(r"\bP\.\s?P\.\s?S\b\.?|\bP\.\s?S\b\.?")
_PARAGRAPHS_RE = re.compile(r"\b(?:exactly\s+)?" + _N + r"\s+(?:paragraphs?|sections?|parts?)\b", re.I)
_DIVIDER_RE = re.compile(r"\*\*\*|markdown\s+divider", re.I)
# "mark the beginning of each section with SECTION X", "Label each paragraph with PARAGRAPH X": the marker.
_SECTION_MARKER_RE = re.compile(r"\b(?:mark|label|begin|start|note|denote|with|as|called|titled)\w*\b[^.]{0,60}?"
                                r"\b([A-Z][A-Za-z]+)\s+X\b")
_SECTION_COUNT_RE = re.compile(r"\b" + _N + r"[\s-]+(?:\w+\s+){0,2}?(?:sections?|parts?|paragraphs?|days?)\b", re.I)
_TWO_RESPONSES_RE = re.compile(r"\btwo\s+(?:different\s+)?(?:responses|answers|versions)\b[^.]*|\*{6}", re.I)
_SENTENCES_RE = re.compile(r"\b(less\s+than|fewer\s+than|at\s+most|no\s+more\s+than|at\s+least|more\s+than|"
                           r"exactly)\s+(?:a\s+total\s+of\s+)?" + _N + r"\s+sentences\b", re.I)
_RELATION = r"(at\s+least|less\s+than|fewer\s+than|at\s+most|no\s+more\s+than|more\s+than)"
_TIMES = r"(?:" + _N + r"(?:\s+or\s+more)?\s+times?|(once|twice|thrice))"
_FREQUENCY_RE = re.compile(
    r"\b(?:word|keyword|term)s?\s+(?:" + _QUOTED + r"|([a-z]+))\s+(?:should\s+|must\s+|to\s+|will\s+)?(?:appears?\s+|"
    r"be\s+used\s+|occurs?\s+)?(?:for\s+)?" + _RELATION + r"?\s*" + _TIMES, re.I)
_LETTER_RE = re.compile(r"\bletters?\s+[\"']?([a-z])[\"']?\s+(?:should\s+|must\s+|to\s+)?(?:appears?\s+|occurs?\s+)?"
                        + _RELATION + r"\s+" + _TIMES, re.I)
# "Avoid using the following keywords: sleep, cook, feed", "The word "key" should not appear".
_AVOID_LIST_RE = re.compile(r"\b(?:avoid(?:\s+using)?|(?:do|should|must)\s+not\s+(?:use|include)|don't\s+(?:use|include)|"
                            r"without(?:\s+using)?|exclude)\s+(?:the\s+)?(?:following\s+)?(?:key)?words?\s*:?\s*"
                            r"((?:" + _QUOTED + r"|[a-z]+)(?:\s*(?:,|and|or)\s*(?:" + _QUOTED + r"|[a-z]+))*)", re.I)
_NO_LETTER_RE = re.compile(r"(?:\bnot|n't|\bnever)\s+(?:include|contain|use)\s+(?:the\s+|any\s+)?letter\s+[\"']?([a-z])\b",
                           re.I)
_AVOID_QUOTED_RE = re.compile(r"(?:\bdo\s+not|n't|\bnot|\bnever)\s+(?:use|include|say|write)\s+((?:" + _QUOTED
                              + r"(?:\s*,\s*|\s+and\s+|\s+or\s+|\s*,\s*(?:and|or)\s+)?)+)", re.I)
_STOPWORDS = frozenset("should must to will would can appear appears occur in that the a an be is are of and or".split())
_NOT_APPEAR_RE = re.compile(r"\b(?:word|keyword)s?\s+" + _QUOTED + r"\s+(?:should|must)\s+not\s+(?:appear|be\s+used)",
                            re.I)

# "First repeat the request word for word, then give your answer": the paragraph that says so, and what it names.
_REPEAT_RE = re.compile(r"\bre(?:p|pl)eat\b[^\n]{0,80}?\b(?:request|prompt|question|sentence|text|line)s?\b", re.I)
_REPEAT_QUOTED_RE = re.compile(r"\brepeat\s+" + _QUOTED + r"\s+word\s+for\s+word", re.I)

PROGRAM_FIXES = ("ends_with", "no_commas", "json", "repeat_request", "lowercase", "uppercase", "quoted")
"""The form instructions fix_form applies, in this order (the case changes after the ending is appended, the
quotes go on last)."""


def _num(text: str | None) -> int | None:
    if text is None:
        return None
    return int(text) if text.isdigit() else NUMBER_WORDS.get(text.lower())


def _first(groups: tuple) -> str | None:
    return next((g for g in groups if g), None)


def read_form(task: str) -> list[dict[str, Any]]:
    """The form instructions in ``task`` as JSON-safe dicts ({"kind", ...})."""
    found: list[dict[str, Any]] = []
    upper = _UPPER_RE.search(task)
    if _LOWER_RE.search(task):
        found.append({"kind": "lowercase"})
    elif upper and not _SOME_WORDS_RE.search(task[max(0, upper.start() - 30):upper.end()]):
        found.append({"kind": "uppercase"})
    if _NO_COMMAS_RE.search(task):
        found.append({"kind": "no_commas"})
    if _QUOTED_RE.search(task):
        found.append({"kind": "quoted"})
    if m := _END_RE.search(task):
        phrase = _first(m.groups())
        if phrase and len(re.findall(r"\w", phrase)) >= 2:
            found.append({"kind": "ends_with", "text": phrase.strip()})
    if _JSON_RE.search(task):
        found.append({"kind": "json"})
    if _TITLE_RE.search(task):
        found.append({"kind": "title"})
    if m := _HIGHLIGHT_RE.search(task):
        found.append({"kind": "highlights", "min": _num(_first(m.groups())) or 1})
    elif _HIGHLIGHT_EACH_RE.search(task) and (m := _N_SECTIONS_RE.search(task)):
        found.append({"kind": "highlights", "min": _num(m.group(1)) or 1})
    if m := _PLACEHOLDER_RE.search(task):
        found.append({"kind": "placeholders", "min": _num(m.group(1)) or 1})
    if _POSTSCRIPT_RE.search(task) and (markers := _MARKER_RE.findall(task)):
        found.append({"kind": "postscript", "marker": re.sub(r"\s", "", max(markers, key=len)).rstrip(".") + "."})
    if (m := _PARAGRAPHS_RE.search(task)) and _DIVIDER_RE.search(task):
        found.append({"kind": "paragraphs", "count": _num(m.group(1))})
    if (marker := _SECTION_MARKER_RE.search(task)) and (count := _SECTION_COUNT_RE.search(task)):
        found.append({"kind": "sections", "marker": marker.group(1), "count": _num(count.group(1))})
    if _TWO_RESPONSES_RE.search(task) and re.search(r"\*{6}|six\s+asterisk|6\s+asterisk", task, re.I):
        found.append({"kind": "two_responses"})
    for m in _SENTENCES_RE.finditer(task):
        found.append({"kind": "sentences", **_bound(m.group(1), _num(m.group(2)))})
    for m in _FREQUENCY_RE.finditer(task):
        if (m.group(4) or "").lower() in _STOPWORDS or not (m.group(5) or "or more" in m.group(0)
                                                          or m.group(7)):
            continue
        found.append({"kind": "word_times", "word": _first(m.groups()[:4]),
                      **_bound(m.group(5), _num(m.group(6) or m.group(7)))})
    for m in _LETTER_RE.finditer(task):
        found.append({"kind": "letter_times", "letter": m.group(1).lower(),
                      **_bound(m.group(2), _num(m.group(3) or m.group(4)))})
    for m in _AVOID_LIST_RE.finditer(task):
        words = [_first(q) or q[3] for q in re.findall(_QUOTED + r"|([a-z]+)", m.group(1), re.I)]
        found += [{"kind": "avoid_word", "word": w} for w in words if w and w.lower() not in ("and", "or")]
    for m in _NO_LETTER_RE.finditer(task):
        found.append({"kind": "letter_times", "letter": m.group(1).lower(), "min": None, "max": 0})
    for m in _AVOID_QUOTED_RE.finditer(task):
        found += [{"kind": "avoid_word", "word": _first(q)} for q in re.findall(_QUOTED, m.group(1))]
    if (request := read_repeat(task)) is not None:
        found.append({"kind": "repeat_request", "text": request})
    for m in _NOT_APPEAR_RE.finditer(task):
        found.append({"kind": "avoid_word", "word": _first(m.groups())})
    return [f for f in found if _complete(f)]


def _complete(instruction: dict[str, Any]) -> bool:
    """Every value read, or for a bound at least one end of it."""
    if "min" in instruction or "max" in instruction:
        return instruction.get("min") is not None or instruction.get("max") is not None
    return all(v is not None for v in instruction.values())


def read_repeat(task: str) -> str | None:
    """The request a task asks to be repeated word for word before the answer: quoted in the instruction, or
    the text on the other side of the instruction's paragraph (after it when it opens the task, else before)."""
    if m := _REPEAT_QUOTED_RE.search(task):
        return _first(m.groups())
    m = _REPEAT_RE.search(task)
    if m is None:
        return None
    start = task.rfind("\n", 0, m.start()) + 1
    end = task.find("\n\n", m.end())
    end = len(task) if end == -1 else end
    before, after = task[:start].strip(), task[end:].strip()
    if not before and after:
        return after
    return before or None


def _bound(relation: str | None, n: int | None) -> dict[str, int | None]:
    """{"min", "max"} for "at least 5" (5, None), "less than 5" (None, 4), "at most 5" (None, 5), ..."""
    relation = re.sub(r"\s+", " ", (relation or "at least").lower())
    if n is None:
        return {"min": None, "max": None}
    if relation in ("at least",):
        return {"min": n, "max": None}
    if relation == "more than":
        return {"min": n + 1, "max": None}
    if relation in ("less than", "fewer than"):
        return {"min": None, "max": n - 1}
    if relation in ("at most", "no more than"):
        return {"min": None, "max": n}
    return {"min": n, "max": n}


def _letters(text: str) -> str:
    return "".join(c for c in text if c.isalpha())


def _sentences(prose: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+|\n+", prose) if re.search(r"\w", s)])


def _within(n: int, spec: dict[str, Any]) -> bool:
    return (spec.get("min") is None or n >= spec["min"]) and (spec.get("max") is None or n <= spec["max"])


def _wanted(spec: dict[str, Any]) -> str:
    lo, hi = spec.get("min"), spec.get("max")
    if lo is not None and hi is not None:
        return f"exactly {lo}" if lo == hi else f"{lo} to {hi}"
    return f"at least {lo}" if lo is not None else f"at most {hi}"


def form_problem(instruction: dict[str, Any], text: str) -> str | None:
    """What ``text`` gets wrong about one form instruction, in words the model can act on; None when it is met."""
    kind = instruction["kind"]
    stripped = text.strip()
    if kind == "lowercase":
        return None if _letters(text) == _letters(text).lower() else "it has capital letters; use only lowercase"
    if kind == "uppercase":
        return None if _letters(text) == _letters(text).upper() else "it has lowercase letters; use only capitals"
    if kind == "no_commas":
        return None if "," not in text else "it uses commas; use none"
    if kind == "quoted":
        ok = len(stripped) > 1 and stripped[0] == stripped[-1] == '"'
        return None if ok else "the whole answer must be wrapped in double quotation marks"
    if kind == "ends_with":
        ok = stripped.strip('"').lower().endswith(instruction["text"].lower())
        return None if ok else f"it must end with exactly: {instruction['text']}"
    if kind == "json":
        return None if _is_json(stripped) else "the whole answer must be valid JSON"
    if kind == "title":
        return None if re.search(r"<<[^<>\n]+>>", text) else "it needs a title in double angular brackets, like <<A Title>>"
    if kind == "highlights":
        n = len(re.findall(r"(?<!\*)\*[^\n*]+\*(?!\*)|\*\*[^\n*]+\*\*", text))
        return None if n >= instruction["min"] else (
            f"it has {n} highlighted sections; mark at least {instruction['min']} with single asterisks, like "
            f"*highlighted section*")
    if kind == "placeholders":
        n = len(re.findall(r"\[[^\[\]\n]+\]", text))
        return None if n >= instruction["min"] else (
            f"it has {n} placeholders; include at least {instruction['min']} in square brackets, like [name]")
    if kind == "postscript":
        marker = instruction["marker"]
        found = re.search(r"^\s*" + re.escape(marker).replace(r"\.", r"\.\s?"), text, re.I | re.M)
        return None if found else f"it must end with a postscript starting with {marker}"
    if kind == "paragraphs":
        n = len([p for p in re.split(r"\s?\*\*\*\s?", text) if p.strip()])
        return None if n == instruction["count"] else (
            f"it has {n} paragraphs; write exactly {instruction['count']}, separated by a line with ***")
    if kind == "sections":
        n = len(re.findall(rf"\b{re.escape(instruction['marker'])}\s?\d+", text))
        return None if n >= instruction["count"] else (
            f"it has {n} sections; start each of {instruction['count']} sections with "
            f"'{instruction['marker']} 1', '{instruction['marker']} 2', ...")
    if kind == "two_responses":
        parts = [p.strip() for p in text.split("******")]
        ok = len(parts) == 2 and all(parts) and parts[0] != parts[1]
        return None if ok else "give exactly two different responses separated by a line with ******"
    if kind == "sentences":
        n = _sentences(split_code(text)[0])
        return None if _within(n, instruction) else f"it has {n} sentences; the task asks for {_wanted(instruction)}"
    if kind == "repeat_request":
        ok = stripped.strip('"').lower().startswith(instruction["text"].lower())
        return None if ok else "it must begin with the request repeated word for word, then the answer"
    if kind == "word_times":
        word = instruction["word"]
        n = len(re.findall(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.I))
        return None if _within(n, instruction) else (
            f"the word '{word}' appears {n} times; the task asks for {_wanted(instruction)}")
    if kind == "letter_times":
        n = text.lower().count(instruction["letter"])
        return None if _within(n, instruction) else (
            f"the letter '{instruction['letter']}' appears {n} times; the task asks for {_wanted(instruction)}")
    return None


def _is_json(text: str) -> bool:
    body = re.sub(r"^```(?:json|JSON)?\s*|\s*```$", "", text.strip())
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def fix_form(instructions: list[dict[str, Any]], text: str) -> str:
    """``text`` with the form instructions a program can meet without losing anything applied, in
    PROGRAM_FIXES order; the others are left to the reviser."""
    kinds = {i["kind"]: i for i in instructions}
    if (end := kinds.get("ends_with")) and form_problem(end, text):
        text = text.rstrip() + "\n" + end["text"]
    if "no_commas" in kinds and "json" not in kinds:  # JSON needs its commas
        text = re.sub(r",(?=\d{3}\b)", "", text).replace(",", "")
    if "json" in kinds and not _is_json(text.strip()):
        text = json.dumps({"response": text.strip()}, ensure_ascii=False, indent=1)
    if (repeat := kinds.get("repeat_request")) and form_problem(repeat, text):
        text = repeat["text"] + "\n\n" + text.lstrip()
    if "lowercase" in kinds:
        text = text.lower()
    elif "uppercase" in kinds:
        text = text.upper()
    if "quoted" in kinds and form_problem(kinds["quoted"], text):
        text = '"' + text.strip().strip('"') + '"'
    return text
