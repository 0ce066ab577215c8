"""Checks of an answer against the form instructions rules.form reads (``form_problem``), and the fixes a program
makes without losing anything (``fix_form``): lowercasing, uppercasing, removing commas, quoting, appending the
asked ending, wrapping the text as a JSON string, putting the request asked to be repeated first, writing the words
in capitals past the number allowed as ordinary words. What a program
cannot fix is left to the reviser node, told exactly what is wrong.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

import json_repair

from hierplan.rules.text import prose_spans, split_code

PROGRAM_FIXES = ("paragraphs", "sections", "two_responses", "highlights", "ends_with", "no_commas", "json",
                 "repeat_request", "title", "caps_words", "lowercase", "uppercase", "quoted")
"""The form instructions fix_form applies, in this order (highlights before the ending is appended, so the
ending stays as asked; the case changes after; the quotes go on last)."""
HIGHLIGHT_MAX_WORDS = 25
"""A line's opening sentence longer than this is not highlighted whole (its first clause is)."""
_HIGHLIGHT_RE = re.compile(r"(?<!\*)\*[^\n*]+\*(?!\*)|\*\*[^\n*]+\*\*")
_LINE_START_RE = re.compile(r"^(\s*(?:[-+\u2022]|\d{1,3}[.)](?=\s))?\s*)(.*)$")


# A word in capital letters: two letters or more, all capitals ("URGENT", "DON'T", "FYI"; not "I" or "A").
_CAPS_WORD_RE = re.compile(r"(?<![^\W\d_])[^\W\d_a-z]{2,}(?:['\u2019][^\W\d_a-z]+)?(?![^\W\d_])")
ACRONYM_LETTERS = 3
"""A word in capitals this short may be an acronym (FBI, MP3): written as an ordinary word only when the longer
ones are not enough."""


def caps_words(text: str) -> list[str]:
    """The words of the prose written in capital letters, in order (code aside)."""
    return [w for w in _CAPS_WORD_RE.findall(split_code(text)[0]) if w.isupper()]


def _fewer_caps(text: str, most: int) -> str:
    """``text`` with only ``most`` words in capitals: the others written as ordinary words ("URGENT" -> "Urgent",
    "DON'T" -> "Don't"), the last ones first and acronym-short ones last, outside code; the words stay, only their
    case changes."""
    found = [m for a, b in prose_spans(text) for m in _CAPS_WORD_RE.finditer(text, a, b) if m.group(0).isupper()]
    over = len(found) - most
    if over <= 0:
        return text
    order = sorted(found, key=lambda m: (len(m.group(0)) <= ACRONYM_LETTERS, -m.start()))
    demoted = {m.start(): m for m in order[:over]}
    out, pos = [], 0
    for start in sorted(demoted):
        m = demoted[start]
        out += [text[pos:start], m.group(0).capitalize()]
        pos = m.end()
    return "".join(out) + text[pos:]


_TITLE_LABEL_RE = re.compile(r"<<\s*(?:title\s*:\s*)?[\"'\u201c\u2018]([^<>\n\"\u201d]+)[\"'\u201d\u2019]\s*>>"
                             r"|<<\s*title\s*:\s*([^<>\n]+)>>", re.I)


REQUEST_LABEL_CHARS = 40
"""How far into the answer a copy of the request may start (after a label such as "Your request:")."""


def _without_leading_copy(text: str, request: str) -> str:
    """``text`` less a copy of the request at its top, behind a label or quotes ("Request: ...", "> ..."), so the
    request put first is not said twice."""
    at = text.lower().find(request.lower(), 0, REQUEST_LABEL_CHARS + len(request))
    if at < 0:
        return text
    before = text[:at]
    labelled = re.fullmatch(r"[^\n]{0,%d}:\s*[\"'\u201c>*_]*" % REQUEST_LABEL_CHARS, before)
    if re.search(r"\w", before) and not labelled:
        return text  # the request's words inside the answer's own sentence
    rest = text[at + len(request):]
    return rest.lstrip("\"'\u201d*_ \t")


