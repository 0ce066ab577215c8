"""The tool step node: a step that names a registered tool. The model writes the call's arguments (constrained to
the tool's JSON schema where the model takes one), they are validated, the tool runs with a time limit, and
the step records the arguments and the result, or the error (a failed step, for the replanner)."""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError

from hierplan.config import TASK_CONTEXT_CHARS, TOOL_TIMEOUT_S, Sampling, SamplingConfig
from hierplan.graph.state import AgentState, StepDict, StepPayload, ToolCallDict
from hierplan.nodes import prompts
from hierplan.nodes.context import asked, prior_results, step_request, tool_description
from hierplan.nodes.events import emit
from hierplan.nodes.json_extract import extract_json_object
from hierplan.nodes.model_call import structured_or_text
from hierplan.options import RunOptions, run_options
from hierplan.schema import ModelCall, StepResult, short_error
from hierplan.tools.registered import args_model, call_tool, takes_arguments

FAILED_OUTPUT = "Tool step failed: {error}"
NO_ARGUMENTS = "the model gave no valid arguments for {tool}: {error}"


def tool_messages(payload: StepPayload, tool: BaseTool, schema: type[BaseModel]) -> list:
    """What the model is asked for a step's arguments: the tool, its arguments' schema, then the task, the
    earlier results the step may use and the step (as an LLM step sees them)."""
    step = payload["step"]
    system = prompts.TOOL_SYSTEM.format(name=tool.name, description=tool_description(tool),
                                        schema=json.dumps(schema.model_json_schema(), ensure_ascii=False))
    user = prompts.TOOL_USER.format(task=asked(payload, TASK_CONTEXT_CHARS),
                                    step=step_request(prior_results(payload, step), step))
    return [SystemMessage(system), HumanMessage(user)]


def ask_arguments(model: BaseChatModel, messages: list, schema: type[BaseModel], sampling: Sampling, *,
                  constrain: bool, seed: int | None, key: tuple) -> tuple[dict[str, Any] | None, str | None,
                                                                          ModelCall]:
    """(arguments, None, call) or (None, why not, call). Structured output first with ``constrain`` (a model
    without it answers in text); a reply that did not validate there is parsed from its text."""
    got = structured_or_text(model, messages, sampling, schema, constrain=constrain, node="tool_step", seed=seed,
                             seed_key=key)
    if got.parsed is not None:
        return _dump(got.parsed), None, got.call
    call = got.call
    try:
        return _dump(schema.model_validate(extract_json_object(got.text))), None, call
    except ValueError as exc:  # NoJSONFound and pydantic's ValidationError are ValueErrors
        return None, short_error(exc) if isinstance(exc, ValidationError) else str(exc), call


def _dump(parsed: BaseModel) -> dict[str, Any]:
    """The arguments as the tool takes them (by alias) and as the step keeps them (JSON)."""
    return parsed.model_dump(mode="json", by_alias=True)


def make_tool_step(model: BaseChatModel, base: SamplingConfig, tools: Sequence[BaseTool] = ()):
    """The node, for these registered tools. The arguments are sampled like a program (the code sampling): they
    are exact values, not prose. A tool without arguments is called without asking the model."""
    by_name = {t.name: t for t in tools}
    schemas = {t.name: args_model(t) for t in tools}

    def tool_step(payload: StepPayload, runtime: Runtime[RunOptions]) -> AgentState:
        """Writes the call's arguments and calls the tool; with approve_tools, only writes them (kept in the
        state's ``tool_calls`` for approve_tool), and calls the tool once a person approved or edited them
        (``payload["call"]``)."""
        options = run_options(runtime.context)
        sampling = options.sampling(base)
        step: StepDict = payload["step"]
        tool = by_name.get(step["tool"])
        if tool is None:  # dispatch sends only registered tools' steps here
            raise ValueError(f"step {step['id']} names {step['tool']!r}, which is not a registered tool")
        decided = payload.get("call")
        if decided is not None and decided.get("decision") not in ("approved", "edited"):
            raise ValueError(f"step {step['id']}: tool_step was sent a call that no one approved")
        emit("steps_started", step_ids=[step["id"]], tool=tool.name, batch=1)
        start = time.perf_counter()
        schema = schemas[tool.name]
        calls: list[Any] = []
        args: dict[str, Any] | None = {}
        error = None
        if decided is not None:
            args, calls = decided["args"], list(decided["calls"])
        elif takes_arguments(schema):
            args, why, call = ask_arguments(model, tool_messages(payload, tool, schema), schema, sampling.code,
                                            constrain=options.constrain, seed=sampling.seed, key=(step["id"],))
            calls.append(call)
            if args is None:
                error = NO_ARGUMENTS.format(tool=tool.name, error=why)
        if args is not None and decided is None and options.approve_tools:  # a person decides before the call
            written: ToolCallDict = {"step": step, "tool": tool.name, "args": args,
                                     "calls": [c.model_dump(mode="json") for c in calls],
                                     "seconds": round(time.perf_counter() - start, 3)}
            return {"tool_calls": {str(step["id"]): written}}
        outcome = None
        if args is not None:
            outcome = call_tool(tool, args, TOOL_TIMEOUT_S)
            error = outcome.error
            emit("tool_call", step_id=step["id"], tool=tool.name, args=args, ok=outcome.ok, error=outcome.error,
                 seconds=outcome.seconds)
        ok = outcome is not None and outcome.ok
        seconds = time.perf_counter() - start + (decided["seconds"] if decided is not None else 0.0)
        result = StepResult(
            step_id=step["id"], title=step["title"], tool=tool.name,
            output=outcome.text if ok else FAILED_OUTPUT.format(error=error), ok=ok, error=None if ok else error,
            calls=calls, tool_args=args, tool_result=outcome.result if ok else None, seconds=round(seconds, 3))
        return {"results": [result.model_dump(mode="json")]}

    return tool_step
