"""Structured output constrained on an OpenAI-compatible server, per hierplan's model contract.

Three request shapes, in the order ``auto`` tries them:

- "json_schema": ``response_format={"type": "json_schema", ...}`` (vLLM, SGLang, OpenAI);
- "json_object": ``response_format={"type": "json_object", "schema": ...}`` (llama.cpp's server turns the schema
  into a grammar; a server that only knows plain JSON mode at least returns JSON);
- "tool_calling": one forced function whose parameters are the schema (llama.cpp, vLLM, Ollama, TGI).

The schema sent is the pydantic schema made stricter where the pydantic validators would otherwise reject
what the server lets through, as the local grammar does (json_grammar.py): every property required and no
others, ``$ref`` inlined, and an array of objects with an integer ``id`` (the plan's steps) unrolled by
position, so item *i* has ``"id": i`` and its integer lists (``depends_on``) name only ids below *i*. Only forms
llama.cpp's server, vLLM and OpenAI (without ``strict``) all take: every subschema is an object (llama.cpp's
server answers 400 "schema must be an object" to a boolean one such as ``"items": false``), so a fixed-length
tuple is ``prefixItems`` with ``minItems == maxItems``.

A request shape the server refuses (HTTP 400 or 422: REFUSED_SHAPE) moves on to the next of METHODS, then to one
unconstrained request (the text path, marked "none"); the model remembers the refusal for that schema, so later
calls start at the method that worked. Any other failure (no connection, 401, 500, a timeout) raises.

The answer is never repaired: a reply that is not valid JSON for the schema gives ``parsed=None`` with the
reason in ``parsing_error``, and the planner falls back to its text path. The raw message records the method in
``response_metadata["hierplan_structured"]`` (one of METHODS, or "none" for the unconstrained request).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langchain_core.runnables import Runnable

from hierplan.config import CHARS_PER_TOKEN
from hierplan.errors import RemoteModelError, UsageError

log = logging.getLogger(__name__)

METHODS = ("json_schema", "json_object", "tool_calling")
_ALIASES = {"json_mode": "json_object", "function_calling": "tool_calling", "tools": "tool_calling",
            "off": "none", "no": "none"}
# Arrays of numbered objects the schema leaves unbounded get at most this many items (json_grammar.py's cap).
DEFAULT_LIST_CAP = 8
DEFAULT_STRING_CHARS = 200
# The probe: a question whose constrained answer is one of two short JSON objects. An unconstrained model answers
# in prose, so the reply shows whether the server applied the format.
PROBE_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
                "required": ["answer"], "additionalProperties": False}
PROBE_QUESTION = "Is the sky blue on a clear day? Answer yes or no."
PROBE_MAX_TOKENS = 32
# Probe answers meaning "this server does not take that request shape" (anything else is a real failure and
# raises). llama-cpp-python's server answered json_schema with 500, so the probe's tiny request counts 500 too.
_UNSUPPORTED = {400, 405, 415, 422, 500, 501}
# A plan request's answers meaning the same: the server refused the request as sent (llama.cpp: 400 "JSON schema
# error ..."; vLLM, transformers serve: 400/422). A 500 mid-run is a failing server: the run fails, resume continues.
REFUSED_SHAPE = {400, 422}
# What the raw message's response_metadata["hierplan_structured"] says when every method was refused.
UNCONSTRAINED = "none"


STRUCTURED_ENV = "HIERPLAN_STRUCTURED"
STRUCTURED_MODES = ("auto", "json_schema", "json_object", "tool_calling", "none")


def normalize_method(value: str) -> str:
    method = _ALIASES.get(str(value).strip().lower(), str(value).strip().lower())
    if method not in STRUCTURED_MODES:
        raise UsageError(f"structured output method {value!r}: use one of {', '.join(STRUCTURED_MODES)} "
                         f"({STRUCTURED_ENV})")
    return method


def server_schema(schema: Any, positional: bool = True, budget: int | None = None) -> dict[str, Any]:
    """The JSON schema to send for ``schema`` (a pydantic class or a JSON-schema dict), made strict as above.

    ``positional=False`` leaves numbered arrays as one item schema (ids and references within 1..maxItems): a
    smaller grammar, which llama.cpp's sampler may check faster (docs/remote.md), but the validators may then
    reject an answer (parsed None).

    ``budget`` (the call's max_tokens): a server (llama.cpp in-process too) cannot close the JSON early when the
    budget runs out, as hierplan's transformers grammar does, and a small model fills every string to its bound
    and repeats steps until the cap cuts the JSON off. So numbered arrays get at most as many items as fit in the
    budget at its longest, estimated at CHARS_PER_TOKEN (never fewer than their minimum)."""
    root = schema if isinstance(schema, dict) else schema.model_json_schema()
    defs = root.get("$defs", {})

    def longest(node: dict[str, Any]) -> int:
        """Characters of the longest JSON for ``node``, roughly (punctuation counted generously)."""
        node = resolve(node)
        if "anyOf" in node:
            return max(longest(n) for n in node["anyOf"])
        kind = node.get("type")
        if kind == "string":
            return node.get("maxLength", DEFAULT_STRING_CHARS) + 4
        if kind == "object":
            return sum(len(k) + 4 + longest(v) for k, v in node.get("properties", {}).items()) + 2
        if kind == "array":
            return (node.get("maxItems") or DEFAULT_LIST_CAP) * (longest(node.get("items", {})) + 1) + 2
        return 12

    def fitting(item: dict[str, Any], lo: int, hi: int) -> int:
        if budget is None:
            return hi
        item_chars = longest(item)
        rest = longest(root) - hi * (item_chars + 1)
        return max(lo, min(hi, int((budget * CHARS_PER_TOKEN - rest) // (item_chars + 1))))

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def strict(node: dict[str, Any], earlier: int | None = None, fixed_id: int | None = None) -> dict[str, Any]:
        node = resolve(node)
        out = {k: v for k, v in node.items() if k not in ("title", "default", "$defs", "$ref")}
        if "anyOf" in node:
            out["anyOf"] = [strict(n, earlier) for n in node["anyOf"]]
        kind = node.get("type")
        if kind == "object":
            props = {k: ({"type": "integer", "const": fixed_id} if k == "id" and fixed_id else strict(v, earlier))
                     for k, v in node.get("properties", {}).items()}
            out.update(properties=props, required=list(props), additionalProperties=False)
        elif kind == "array":
            items = resolve(node.get("items", {}))
            lo, hi = node.get("minItems", 0), node.get("maxItems")
            if items.get("type") == "integer" and earlier is not None:
                # References to earlier positions (depends_on): ids 1..earlier only.
                out["items"] = {"type": "integer", "enum": list(range(1, earlier + 1))} if earlier else items
                out["maxItems"] = min(hi if hi is not None else earlier, earlier)
            elif items.get("type") == "object" and items.get("properties", {}).get("id", {}).get("type") == "integer":
                hi = fitting(items, lo, hi or DEFAULT_LIST_CAP)
                if positional:
                    return numbered(items, lo, hi)
                out.update(items=strict(items, hi - 1), maxItems=hi)
            else:
                out["items"] = strict(items, earlier)
        return out

    def numbered(item: dict[str, Any], lo: int, hi: int) -> dict[str, Any]:
        """One tuple per allowed length: servers turn prefixItems into fixed positions, not a minimum."""
        positions = [strict(item, i - 1, fixed_id=i) for i in range(1, hi + 1)]
        lengths = [{"type": "array", "prefixItems": positions[:n], "minItems": n, "maxItems": n}
                   for n in range(max(lo, 1), hi + 1)]
        if lo == 0:
            lengths.insert(0, {"type": "array", "maxItems": 0})
        return {"anyOf": lengths}

    return strict(root)


def request_kwargs(method: str, schema: dict[str, Any], name: str, description: str = "") -> dict[str, Any]:
    """The invoke kwargs that ask the server for ``method``."""
    if method == "json_schema":
        return {"extra_body": {"response_format": {"type": "json_schema",
                                                   "json_schema": {"name": name, "schema": schema}}}}
    if method == "json_object":
        return {"extra_body": {"response_format": {"type": "json_object", "schema": schema}}}
    if method == "tool_calling":
        function = {"name": name, "description": description or f"Answer with a {name}.", "parameters": schema}
        return {"tools": [{"type": "function", "function": function}],
                "tool_choice": {"type": "function", "function": {"name": name}}}
    raise ValueError(method)


def _merged(call: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = {**call, **extra}
    if "extra_body" in call and "extra_body" in extra:
        merged["extra_body"] = {**call["extra_body"], **extra["extra_body"]}
    return merged


def parse(method: str, raw: Any, schema: Any) -> tuple[Any, Exception | None]:
    """(parsed, None) or (None, why): the tool call's arguments or the text as strict JSON, then validated."""
    try:
        if method == "tool_calling":
            calls = getattr(raw, "tool_calls", None) or []
            if not calls:
                raise ValueError("the server answered without the requested tool call")
            data = calls[0]["args"]
        else:
            text = raw.content if isinstance(raw.content, str) else ""
            data = json.loads(text)
        if isinstance(schema, dict):
            if not isinstance(data, dict):
                raise ValueError("the answer is not a JSON object")
            return data, None
        return schema.model_validate(data), None
    except ValueError as exc:  # JSONDecodeError and pydantic's ValidationError are ValueErrors
        return None, exc


class StructuredOutput(Runnable):
    """``model.with_structured_output(...)``: one request per input, constrained by ``method`` (one of METHODS).
    kwargs from construction, ``bind`` and ``invoke`` are sent with the request."""

    def __init__(self, model: Any, schema: Any, method: str, include_raw: bool, kwargs: dict[str, Any]):
        self.model, self.schema, self.method = model, schema, method
        self.include_raw, self.kwargs = include_raw, dict(kwargs)
        self.name_ = schema.get("title", "Output") if isinstance(schema, dict) else schema.__name__
        doc = "" if isinstance(schema, dict) else (schema.__doc__ or "")
        self.description = " ".join(doc.split())

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        call = {**self.kwargs, **kwargs}
        budget = call.get("max_tokens") or call.get("max_new_tokens") or self.model.max_tokens
        sent = server_schema(self.schema, budget=budget)
        raw, method = None, UNCONSTRAINED
        for tried in METHODS[METHODS.index(self.method):]:
            if self.model.refused_shape(self.name_, tried):
                continue
            extra = request_kwargs(tried, sent, self.name_, self.description)
            try:
                raw, method = self.model.invoke(input, config, **_merged(call, extra)), tried
                break
            except RemoteModelError as exc:
                if exc.status not in REFUSED_SHAPE:
                    raise
                self.model.refuse_shape(self.name_, tried)
                log.warning("model server %s refused %s output for %s (%s); moving to the next method",
                            self.model.server, tried, self.name_, exc)
        if raw is None:  # every method refused: the text path, one plain request
            raw = self.model.invoke(input, config, **call)
        parsed, error = parse(method, raw, self.schema)
        raw.response_metadata["hierplan_structured"] = method
        if self.include_raw:
            return {"raw": raw, "parsed": parsed, "parsing_error": error}
        if error is not None:
            raise error
        return parsed


def probe(model: Any) -> str:
    """The first method whose tiny yes/no request the server answers in the requested shape, else "none".

    Costs up to three short requests, once per model. A refused request shape (400, 422, 500, ...) moves on to the
    next; an unreachable server or a refused key raises, as any call would.
    """
    from langchain_core.messages import HumanMessage

    tried = []
    for method in METHODS:
        kwargs = request_kwargs(method, PROBE_SCHEMA, "YesNo", "Answer the question.")
        try:
            raw = model.invoke([HumanMessage(PROBE_QUESTION)], temperature=0, max_tokens=PROBE_MAX_TOKENS,
                               **kwargs)
        except RemoteModelError as exc:
            if exc.status not in _UNSUPPORTED:
                raise
            tried.append(f"{method}: HTTP {exc.status}")
            continue
        parsed, error = parse(method, raw, PROBE_SCHEMA)
        if parsed is not None and parsed.get("answer") in ("yes", "no"):
            log.info("model server %s: structured output by %s (%s)", model.server, method,
                     "; ".join(tried) or "first try")
            return method
        tried.append(f"{method}: not applied ({error or parsed})")
    log.warning("model server %s applies no structured output format (%s); plans are parsed from text",
                model.server, "; ".join(tried))
    return "none"