def _letters(text: str) -> str:
    return "".join(c for c in text if c.isalpha())


def _count_sentences(prose: str) -> int:
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
        return None if re.search(r"<<[^<>\n]+>>", text) else "it needs a title wrapped in << and >>, like <<A Title>>"
    if kind == "highlights":
        n = len(_HIGHLIGHT_RE.findall(text))
        return None if n >= instruction["min"] else (
            f"it has {n} highlighted passages; mark at least {instruction['min']} with single asterisks, like "
            f"*a key phrase*")
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
        n = _count_sentences(split_code(text)[0])
        return None if _within(n, instruction) else f"it has {n} sentences; the task asks for {_wanted(instruction)}"
    if kind == "repeat_request":
        ok = stripped.strip('"').lower().startswith(instruction["text"].lower())
        return None if ok else "it must begin with the request repeated word for word, then the answer"
    if kind == "word_times":
        word = instruction["word"]
        n = len(re.findall(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.I))
        return None if _within(n, instruction) else (
            f"the word '{word}' appears {n} times; the task asks for {_wanted(instruction)}")
    if kind == "caps_words":
        found = caps_words(text)
        if _within(len(found), instruction):
            return None
        said = f" ({', '.join(found[:6])})" if found else ""
        return (f"it has {len(found)} words in all capital letters{said}; the task asks for {_wanted(instruction)} "
                f"words in ALL CAPS")
    if kind == "letter_times":
        n = text.lower().count(instruction["letter"])
        return None if _within(n, instruction) else (
            f"the letter '{instruction['letter']}' appears {n} times; the task asks for {_wanted(instruction)}")
    return None


PARAGRAPH_SEPARATOR = "\n\n***\n\n"
TITLE_MAX_WORDS = 12
"""A first block of one line and at most this many words, without a closing stop, is a title: it stays with the
block after it."""


def _is_title(block: str) -> bool:
    """A heading, or one short line without a closing stop: it belongs with the block after it."""
    return "\n" not in block and (block.lstrip().startswith("#") or (
        len(block.split()) <= TITLE_MAX_WORDS and not block.rstrip("*_ ").endswith((".", "!", "?"))))


def _halves(block: str) -> tuple[str, str] | None:
    """``block`` split in two at the middle line break, or, in a one-line block, between its middle sentences;
    None when it has one line of one sentence. Nothing else changes: lines stay lines."""
    lines = block.split("\n")
    if len(lines) > 1:
        half = len(lines) // 2
        return "\n".join(lines[:half]).strip(), "\n".join(lines[half:]).strip()
    sentences = re.split(r"(?<=[.!?])\s+(?=\S)", block)
    if len(sentences) < 2:
        return None
    half = len(sentences) // 2
    return " ".join(sentences[:half]), " ".join(sentences[half:])


def regroup(text: str, n: int) -> list[str] | None:
    """``text``'s blocks (split at blank lines, or at the separators it has) as ``n`` groups, in order, every word
    kept: a title or heading stays with the block after it; the adjacent pair with the fewest words merged, or the
    longest block of two lines or sentences or more split between them, until there are ``n``; None when they
    cannot be made."""
    blocks = [b.strip() for b in re.split(r"\n\s*(?:\*{3,}\s*\n\s*)?\n|\n\s*\*{3,}\s*\n", text.strip()) if b.strip()]
    blocks = [b for b in blocks if not re.fullmatch(r"\*{3,}", b)]
    k = 0
    while k < len(blocks) - 1:
        if _is_title(blocks[k]):
            blocks[k:k + 2] = [blocks[k] + "\n\n" + blocks[k + 1]]
        else:
            k += 1
    while len(blocks) > n:
        k = min(range(len(blocks) - 1), key=lambda i: len(blocks[i].split()) + len(blocks[i + 1].split()))
        blocks[k:k + 2] = [blocks[k] + "\n\n" + blocks[k + 1]]
    while len(blocks) < n:
        halves = {k: h for k, b in enumerate(blocks) if (h := _halves(b)) is not None}
        if not halves:
            return None
        k = max(halves, key=lambda i: len(blocks[i].split()))
        blocks[k:k + 1] = list(halves[k])
    return blocks


