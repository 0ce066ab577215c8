"""One place where nodes call the chat model: sampling, seeding, batching, structured plans, token accounting.

Only public chat-model calls (``invoke``, ``batch``, ``with_structured_output``); sampling goes as
standard keyword arguments (temperature, top_p, max_tokens, seed, repetition_penalty), which the local model
honours per call and per row, a remote one maps to its request, and a fake records. Token counts come from
each message's ``usage_metadata`` (None when a model gives none). Whether the model is local, remote or fake
is not this module's business.

Streaming: a call made with ``stream=True`` is one whose tokens whoever watches the run sees as they are generated
(an LLM step's answer, a revision, the final answer, a program). It is an ordinary ``invoke``/``batch``; LangGraph's
``stream_mode="messages"`` attaches a streaming callback to every model call made inside a node, so the chat model
generates through its own ``_stream`` (llama.cpp, transformers and OpenAI-compatible servers all have one) and
each chunk reaches the stream with the call's run metadata: ``langgraph_node``, ``hierplan_node``, and
``hierplan_step_id`` / ``hierplan_attempt`` where the call has them (hierplan.app.events.TokenEvents reads them).
Every other call (plans, checklists, a tool's arguments, structured output) is tagged ``nostream`` (LangGraph's
TAG_NOSTREAM), so no stream shows JSON meant for a parser, and made with ``stream=False`` (LangChain's per-call
opt-out), so it generates as it does when nobody watches.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.constants import TAG_NOSTREAM

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
            extra: dict[str, Any] | None = None, stream: bool = False) -> dict[str, Any]:
    derived = None if seed is None else call_seed(seed, node, *seed_key)
    # stream=False: LangChain's per-call opt-out, so a call nobody sees streamed generates as it does unwatched
    return {**sampling_kwargs(sampling, derived), **(extra or {}), **({} if stream else {"stream": False})}


def _config(node: str, seed: int | None, *, stream: bool = False, step_id: int | None = None,
            attempt: int | None = None) -> dict[str, Any]:
    """The call's run metadata, for tracers (hierplan.tracing, LangSmith) and the token stream: the node as the
    call's record names it, the run's seed, and for a streamed call the step and attempt it writes; LangChain adds
    it to what the graph's run already carries. A call not streamed is tagged ``nostream``."""
    metadata: dict[str, Any] = {"hierplan_node": node, **({"hierplan_seed": seed} if seed is not None else {})}
    if step_id is not None:
        metadata["hierplan_step_id"] = step_id
    if attempt is not None:
        metadata["hierplan_attempt"] = attempt
    return {"metadata": metadata, **({} if stream else {"tags": [TAG_NOSTREAM]})}


def invoke_model(
    model: BaseChatModel,
    messages: list[BaseMessage],
    sampling: Sampling,
    *,
    node: str,
    seed: int | None = None,
    seed_key: tuple = (),
    extra_pipeline_kwargs: dict[str, Any] | None = None,
    stream: bool = False,
    step_id: int | None = None,
    attempt: int | None = None,
) -> tuple[str, ModelCall]:
    """Call the model once; return its text and what the call cost. ``stream``: its tokens go to the run's
    token stream (module docstring), labelled with ``step_id`` and ``attempt`` when given.
    ``extra_pipeline_kwargs``: more keyword arguments for the call (the name is kept for older callers)."""
    kwargs = _kwargs(sampling, seed, node, seed_key, extra_pipeline_kwargs, stream)
    config = _config(node, seed, stream=stream, step_id=step_id, attempt=attempt)
    start = time.perf_counter()
    message = model.invoke(messages, config, **kwargs)
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
    stream: bool = False,
    step_ids: Sequence[int] | None = None,
) -> list[tuple[str, ModelCall]]:
    """Answer several conversations with ``model.batch`` (the local model: ONE left-padded generate pass);
    ``extra``: more keyword arguments for the call. ``stream``: each row's tokens go to the token stream,
    labelled with its step id (``step_ids``, one per conversation)."""
    ids: list[int | None] = list(step_ids) if step_ids is not None else [None] * len(conversations)
    if len(ids) != len(conversations):
        raise ValueError(f"{len(conversations)} conversations but {len(ids)} step ids")
    if len(conversations) == 1:
        return [invoke_model(model, conversations[0], sampling, node=node, seed=seed, seed_key=seed_key,
                             extra_pipeline_kwargs=extra, stream=stream, step_id=ids[0])]
    start = time.perf_counter()
    configs = [_config(node, seed, stream=stream, step_id=i) for i in ids]
    messages = model.batch(conversations, configs, **_kwargs(sampling, seed, node, seed_key, extra, stream))
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
