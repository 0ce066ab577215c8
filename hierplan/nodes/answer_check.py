"""Does the final answer agree with what the plan computed? Recorded on the run; the aggregator ends a
numeric answer that disagrees on the computed value (aggregator.py)."""

from __future__ import annotations

from typing import Any

from hierplan.eval.scoring import last_number, numbers_equal, parse_number
from hierplan.nodes.tool_choice import is_numeric_task


def computations(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Successful Python steps, in plan order."""
    return [r for r in results or [] if r.get("tool") == "python" and r.get("ok")]


def last_computed(results: list[dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
    """The last successful computation that printed a number, and that number (its last one)."""
    for result in reversed(computations(results)):
        number = last_number(result.get("stdout") or result.get("output"))
        if number is not None:
            return result, number
    return None


def check_answer(task: str, final: str, results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """For a numeric task with a computation that printed a number: whether the answer's last number equals
    that computation's last printed number. None when there is nothing to compare (JSON-safe dict otherwise)."""
    if not is_numeric_task(task):
        return None
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


# Factors between units an answer may convert the computed value by (cents and dollars, grams and kilograms,
# minutes and hours): the answer then states the same quantity, and is not corrected.
UNIT_FACTORS = (10, 100, 1000, 60, 3600)


def restates_in_other_unit(answer: str | None, computed: str) -> bool:
    """Whether ``answer`` is ``computed`` times or divided by one of UNIT_FACTORS."""
    a, c = parse_number(answer) if answer else None, parse_number(computed)
    if a is None or c is None or a == 0 or c == 0:
        return False
    return any(a == c * f or c == a * f for f in UNIT_FACTORS)
