"""Does a numeric task's final answer agree with what the plan computed? (The answer_check node records it and
ends an answer that disagrees on the computed value.)"""

from __future__ import annotations

import re
from typing import Any

from hierplan.rules.instructions import read_instructions
from hierplan.rules.numbers import last_number, numbers_equal, parse_number, restates_in_other_unit


def computations(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Successful Python steps, in plan order."""
    return [r for r in results or [] if r.get("tool") == "python" and r.get("ok")]


def computed_output(result: dict[str, Any]) -> str:
    """What a computation printed, as it counts: the output of the program whose number its check kept (the
    vote: nodes.vote), else the step's own."""
    check = result.get("check") or {}
    if check.get("decided") and check.get("stdout") is not None:
        return check["stdout"]
    return result.get("stdout") or result.get("output") or ""


def last_computed(results: list[dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
    """The last successful computation that printed a number, and that number (its last one)."""
    for result in reversed(computations(results)):
        number = last_number(computed_output(result))
        if number is not None:
            return result, number
    return None


def check_answer(final: str, results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Whether the answer's last number equals the last computation's last printed number. None when no
    computation printed a number (a JSON-safe dict otherwise)."""
    found = last_computed(results)
    if found is None:
        return None
    result, computed = found
    answer = last_number(final)
    ok = numbers_equal(answer, computed)
    restated = not ok and restates_in_other_unit(answer, computed)
    if ok:
        note = f"the answer's last number matches step {result['step_id']}'s computation"
    elif answer is None:
        note = f"the answer states no number; step {result['step_id']} computed {computed}"
    else:
        note = f"the answer ends with {answer}, but step {result['step_id']} computed {computed}"
    if restated:
        note += " (the same value in another unit: left as written)"
    return {"ok": ok, "answer_number": answer, "computed": computed, "step_id": result["step_id"], "note": note,
            "other_unit": restated}


FINAL_LINE = "Final answer: {value}"
# {head}: the plan's goal and a colon, or a goal that is the task's question (a plan by rule, rules.plan) as it is.
STATED_LINE = "{head} {value}. Computed with Python: {agreed} of {programs} independent programs printed it."
FINAL_LINE_RE = re.compile(r"\s*\**final answer\**\s*:", re.IGNORECASE)


def ending_on(final: str, value: str) -> str:
    """``final``'s prose (less any "Final answer:" line) ending on ``Final answer: <value>``: the computation is
    exact and was voted on; prose that ends on another number is the model redoing arithmetic in words."""
    kept = [line for line in final.splitlines() if not FINAL_LINE_RE.match(line)]
    return "\n".join([*kept, FINAL_LINE.format(value=value)]).strip()


def stated_answer(goal: str, value: str, agreed: int, programs: int) -> str:
    """A numeric answer the programs' vote decided, stated without a model: the plan's goal and the voted value,
    how many programs printed it, and the final line. A whole number printed as ``18.0`` is stated as 18."""
    number = parse_number(value)
    shown = str(int(number)) if number is not None and number == number.to_integral_value() else value
    goal = goal.strip()
    head = goal if goal.endswith("?") else (goal.rstrip(".:") or "The answer") + ":"
    line = STATED_LINE.format(head=head, value=shown, agreed=agreed, programs=programs)
    return "\n".join([line, FINAL_LINE.format(value=shown)])


# A task that asks to see how its number was reached, as people ask it.
WORKING_RE = re.compile(
    r"\bstep[\s-]+by[\s-]+step\b|\bshow\s+(?:your|the|all(?:\s+the)?|me\s+the)\s+(?:work(?:ing)?|steps|reasoning|"
    r"calculations?|maths?)\b|\bexplain\s+(?:your|the|how)\b|\bwalk\s+me\s+through\b|\breasoning\b|"
    r"\bhow\s+you\s+(?:got|arrived|reached|worked)\b", re.I)
# Counts of list items read from a word problem are its quantities ("Max has 5 points"), and its nouns are not
# words the answer must use: for a numeric task, only the instructions about the answer's form count, and a word
# to mention only where the task quotes it ("use the word 'total'").
NUMERIC_SKIPPED_KINDS = ("items", "bullets", "numbered", "mentions")


def numeric_instructions(task: str, with_files: bool = False) -> list[dict[str, Any]]:
    """The instructions a numeric task states about its answer's form (rules.instructions), leaving out what a
    word problem's quantities and nouns look like to the readers (NUMERIC_SKIPPED_KINDS). None for a question
    about the user's files (``with_files``): its answer is what its program printed, in the format it asked."""
    if with_files:
        return []
    return [i for i in read_instructions(task) if i["kind"] not in NUMERIC_SKIPPED_KINDS or _quoted_term(i, task)]


def _quoted_term(instruction: dict[str, Any], task: str) -> bool:
    term = instruction.get("term") if instruction["kind"] == "mentions" else None
    return bool(term) and re.search(r"['\"\u201c\u2018]" + re.escape(term) + r"['\"\u201d\u2019]", task, re.I) is not None


def prose_asked(task: str, with_files: bool = False) -> str | None:
    """Why a numeric task's answer is to be written by the model, in prose, rather than stated from its computed
    number: the task asks to see the working, or states how its answer must look. None: neither, or a question
    about the user's files (``with_files``), whose answer is what its program printed, in the format the question
    asked (the steps it lists are that program's)."""
    if not with_files and WORKING_RE.search(task):
        return "the task asks to see the working"
    kinds = sorted({i["kind"] for i in numeric_instructions(task, with_files)})
    return f"the task states its answer's form ({', '.join(kinds)})" if kinds else None