def highlight(text: str, need: int, keep: tuple[str, ...] = ()) -> str:
    """``text`` with the opening sentence (or clause) of up to ``need`` more of its lines marked *like this*, from
    the top: prose and list lines outside code, not headings, separators, table rows, indented lines, lines with
    asterisks already, or lines holding a text in ``keep`` (an ending the task asks for verbatim). Marking loses
    nothing the answer says."""
    lines, in_code = text.split("\n"), False
    for k, line in enumerate(lines):
        if need <= 0:
            break
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or "*" in line or "|" in line or line.startswith(("    ", "\t")) or \
                line.lstrip().startswith(("#", "<<", ">")) or any(t and t.lower() in line.lower() for t in keep):
            continue
        lead, body = _LINE_START_RE.match(line).groups()
        sentence = re.match(r"[^.!?]*[.!?](?=\s|$)", body)
        phrase = (sentence.group(0) if sentence else body).strip()
        if len(phrase.split()) > HIGHLIGHT_MAX_WORDS:
            phrase = re.split(r"[,;:]\s", phrase)[0].strip()
        if len(re.findall(r"\w", phrase)) < 3 or len(phrase.split()) > HIGHLIGHT_MAX_WORDS:
            continue
        at = line.index(phrase, len(lead))
        lines[k] = f"{line[:at]}*{phrase}*{line[at + len(phrase):]}"
        need -= 1
    return "\n".join(lines)


def _is_json(text: str) -> bool:
    body = re.sub(r"^```(?:json|JSON)?\s*|\s*```$", "", text.strip())
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _cased(text: str, case) -> str:
    """``text`` in one letter case; JSON (fenced or not) through its values and keys, so its escapes stay escapes
    (a "\\n" upper-cased is "\\N", no JSON)."""
    if not _is_json(text.strip()):
        return case(text)
    fenced = re.match(r"^\s*(```[^\n]*\n)(.*?)(\n\s*```\s*)$", text, re.S)
    body = fenced.group(2) if fenced else text
    cased = json.dumps(_case_values(json.loads(body), case), ensure_ascii=False, indent=1)
    return fenced.group(1) + cased + fenced.group(3) if fenced else cased


def _case_values(value: Any, case) -> Any:
    if isinstance(value, str):
        return case(value)
    if isinstance(value, list):
        return [_case_values(v, case) for v in value]
    if isinstance(value, dict):
        return {case(k): _case_values(v, case) for k, v in value.items()}
    return value


# An answer that holds a JSON object: its opening brace and first key.
_OBJECT_START_RE = re.compile(r'\{\s*"')


def _as_json(text: str) -> Any:
    """What an answer that is not JSON says, as JSON: the object it holds, where it holds one (cut off at the token
    budget, inside a fence, with a line of prose around it), closed by json_repair; else the whole text as the
    value of "response"."""
    if _OBJECT_START_RE.search(text):
        held = json_repair.loads(text)
        if isinstance(held, dict) and held:
            return held
    return {"response": text}


RESPONSE_SEPARATOR = "\n\n******\n\n"
LABEL_MAX_WORDS = 12
"""A line that only names the part below it ("**Playful reply:**") has at most this many words."""
# Where a part of the answer starts at the left margin: a list item, a heading, a bold line, or a label ending in ":".
_PART_START_RE = re.compile(r"^(?:[-*+\u2022][ \t]+|\d{1,2}[.)][ \t]+|#{1,6}[ \t]+|\*\*|[^\s].{0,80}:[ \t*]*$)")
_LABEL_RE = re.compile(r"^(?:[-*+\u2022][ \t]+|\d{1,2}[.)][ \t]+|#{1,6}[ \t]+)?[*_]*([^\n]*?)[*_]*[ \t]*$")


