"""One place where nodes call the chat model: sampling, seeding and token accounting."""

from __future__ import annotations

import time
import zlib
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from hierplan.config import Sampling
from hierplan.schema import ModelCall


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
    kwargs.update(extra or {})
    return kwargs


def call_seed(seed: int, *keys: object) -> int:
    """A seed per call derived from the run seed and the call's identity, so a resumed run draws the same."""
    return (seed + zlib.crc32(repr(keys).encode())) % (2**32)


def invoke_model(
    model: BaseChatModel,
    messages: list[BaseMessage],
    sampling: Sampling,
    *,
    node: str,
    seed: int | None = None,
    seed_key: tuple = (),
    extra_pipeline_kwargs: dict[str, Any] | None = None,
) -> tuple[str, ModelCall]:
    """Call the model once; return its text and what the call cost.

    Remote or fake chat models get the messages only: their sampling is configured on the model itself.
    """
    kwargs: dict[str, Any] = {}
    local = is_local_pipeline(model)
    if local:
        kwargs["pipeline_kwargs"] = pipeline_kwargs(sampling, extra_pipeline_kwargs)
        if seed is not None:
            from transformers import set_seed  # lazy: torch only when a local model runs

            set_seed(call_seed(seed, node, *seed_key))
    start = time.perf_counter()
    message = model.invoke(messages, **kwargs)
    seconds = time.perf_counter() - start
    text = message.content if isinstance(message.content, str) else str(message.content)
    prompt_tokens, generated_tokens = _count_tokens(model, messages, text, message) if local else _usage(message)
    return text, ModelCall(node=node, prompt_tokens=prompt_tokens, generated_tokens=generated_tokens,
                           seconds=round(seconds, 3))


def _count_tokens(model: Any, messages: list[BaseMessage], text: str, message: Any) -> tuple[int, int]:
    # HuggingFacePipeline reports no usage, so count with the model's own tokenizer.
    tokenizer = model.tokenizer
    prompt = model._to_chat_prompt(messages)
    return len(tokenizer(prompt, add_special_tokens=False)["input_ids"]), len(
        tokenizer(text, add_special_tokens=False)["input_ids"])


def _usage(message: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None) or {}
    return usage.get("input_tokens"), usage.get("output_tokens")
