"""The JSON schemas the plan's models give the grammar and the model servers stay as they were: a change to how the
plan models are declared must not change what the model is constrained to (UPDATE_SNAPSHOTS=1 rewrites the file,
for a change meant to reach the model)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hierplan.schema import DraftPlan, DraftRevision, Plan, Revision, plan_models

SNAPSHOT = Path(__file__).parent / "snapshots" / "plan_schemas.json"
REGISTERED = ("search",)


def schemas() -> dict:
    extended = plan_models(REGISTERED)
    models = {"Plan": Plan, "DraftPlan": DraftPlan, "Revision": Revision, "DraftRevision": DraftRevision,
              "search:Plan": extended.plan, "search:DraftPlan": extended.draft,
              "search:Revision": extended.revision, "search:DraftRevision": extended.draft_revision}
    return {name: model.model_json_schema() for name, model in models.items()}


def test_the_plan_models_json_schemas_match_the_snapshot():
    got = json.dumps(schemas(), indent=1) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(got)
    assert got == SNAPSHOT.read_text()