def two_parts(text: str) -> list[str] | None:
    """The two responses of an answer written as two labelled parts (two list items, headings or "Label:" lines at
    the left margin, nothing before the first), each less its label line and indent; None when it is not two."""
    lines = text.strip("\n").split("\n")
    starts = [i for i, line in enumerate(lines) if _PART_START_RE.match(line)]
    if len(starts) != 2 or starts[0] != 0:
        return None
    parts = []
    for first, end in ((starts[0], starts[1]), (starts[1], len(lines))):
        label = _LABEL_RE.match(lines[first]).group(1).strip()
        body = lines[first + 1:end]
        if label.rstrip("*_ ").endswith(":") and len(label.split()) <= LABEL_MAX_WORDS:
            head = []  # the label names the part: no part of the response
        else:
            head = [re.sub(r"^(?:[-*+\u2022][ \t]+|\d{1,2}[.)][ \t]+)", "", lines[first])]
        parts.append(textwrap.dedent("\n".join([*head, *body])).strip())
    return parts if all(parts) and parts[0] != parts[1] else None


def fix_form(instructions: list[dict[str, Any]], text: str) -> str:
    """``text`` with the form instructions a program can meet without losing anything applied, in
    PROGRAM_FIXES order; the others are left to the reviser."""
    kinds = {i["kind"]: i for i in instructions}
    if (split := kinds.get("paragraphs")) and form_problem(split, text) and "```" not in text:
        if groups := regroup(text, split["count"]):
            text = PARAGRAPH_SEPARATOR.join(groups)
    elif (split := kinds.get("sections")) and form_problem(split, text) and "```" not in text:
        # the markers the answer has are numbered again, so each section has one (a title after one is kept)
        unmarked = re.sub(rf"(?im)^[ \t]*(?:#+[ \t]*)?{re.escape(split['marker'])}[ \t]?\d+"
                          r"(?:[ \t]*[:.\-\u2013][ \t]*|[ \t]*$)",
                          "", text)
        if groups := regroup(unmarked, split["count"]):
            text = "\n\n".join(f"{split['marker']} {n}\n{g}" for n, g in enumerate(groups, 1))
    if (two := kinds.get("two_responses")) and form_problem(two, text):
        # a separator line in the wrong place (after both parts) goes; the labelled parts are separated again
        if parts := two_parts(re.sub(r"(?m)^[ \t]*\*{6,}[ \t]*$", "", text).strip()):
            text = RESPONSE_SEPARATOR.join(parts)
    if (marks := kinds.get("highlights")) and form_problem(marks, text) and "json" not in kinds:
        keep = tuple(i["text"] for i in instructions if i["kind"] == "ends_with" and i.get("text"))
        text = highlight(text, marks["min"] - len(_HIGHLIGHT_RE.findall(text)), keep)
    if (end := kinds.get("ends_with")) and form_problem(end, text):
        text = text.rstrip() + "\n" + end["text"]
    if "no_commas" in kinds and "json" not in kinds:  # JSON needs its commas
        text = re.sub(r",(?=\d{3}\b)", "", text).replace(",", "")
    if "json" in kinds and not _is_json(text.strip()):
        text = json.dumps(_as_json(text.strip()), ensure_ascii=False, indent=1)
    if (repeat := kinds.get("repeat_request")) and form_problem(repeat, text):
        text = repeat["text"] + "\n\n" + _without_leading_copy(text, repeat["text"]).lstrip()
    if "title" in kinds:  # "<<Title: "The Last Dance">>": the label and quotes are no part of the title
        text = _TITLE_LABEL_RE.sub(lambda m: f"<<{(m.group(1) or m.group(2)).strip()}>>", text, count=1)
    if (caps := kinds.get("caps_words")) and caps.get("max") is not None and form_problem(caps, text):
        text = _fewer_caps(text, caps["max"])
    if "lowercase" in kinds:
        text = _cased(text, str.lower)
    elif "uppercase" in kinds:
        text = _cased(text, str.upper)
    if "quoted" in kinds and form_problem(kinds["quoted"], text):
        text = '"' + text.strip().strip('"') + '"'
    return text
