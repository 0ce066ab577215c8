"""Each record's fields are declared once, in hierplan.records; hierplan.schema makes the pydantic classes of those
that are validated or built by pydantic from them (record_model). What can still diverge is a field's type where
a class validates another than the record stores (a nested record's class, the tools a plan may name): what a
class dumps for the state must be its record, or a resumed run reads what its record does not say."""

from __future__ import annotations

import pytest
from pydantic import Field, TypeAdapter

from hierplan import records, schema

STEP = {"id": 1, "title": "Sum", "instruction": "Add them.", "tool": "python", "expected_output": "a number",
        "depends_on": None, "tool_reason": "a number is computed"}
CALL = {"node": "python_step", "prompt_tokens": 120, "generated_tokens": 30, "seconds": 1.5, "batch": 2,
        "finish_reason": "stop"}
ATTEMPT = {"code": "print(1)", "ok": True, "stdout": "1\n", "error": None, "exit_reason": "ok",
           "mended": ["added `import numpy as np`"]}
VOTE = {"kind": "vote", "step_id": 1, "answers": ["1", None], "chosen": "1", "agreed": 1, "programs": 2,
        "changed": False, "decided": True, "decided_by": 0}
ARTIFACT = {"name": "chart.png", "size": 10, "sha256": "ab" * 32, "media_type": "image/png"}
RESULT = {"step_id": 1, "title": "Sum", "tool": "python", "output": "1", "ok": True, "error": None,
          "code": "print(1)", "stdout": "1\n", "attempts": [ATTEMPT], "calls": [CALL], "check": VOTE, "seconds": 2.0,
          "tool_args": None, "tool_result": None, "artifacts": [ARTIFACT]}
PLAN = {"goal": "Add the numbers", "assumptions": ["they are integers"],
        "steps": [STEP, {**STEP, "id": 2, "tool": "llm", "depends_on": [1]}]}

EXTENDED = schema.plan_models(("search",))
CASES = [(records.StepDict, schema.Step, STEP), (records.StepDict, schema.DraftStep, STEP),
         (records.PlanDict, schema.Plan, PLAN), (records.PlanDict, schema.DraftPlan, PLAN),
         (records.PlanDict, EXTENDED.plan, {**PLAN, "steps": [{**STEP, "tool": "search"}]}),
         (records.CallDict, schema.ModelCall, CALL), (records.AttemptDict, schema.CodeAttempt, ATTEMPT),
         (records.ResultDict, schema.StepResult, RESULT)]


@pytest.mark.parametrize("record, model, example", CASES, ids=[m.__name__ for _, m, _ in CASES])
def test_a_class_has_its_records_fields_and_dumps_a_valid_record(record, model, example):
    assert list(model.model_fields) == list(record.__annotations__)
    stored = model.model_validate(example).model_dump(mode="json")
    assert stored == example
    assert TypeAdapter(record).validate_python(stored, strict=True) == stored


def test_a_step_result_built_by_a_node_is_its_record():
    attempt = schema.CodeAttempt(code="print(1)", ok=True, stdout="1\n")
    call = schema.ModelCall(node="python_step", seconds=0.5)
    stored = schema.StepResult(step_id=1, title="t", tool="python", output="1", ok=True, code="print(1)",
                               stdout="1\n", attempts=[attempt], calls=[call]).model_dump(mode="json")
    assert TypeAdapter(records.ResultDict).validate_python(stored, strict=True) == stored


def test_a_class_names_only_its_records_fields():
    with pytest.raises(TypeError, match="StepDict has no field reason"):
        schema.record_model(records.StepDict, "Step", {"reason": Field(default=None)})
