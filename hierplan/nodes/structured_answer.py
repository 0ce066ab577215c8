"""The structured_answer node, drawn only in a graph built with ``response_format``: once the final answer is settled
(after answer_check, or when check_instructions ends), the model writes it as the caller's schema, under the grammar
where the model takes one (the planner's structured-output path: llama.cpp's grammar for the schema, a server's
json_schema), and the reply is validated (pydantic; a JSON Schema with ``jsonschema``). A reply that does not
validate is shown its error and asked for again, once (``STRUCTURED_RETRIES``).

The answer as the schema goes to state ``structured_response`` (a JSON-safe dict); ``structured_check`` records
the attempts. A model that never gives a valid reply is a recorded result, not an error: the check's ``error``
says why in one line and the run ends with its text answer (``final``), as it would without a schema.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, ValidationError

from hierplan.config import (STRUCTURED_MAX_NEW_TOKENS, STRUCTURED_NOTE_CHARS, STRUCTURED_RETRIES, TASK_CONTEXT_CHARS,
                             SamplingConfig)
from hierplan.graph.state import AgentState, StructuredCheckDict
from hierplan.nodes import prompts
from hierplan.nodes.context import asked, format_results
from hierplan.nodes.events import emit
from hierplan.nodes.json_extract import extract_json_object
from hierplan.nodes.model_call import Structured, structured_or_text
from hierplan.options import RunOptions, run_options
from hierplan.schema import response_dump, response_model, short_error

NO_VALID_REPLY = "no reply fit the schema {schema} in {attempts} attempts; the last: {error}"


def structured_messages(state: AgentState, schema: type[BaseModel]) -> list:
    """The schema, then the task, the notes (each successful step's output: what the answer was made from) and
    the settled answer, which the values are taken from."""
    material = [r for r in state.get("results") or [] if r["ok"] and r.get("tool") != "none"]
    notes = format_results(material, limit=STRUCTURED_NOTE_CHARS).strip()
    return [SystemMessage(prompts.STRUCTURED_SYSTEM.format(
                schema=json.dumps(schema.model_json_schema(), ensure_ascii=False))),
            HumanMessage(prompts.STRUCTURED_USER.format(
                task=asked(state, TASK_CONTEXT_CHARS),
                notes=prompts.STRUCTURED_NOTES.format(results=notes) if notes else "", final=state["final"]))]


def validated(schema: type[BaseModel], got: Structured) -> tuple[dict[str, Any] | None, str | None]:
    """(the answer as state keeps it, None) or (None, why it does not fit, in one line). A reply the structured
    call did not parse (cut off, or a constraint the grammar does not enforce, such as a minimum) or a plain text
    reply is validated from its text, so that the error says what is wrong."""
    if got.parsed is not None:
        return response_dump(got.parsed), None
    try:
        return response_dump(schema.model_validate(extract_json_object(got.text))), None
    except ValidationError as exc:
        return None, short_error(exc).replace("Value error, ", "")
    except ValueError as exc:  # NoJSONFound
        return None, str(exc)


def make_structured_answer(model: BaseChatModel, base: SamplingConfig, response_format: Any):
    """The node, for this ``response_format`` (a pydantic class, or a JSON Schema of an object: schema.
    check_response_format), in the aggregator role's model."""
    schema = response_model(response_format)
    name = schema.__name__

    def structured_answer(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        if "final" not in state:
            raise ValueError("structured_answer was routed to before the final answer was written")
        options = run_options(runtime.context)
        sampling = options.sampling(base)
        emit("node_started", node="structured_answer")
        # greedy: the values are copied, not written; no repetition penalty, which a JSON list's repeated keys and
        # punctuation would pay
        asking = replace(sampling.aggregator, temperature=0.0, repetition_penalty=1.0,
                         max_new_tokens=options.max_new_tokens or STRUCTURED_MAX_NEW_TOKENS)
        messages = structured_messages(state, schema)
        calls, errors, method = [], [], None
        for attempt in range(1 + STRUCTURED_RETRIES):
            got = structured_or_text(model, messages, asking, schema, constrain=options.constrain,
                                     node="structured_answer", seed=sampling.seed, seed_key=(attempt,))
            calls.append(got.call.model_dump())
            method = got.method
            value, error = validated(schema, got)
            if error is not None and got.call.finish_reason == "length":
                error = f"cut off at {asking.max_new_tokens} tokens: {error}"
            if error is None:
                check = StructuredCheckDict(ok=True, schema=name, attempts=attempt + 1, errors=errors, method=method,
                                            error=None)
                return {"structured_response": value, "structured_check": check, "calls": calls}
            errors.append(error)
            messages = [*messages, AIMessage(got.text), HumanMessage(prompts.STRUCTURED_RETRY.format(error=error))]
        check = StructuredCheckDict(ok=False, schema=name, attempts=len(errors), errors=errors, method=method,
                                    error=NO_VALID_REPLY.format(schema=name, attempts=len(errors), error=errors[-1]))
        return {"structured_check": check, "calls": calls}

    return structured_answer
