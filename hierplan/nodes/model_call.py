"""One place where nodes call the chat model: sampling, seeding, batching and token accounting."""

from __future__ import annotations

import threading
import time
import zlib
from typing import Any, Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from hierplan.config import Sampling
from hierplan.schema import ModelCall

# Parallel steps run in threads; a local model generates for one of them at a time (a batch counts as one),
# which keeps seeding reproducible and never runs two generate passes fighting over the same cores.
_locks: dict[int, threading.Lock] = {}
_locks_guard = threading.Lock()


def _model_lock(model: Any) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(id(model), threading.Lock())


def is_local_pipeline(model: Any) -> bool:
    """True for ChatHuggingFace over a local transformers pipeline (the only kind we tune sampling for)."""
    return getattr(getattr(model, "llm", None), "pipeline", None) is not None


def pipeline_kwargs(sampling: Sampling, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"max_new_tokens": sampling.max_new_tokens,
                              "repetition_penalty": sampling.repetition_penalty}
    if sampling.greedy:
        kwargs["do_sample"] = False
    else:
        kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p)
    if sampling.min_new_tokens:
        kwargs["min_new_tokens"] = sampling.min_new_tokens
    kwargs.update(extra or {})
    return kwargs


def call_seed(seed: int, *keys: object) -> int:
    """A seed per call derived from the run seed and the call's identity, so a resumed run draws the same."""
    return (seed + zlib.crc32(repr(keys).encode())) % (2**32)


def _seed(seed: int | None, node: str, seed_key: tuple) -> None:
    if seed is not None:
        from transformers import set_seed  # lazy: torch only when a local model runs

        set_seed(call_seed(seed, node, *seed_key))


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
    generated (streaming).

    Remote or fake chat models get the messages only: their sampling is configured on the model itself.
    """
    if not is_local_pipeline(model):
        start = time.perf_counter()
        if on_text is None:
            message = model.invoke(messages)
        else:
            message = None
            for chunk in model.stream(messages):
                on_text(_text(chunk))
                message = chunk if message is None else message + chunk
        return _text(message), _call(node, time.perf_counter() - start, *_usage(message))
    extra = dict(extra_pipeline_kwargs or {})
    if on_text is not None:
        extra["streamer"] = _streamer(model.tokenizer, on_text)
    kwargs = {"pipeline_kwargs": pipeline_kwargs(sampling, extra)}
    with _model_lock(model):
        _seed(seed, node, seed_key)
        start = time.perf_counter()
        message = model.invoke(messages, **kwargs)
        seconds = time.perf_counter() - start
    text = _text(message)
    prompt = model._to_chat_prompt(messages)
    return text, _call(node, seconds, _count(model, prompt), _count(model, text))


def invoke_batch(
    model: BaseChatModel,
    conversations: list[list[BaseMessage]],
    sampling: Sampling,
    *,
    node: str,
    seed: int | None = None,
    seed_key: tuple = (),
) -> list[tuple[str, ModelCall]]:
    """Answer several conversations; a local pipeline does it in ONE left-padded generate pass."""
    if len(conversations) == 1:
        return [invoke_model(model, conversations[0], sampling, node=node, seed=seed, seed_key=seed_key)]
    if not is_local_pipeline(model):
        start = time.perf_counter()
        messages = model.batch(conversations)
        seconds = time.perf_counter() - start
        return [(_text(m), _call(node, seconds, *_usage(m), batch=len(conversations))) for m in messages]
    prompts = [model._to_chat_prompt(c) for c in conversations]
    kwargs = {**pipeline_kwargs(sampling), "batch_size": len(prompts)}
    llm = model.llm
    with _model_lock(model):
        _seed(seed, node, seed_key)
        start = time.perf_counter()
        # HuggingFacePipeline chunks prompts by its batch_size field before calling the pipeline.
        if llm.batch_size < len(prompts):
            llm.batch_size = len(prompts)
        result = llm._generate(prompts, pipeline_kwargs=kwargs)
        seconds = time.perf_counter() - start
    texts = [generations[0].text for generations in result.generations]
    return [(text, _call(node, seconds, _count(model, prompt), _count(model, text), batch=len(prompts)))
            for prompt, text in zip(prompts, texts)]


def _streamer(tokenizer: Any, on_text: Callable[[str], None]) -> Any:
    """A transformers streamer that hands decoded text to ``on_text``; generation stays in this thread."""
    from transformers import TextStreamer

    class CallbackStreamer(TextStreamer):
        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            if text:
                on_text(text)

    return CallbackStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)


def _text(message: Any) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _call(node: str, seconds: float, prompt_tokens: int | None, generated_tokens: int | None,
          batch: int = 1) -> ModelCall:
    return ModelCall(node=node, prompt_tokens=prompt_tokens, generated_tokens=generated_tokens,
                     seconds=round(seconds, 3), batch=batch)


def _count(model: Any, text: str) -> int:
    # HuggingFacePipeline reports no usage, so count with the model's own tokenizer.
    return len(model.tokenizer(text, add_special_tokens=False)["input_ids"])


def _usage(message: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None) or {}
    return usage.get("input_tokens"), usage.get("output_tokens")
