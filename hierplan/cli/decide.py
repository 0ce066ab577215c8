"""Asking a person to approve, edit or reject a plan at the terminal (`resume --edit` opens the editor)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any

from pydantic import ValidationError

from hierplan.errors import UsageError
from hierplan.schema import plan_models, short_error


def edit_plan(plan: dict[str, Any], tools: Any = ()) -> dict[str, Any]:
    """Open the plan as JSON in $EDITOR (then $VISUAL, then vi); return it validated (its steps may name the
    registered ``tools``), or raise UsageError."""
    editor = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(plan, f, indent=2, ensure_ascii=False)
        path = f.name
    try:
        if subprocess.run([*shlex.split(editor), path]).returncode != 0:
            raise UsageError(f"the editor ({editor}) exited with an error; the plan was not changed")
        with open(path, encoding="utf-8") as f:
            text = f.read()
    finally:
        os.unlink(path)
    try:
        return plan_models(tuple(tools or ())).plan.model_validate_json(text).model_dump(mode="json")
    except ValidationError as exc:
        raise UsageError(f"the edited plan is invalid: {short_error(exc)}") from exc


def decide(request: dict[str, Any], edit: bool, interactive: bool) -> dict[str, Any] | None:
    """The decision to resume with: the edited plan (``edit``), else the terminal's answer; None leaves the
    run waiting for approval."""
    if request.get("error"):
        print(f"hierplan: {request['error']}", file=sys.stderr)
    if edit:
        return {"action": "edit", "plan": edit_plan(request["plan"], request.get("tools"))}
    while interactive:
        answer = input("Approve this plan? [a]pprove, [e]dit, [r]eject, [l]ater: ").strip().lower()[:1]
        if answer in ("a", "r"):
            return {"action": "approve" if answer == "a" else "reject"}
        if answer == "e":
            try:
                return {"action": "edit", "plan": edit_plan(request["plan"], request.get("tools"))}
            except UsageError as exc:
                print(f"hierplan: {exc}", file=sys.stderr)
        elif answer == "l":
            return None
    return None
