"""The runnable a local chat model's ``with_structured_output`` returns, shared by the llama.cpp and transformers
adapters: the bound (constrained) model, then the pydantic parse, with LangChain's ``include_raw`` shape."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough


def parsed_runnable(bound: Runnable, schema: Any, include_raw: bool) -> Runnable:
    """``bound`` (the model with its constraint) parsed into ``schema``; with ``include_raw``, ``{"raw", "parsed",
    "parsing_error"}`` where a reply that does not validate gives ``parsed=None`` and the error."""
    parse = RunnableLambda(lambda message: schema.model_validate_json(message.content))
    if not include_raw:
        return bound | parse
    parsed = RunnablePassthrough.assign(parsed=itemgetter("raw") | parse, parsing_error=lambda _: None)
    unparsed = RunnablePassthrough.assign(parsed=lambda _: None)
    # The model is the first step (not LangChain's RunnableMap(raw=model)), so keyword arguments given to
    # ``invoke`` (per-call sampling) reach it: RunnableSequence passes them to its first step only.
    as_raw = RunnableLambda(lambda message: {"raw": message})
    return bound | as_raw | parsed.with_fallbacks([unparsed], exception_key="parsing_error")
