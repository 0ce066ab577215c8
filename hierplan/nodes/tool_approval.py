"""Human approval of each registered tool's call (RunOptions.approve_tools): the approve_tool node, between
tool_step writing a call's arguments and tool_step calling the tool. The scheduler sends it a step whose call is
written (kept in the state's ``tool_calls``, so a run killed while it waits shows the same call again and the model
is not asked again) and not yet decided; it waits (LangGraph interrupt) for approve, edit (new arguments, checked
against the tool's arguments schema) or reject (the step fails, "rejected by the user", and the graph acts on it as
on any failed tool: the replanner)."""

from __future__ import annotations

import json
from typing import Any, Literal, NotRequired, Sequence, TypedDict

from langchain_core.tools import BaseTool
from langgraph.types import interrupt
from pydantic import ValidationError

from hierplan.graph.state import AgentState, StepPayload, ToolCallDict
from hierplan.nodes.context import tool_description
from hierplan.schema import StepResult, short_error
from hierplan.tools.registered import args_model

TOOL_REQUEST = "tool_call"
"""The ``request`` key of a tool call's approval request (a plan's has none)."""
REJECTED = "rejected by the user"
REJECTED_OUTPUT = "Tool step failed: {error}"


class ToolCallRequest(TypedDict):
    """What a run waiting for a tool call's approval shows (the interrupt's value)."""

    request: Literal["tool_call"]
    step_id: int
    title: str
    tool: str
    arguments: dict[str, Any]
    """The arguments the tool would be called with."""
    description: str
    """The tool's description, one line."""
    schema: dict[str, Any]
    """The arguments' JSON schema: an edit must fit it."""
    error: NotRequired[str]
    """Why the last decision could not be used."""


def is_tool_request(request: Any) -> bool:
    """Whether an approval request (an interrupt's value) asks about a tool call rather than the plan."""
    return isinstance(request, dict) and request.get("request") == TOOL_REQUEST


def tool_request(step: dict[str, Any], call: ToolCallDict, tool: BaseTool) -> ToolCallRequest:
    return {"request": TOOL_REQUEST, "step_id": step["id"], "title": step["title"], "tool": tool.name,
            "arguments": call["args"], "description": tool_description(tool),
            "schema": args_model(tool).model_json_schema()}


def parse_arguments(text: str) -> dict[str, Any]:
    """Edited arguments as typed (the terminal's editor, the page's text box): a JSON object, else ValueError
    with one line."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the edited arguments are not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
                         ) from None
    if not isinstance(value, dict):
        raise ValueError("the edited arguments must be a JSON object of the tool's arguments")
    return value


def make_approve_tool(tools: Sequence[BaseTool] = ()):
    """The node, for these registered tools."""
    by_name = {t.name: t for t in tools}

    def approve_tool(payload: StepPayload) -> AgentState:
        """Waits for {"action": "approve" | "edit" | "reject", "arguments": {...} for edit}. On resume LangGraph
        re-runs the node and each interrupt() returns its stored answer in order; an unusable answer (arguments
        that do not fit the tool, an unknown action) asks again, with the reason."""
        step, call = payload["step"], payload.get("call")
        if call is None or call.get("decision"):
            raise ValueError(f"approve_tool was sent step {step['id']} without a call waiting for a decision")
        tool = by_name.get(call["tool"])
        if tool is None:
            raise ValueError(f"step {step['id']} calls {call['tool']!r}, which is not a registered tool")
        key = str(step["id"])
        request = tool_request(step, call, tool)
        while True:
            decision = interrupt(request)
            action = decision.get("action") if isinstance(decision, dict) else decision
            if action == "approve":
                return {"tool_calls": {key: {**call, "decision": "approved"}}}
            if action == "reject":
                result = StepResult(step_id=step["id"], title=step["title"], tool=tool.name,
                                    output=REJECTED_OUTPUT.format(error=REJECTED), ok=False, error=REJECTED,
                                    calls=call["calls"], tool_args=call["args"], seconds=call["seconds"])
                return {"tool_calls": {key: {**call, "decision": "rejected"}},
                        "results": [result.model_dump(mode="json")]}
            if action == "edit":
                given = decision.get("arguments") if isinstance(decision, dict) else None
                try:
                    if not isinstance(given, dict):
                        raise ValueError("the edited arguments must be a JSON object of the tool's arguments")
                    args = args_model(tool).model_validate(given).model_dump(mode="json", by_alias=True)
                except ValidationError as exc:
                    request = {**request, "error": f"the edited arguments do not fit {tool.name}: {short_error(exc)}"}
                    continue
                except ValueError as exc:
                    request = {**request, "error": str(exc)}
                    continue
                return {"tool_calls": {key: {**call, "args": args, "proposed": call["args"], "decision": "edited"}}}
            request = {**request, "error": f"unknown decision {decision!r}: use approve, edit (with arguments) or "
                                           "reject"}

    return approve_tool


def kept_call(state_calls: dict[str, ToolCallDict] | None, step: dict[str, Any]) -> ToolCallDict | None:
    """The call kept for this step, when it was written for this very step (a revised step is written again)."""
    call = (state_calls or {}).get(str(step["id"]))
    return call if call is not None and call["step"] == step else None
