"""Parts of an answer the model writes alone, held by the grammar, and a program puts in place; the rest of the
answer stays as it was.

A count the answer misses (a list of exactly 3 points) or a part it lacks (a title, a postscript) is what a small model rewriting the whole answer fixes least reliably, and a whole rewrite is a new
answer, often thinner. Asked instead for only those parts, as JSON whose schema holds the count (schema.parts_model),
the model cannot miss the count, and a program puts the parts where they go: the list where the answer's list
was, the title above, the postscript below (``put_parts``).

The parts (``parts_to_write``): a list with a bound of at most config.MAX_GRAMMAR_LIST_ITEMS items, a title and a
postscript, each only when the answer breaks its instruction.
"""

from __future__ import annotations

import re
from typing import Any

from hierplan.rules.checks import list_blocks, problem, put_list
from hierplan.rules.instructions import LIST_KINDS

BODY_KINDS = LIST_KINDS
"""Parts that reshape the answer's body (a list): at most one is written in a round. Paragraphs and sections are
regrouped by program, keeping every word (rules.form_check.regroup); the model, asked for them, summarised."""
ADDED_KINDS = ("title", "postscript")
"""Parts added to the answer: a title above, a postscript below."""
# A postscript's own marker as the model may write it (dotted or not, once or doubled, a colon after): the marker
# asked is put instead.
_POSTSCRIPT_MARK_RE = re.compile(r"^\s*p\.?\s?(?:p\.?\s?)?s\b\.?\s*[:\-\u2013]?\s*", re.I)


def parts_to_write(instructions: list[dict[str, Any]], text: str, most: int) -> list[dict[str, Any]]:
    """The instructions ``text`` breaks whose parts the model can write alone under the grammar: the first one
    that reshapes the body (a list whose bound is at most ``most`` items, where ``text`` has at most one list),
    then a title and a postscript."""
    broken = [i for i in instructions if i["kind"] in (*BODY_KINDS, *ADDED_KINDS) and problem(i, text) is not None]
    one_list = len(list_blocks(text)) <= 1  # put_list leaves an answer with several lists as it is
    body = next((i for i in broken if i["kind"] in BODY_KINDS and 0 < part_count(i)[1] <= most and one_list), None)
    return [*([body] if body else []), *(i for i in broken if i["kind"] in ADDED_KINDS)]


def part_count(instruction: dict[str, Any]) -> tuple[int, int]:
    """(least, most) items of a list: its bound (least 1 when it gives none); (0, 0) with no upper bound."""
    most = instruction.get("max")
    return (instruction.get("min") or 1, most) if most is not None else (0, 0)


def put_parts(text: str, parts: list[dict[str, Any]], written: dict[str, Any]) -> str:
    """``text`` with the ``written`` parts (the model's reply: ``items``, ``title``, ``postscript``) put in place
    for ``parts`` (parts_to_write)."""
    for part in parts:
        kind = part["kind"]
        if kind in LIST_KINDS:
            text = put_list(text, written["items"], kind)
    for part in parts:
        if part["kind"] == "title":
            title = " ".join(written["title"].split()).strip("<> ")
            text = f"<<{title}>>\n\n{text.lstrip()}"
        elif part["kind"] == "postscript":
            marker = part["marker"]
            note = _POSTSCRIPT_MARK_RE.sub("", " ".join(written["postscript"].split()))
            text = f"{text.rstrip()}\n\n{marker} {note}"
    return text
