"""One place where nodes call the chat model: sampling, seeding, batching, structured plans, token accounting.

Only public chat-model calls (``invoke``, ``batch``, ``stream``, ``with_structured_output``); sampling goes as
standard keyword arguments (temperature, top_p, max_tokens, seed, repetition_penalty), which the local model
honours per call and per row, a remote one maps to its request, and a fake records. Token counts come from
each message's ``usage_metadata`` (None when a model gives none). Whether the model is local, remote or fake
is not this module's business.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from typing import Any, Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from hierplan.config import Sampling
from hierplan.schema import ModelCall


def sampling_kwargs(sampling: Sampling, seed: int | None = None) -> dict[str, Any]:
    """A node's sampling as the standard keyword arguments of a chat-model call (temperature 0 = greedy)."""
    kwargs: dict[str, Any] = {"temperature": 0.0 if sampling.greedy else sampling.temperature,
                              "top_p": sampling.top_p, "max_tokens": sampling.max_new_tokens,
                              "repetition_penalty": sampling.repetition_penalty}
    if sampling.min_new_tokens:
        kwargs["min_tokens"] = sampling.min_new_tokens  # benchmarks only; the local model honours it
    if seed is not None:
        kwargs["seed"] = seed
    return kwargs


def call_seed(seed: int, *keys: object) -> int:
    """A seed per call derived from the run seed and the call's identity, so a resumed run draws the same."""
    return (seed + zlib.crc32(repr(keys).encode())) % (2**32)


def _kwargs(sampling: Sampling, seed: int | None, node: str, seed_key: tuple,
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
    derived = None if seed is None else call_seed(seed, node, *seed_key)
    return {**sampling_kwargs(sampling, derived), **(extra or {})}


def _config(node: str, seed: int | None) -> dict[str, Any]:
    """The call's run metadata, for tracers (hierplan.tracing, LangSmith): the node as the call's record names it
    and the run's seed; LangChain adds it to what the graph's run already carries."""
    return {"metadata": {"hierplan_node": node, **({"hierplan_seed": seed} if seed is not None else {})}}


def invoke_model(
    model: BaseChatModel,
    messages: list[BaseMessage],
    sampling: Sampling,
    *,
    node: str,
    seed: int | None = None,
    seed_key: tuple = (),
    extra_pipeline_kwargs: dict[str, Any] | None = None,
    on_text: Callable[[str], None] | None = None,
) -> tuple[str, ModelCall]:
    """Call the model once; return its text and what the call cost. ``on_text`` receives the text as it is
    generated (streaming). ``extra_pipeline_kwargs``: more keyword arguments for the call (the name is kept
    for older callers)."""
    kwargs = _kwargs(sampling, seed, node, seed_key, extra_pipeline_kwargs)
    config = _config(node, seed)
    start = time.perf_counter()
    if on_text is None:
        message = model.invoke(messages, config, **kwargs)
    else:
        message = None
        for chunk in model.stream(messages, config, **kwargs):
            if text := _text(chunk):
                on_text(text)
            message = chunk if message is None else message + chunk
    return _text(message), _call(node, time.perf_counter() - start, *_usage(message), finish_reason=_finish(message))


def invoke_batch(
    model: BaseChatModel,
    conversations: list[list[BaseMessage]],
    sampling: Sampling,
    *,
    node: str,
    seed: int | None = None,
    seed_key: tuple = (),
    extra: dict[str, Any] | None = None,
) -> list[tuple[str, ModelCall]]:
    """Answer several conversations with ``model.batch`` (the local model: ONE left-padded generate pass);
    ``extra``: more keyword arguments for the call."""
    if len(conversations) == 1:
        return [invoke_model(model, conversations[0], sampling, node=node, seed=seed, seed_key=seed_key,
                             extra_pipeline_kwargs=extra)]
    start = time.perf_counter()
    messages = model.batch(conversations, _config(node, seed), **_kwargs(sampling, seed, node, seed_key, extra))
    seconds = time.perf_counter() - start
    return [(_text(m), _call(node, seconds, *_usage(m), batch=len(conversations), finish_reason=_finish(m)))
            for m in messages]


@dataclass
class Structured:
    """A structured call's outcome: ``parsed`` is None when the reply did not validate."""

    parsed: Any
    text: str
    call: ModelCall
    method: str | None
    """How the model constrained it: response_metadata["hierplan_structured"] ("grammar", "json_schema",
    "json_object", "tool_calling"), or None when the model did not say."""


def invoke_structured(
    model: BaseChatModel,
    messages: list[BaseMessage],
    sampling: Sampling,
    schema: type,
    *,
    node: str,
    seed: int | None = None,
    seed_key: tuple = (),
    on_start: Callable[[], None] | None = None,
) -> Structured | None:
    """Ask for ``schema`` through ``model.with_structured_output(schema, include_raw=True)``.

    None when the model offers no structured output (NotImplementedError: fakes, plain local pipelines),
    so the caller uses its text path; ``on_start`` is called only when the structured call goes ahead.
    Sampling goes as invoke keyword arguments, which reach the model when
    it is the runnable's first step (hierplan's models build it so).
    """
    try:
        runnable = model.with_structured_output(schema, include_raw=True)
    except NotImplementedError:
        return None
    if on_start is not None:
        on_start()
    start = time.perf_counter()
    result = runnable.invoke(messages, _config(node, seed), **_kwargs(sampling, seed, node, seed_key))
    raw = result["raw"]
    call = _call(node, time.perf_counter() - start, *_usage(raw))
    method = (getattr(raw, "response_metadata", None) or {}).get("hierplan_structured")
    parsed = result.get("parsed")
    # A tool-calling reply carries its JSON in the tool call, not the content: the parsed object is the text then.
    text = _text(raw) or (parsed.model_dump_json() if hasattr(parsed, "model_dump_json") else "")
    return Structured(parsed=parsed, text=text, call=call, method=method)


def structured_or_text(model: BaseChatModel, messages: list[BaseMessage], sampling: Sampling, schema: type, *,
                       constrain: bool, node: str, seed: int | None = None, seed_key: tuple = ()) -> Structured:
    """One reply meant to hold ``schema``'s JSON: constrained to it when ``constrain`` and the model offers
    structured output (invoke_structured), else a plain text call (``parsed`` and ``method`` None). Either way
    the caller parses ``text`` when ``parsed`` is None."""
    got = invoke_structured(model, messages, sampling, schema, node=node, seed=seed,
                            seed_key=seed_key) if constrain else None
    if got is not None:
        return got
    text, call = invoke_model(model, messages, sampling, node=node, seed=seed, seed_key=seed_key)
    return Structured(parsed=None, text=text, call=call, method=None)


def _text(message: Any) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _call(node: str, seconds: float, prompt_tokens: int | None, generated_tokens: int | None,
          batch: int = 1, finish_reason: str | None = None) -> ModelCall:
    return ModelCall(node=node, prompt_tokens=prompt_tokens, generated_tokens=generated_tokens,
                     seconds=round(seconds, 3), batch=batch, finish_reason=finish_reason)


def _finish(message: Any) -> str | None:
    reason = (getattr(message, "response_metadata", None) or {}).get("finish_reason")
    return reason if isinstance(reason, str) else None


def _usage(message: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None) or {}
    return usage.get("input_tokens"), usage.get("output_tokens")
