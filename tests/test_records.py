"""The stored records (hierplan.records' TypedDicts) and the pydantic models that validate them (hierplan.schema)
declare the same fields: a field added to one and not the other fails here, not in a resumed run."""

from __future__ import annotations

import pytest

from hierplan import records, schema

PAIRS = [(records.StepDict, schema.Step), (records.PlanDict, schema.Plan), (records.CallDict, schema.ModelCall),
         (records.AttemptDict, schema.CodeAttempt), (records.ResultDict, schema.StepResult)]


@pytest.mark.parametrize("stored, model", PAIRS, ids=[m.__name__ for _, m in PAIRS])
def test_a_records_stored_form_has_exactly_its_models_fields(stored, model):
    assert set(stored.__annotations__) == set(model.model_fields)


def test_a_step_result_dumped_for_the_state_holds_the_keys_its_record_declares():
    attempt = schema.CodeAttempt(code="print(1)", ok=True, stdout="1\n")
    result = schema.StepResult(step_id=1, title="t", tool="python", output="1", ok=True, code="print(1)",
                               stdout="1\n", attempts=[attempt])
    stored = result.as_state()
    assert set(stored) == set(records.ResultDict.__annotations__)
    assert set(stored["attempts"][0]) == set(records.AttemptDict.__annotations__)
