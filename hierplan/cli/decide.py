"""Asking a person to approve, edit or reject a plan, or a tool call (approve_tools), at the terminal (`resume
--edit` opens the editor)."""

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
    text = _edit_text(json.dumps(plan, indent=2, ensure_ascii=False), "plan's steps")
    try:
        return plan_models(tuple(tools or ())).plan.model_validate_json(text).model_dump(mode="json")
    except ValidationError as exc:
        raise UsageError(f"the edited plan is invalid: {short_error(exc)}") from exc


def edit_arguments(request: dict[str, Any]) -> dict[str, Any]:
    """Open a tool call's arguments as JSON in the editor; return them as a JSON object (the approve_tool node
    checks them against the tool's schema, and asks again when they do not fit), or raise UsageError."""
    from hierplan.nodes.tool_approval import parse_arguments

    text = _edit_text(json.dumps(request["arguments"], indent=2, ensure_ascii=False), "arguments")
    try:
        return parse_arguments(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _edit_text(text: str, what: str) -> str:
    editor = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    try:
        if subprocess.run([*shlex.split(editor), path]).returncode != 0:
            raise UsageError(f"the editor ({editor}) exited with an error; the {what} stay as they were")
        with open(path, encoding="utf-8") as f:
            return f.read()
    finally:
        os.unlink(path)


def decide(request: dict[str, Any], edit: bool, interactive: bool) -> dict[str, Any] | None:
    """The decision to resume with: the edited plan or tool call's arguments (``edit``), else the terminal's
    answer; None leaves the run waiting for approval."""
    from hierplan.nodes.tool_approval import is_tool_request

    if request.get("error"):
        print(f"hierplan: {request['error']}", file=sys.stderr)
    tool = is_tool_request(request)

    def edited() -> dict[str, Any]:
        if tool:
            return {"action": "edit", "arguments": edit_arguments(request)}
        return {"action": "edit", "plan": edit_plan(request["plan"], request.get("tools"))}

    if edit:
        return edited()
    question = "Call this tool?" if tool else "Approve this plan?"
    while interactive:
        answer = input(f"{question} [a]pprove, [e]dit, [r]eject, [l]ater: ").strip().lower()[:1]
        if answer in ("a", "r"):
            return {"action": "approve" if answer == "a" else "reject"}
        if answer == "e":
            try:
                return edited()
            except UsageError as exc:
                print(f"hierplan: {exc}", file=sys.stderr)
        elif answer == "l":
            return None
    return None
